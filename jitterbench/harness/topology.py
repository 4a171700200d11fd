"""The shape a topology file declares (its `dims` and `wrap` lines), for the
ReFrame check to know which distances a system has.  The benchmark itself
reads and checks the whole file (src/contention/topology.c)."""
from __future__ import annotations

from dataclasses import dataclass

from ..files import read_text


class TopologyFileError(ValueError):
    pass


@dataclass(frozen=True)
class Shape:
    dims: tuple[int, ...]
    wrap: tuple[bool, ...]

    def max_hops(self) -> int:
        """The largest hop distance: half way round a torus dimension, end to end of a mesh one."""
        return sum(d // 2 if w else d - 1 for d, w in zip(self.dims, self.wrap))

    def max_along(self, dim: int = 0) -> int:
        """The largest n of pairs n hops apart along dim, and k of pairs sharing one link."""
        return self.dims[dim] // 2


WRAP_WORDS = {"yes": True, "torus": True, "1": True, "no": False, "mesh": False, "0": False}


def read_shape(path) -> Shape:
    dims = wrap = None
    for number, line in enumerate(read_text(path, TopologyFileError).splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if words[0] == "dims":
            try:
                dims = tuple(int(d) for d in words[1].split("x"))
            except (IndexError, ValueError):
                raise TopologyFileError(f"{path}, line {number}: expected 'dims AxBxC'") from None
        elif words[0] == "wrap":
            if dims is None or len(words) - 1 != len(dims) or any(w not in WRAP_WORDS for w in words[1:]):
                raise TopologyFileError(f"{path}, line {number}: expected 'wrap' and yes or no per dimension")
            wrap = tuple(WRAP_WORDS[w] for w in words[1:])
        else:
            break  # the hosts: the shape is known
    if dims is None:
        raise TopologyFileError(f"{path}: no 'dims' line")
    return Shape(dims, wrap or (True,) * len(dims))

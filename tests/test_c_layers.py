"""The C core is a base, not a circle: src/core/jb_core.h includes its pieces bottom
first, and that order is the layering.  Each piece (jb_<piece>.h and <piece>.c)
includes only pieces below it, never one above, never the umbrella, never a benchmark's
header; so the include graph of src/core has no cycle.  The pieces the umbrella marks
"(no MPI)" are the bottom ones, use no MPI, and are src/CMakeLists.txt's jb_util, unit-tested
without it; each function a piece's header declares, its own source defines.  Read as text:
nothing is built."""
from __future__ import annotations

import re
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

SRC = Path(__file__).resolve().parents[1] / "src"
CORE = SRC / "core"
UMBRELLA = "jb_core.h"
INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*"([^"]+)"', re.M)
GENERATED = {"jb_version.h"}  # written into the build folder at every build (src/version.cmake): no piece


def core_files() -> dict:
    """{file name: its text} of every header and source of src/core."""
    return {p.name: p.read_text() for p in sorted(CORE.iterdir()) if p.suffix in (".c", ".h")}


def piece_of(name: str) -> str | None:
    """jb_clock.h and clock.c are the piece clock; any other name is none."""
    m = re.fullmatch(r"jb_(\w+)\.h|(\w+)\.c", name)
    return m and (m.group(1) or m.group(2))


def violations(files: dict) -> list:
    """What breaks the layering, one line each: the order is the umbrella's includes."""
    order = [piece_of(h) for h in INCLUDE.findall(files[UMBRELLA])]
    rank = {piece: at for at, piece in enumerate(order)}
    found = []
    headers = {piece_of(n) for n in files if n.endswith(".h") and n != UMBRELLA}
    sources = {piece_of(n) for n in files if n.endswith(".c")}
    if len(set(order)) != len(order) or set(order) != headers:
        found.append(f"{UMBRELLA} must include every piece's header once: it has {order}, the pieces are "
                     f"{sorted(headers, key=str)}")
    found += [f"{piece}: a header without a source, or a source without a header"
              for piece in sorted(headers ^ sources, key=str)]
    for name, text in files.items():
        if name == UMBRELLA:
            continue
        piece = piece_of(name)
        for included in INCLUDE.findall(text):
            if included == f"jb_{piece}.h" and name.endswith(".c"):
                continue  # a source includes its own header
            if included in GENERATED:
                continue
            if included not in files:
                found.append(f"{name} includes {included}, which is not a piece of the core")
            elif included == UMBRELLA:
                found.append(f"{name} includes the umbrella {UMBRELLA}: include the pieces it uses")
            elif rank.get(piece_of(included), len(order)) >= rank.get(piece, -1):
                found.append(f"{name} ({piece}) includes {included}, which is not below it in {UMBRELLA}'s order")
    return found


COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)


def mpi_free(umbrella: str) -> list:
    """The pieces the umbrella's comment marks "(no MPI)", in its order."""
    return re.findall(r"^ \*   (\w+) .*\(no MPI\)$", umbrella, re.M)


def mpi_violations(files: dict) -> list:
    """An MPI-free piece that includes mpi.h, calls MPI, or includes a piece that is not MPI-free;
    an MPI-free piece above one that is not."""
    free = mpi_free(files[UMBRELLA])
    order = [piece_of(h) for h in INCLUDE.findall(files[UMBRELLA])]
    found = [] if order[:len(free)] == free else [f"the MPI-free pieces {free} are not the bottom of {order}"]
    for name, text in files.items():
        if piece_of(name) not in free:
            continue
        if re.search(r"#\s*include\s*<mpi\.h>|\bMPI_\w+", COMMENT.sub("", text)):
            found.append(f"{name} ({piece_of(name)}) uses MPI, which its layer may not")
        found += [f"{name} includes {inc}, which uses MPI" for inc in INCLUDE.findall(text)
                  if inc in files and piece_of(inc) not in free]
    return found


DECLARED = re.compile(r"^(?!static|typedef|extern|#|\s|/|\*|})[^;{]*?\b(jb_\w+)\s*\(", re.M)


def misplaced_functions(files: dict) -> list:
    """A function a piece's header declares that its own source does not define."""
    found = []
    for name, text in files.items():
        if not name.endswith(".h") or name == UMBRELLA:
            continue
        source = files.get(f"{piece_of(name)}.c", "")
        for function in DECLARED.findall(text):
            # a definition starts at a line's start, and its line does not end a declaration
            if not re.search(rf"^(?!static)\w.*\b{function}\s*\((?!.*\);\s*$)", source, re.M):
                found.append(f"{name} declares {function}, which {piece_of(name)}.c does not define")
    return found


def cmake_library(name: str) -> list:
    """The core pieces of a library of src/CMakeLists.txt, in its order."""
    text = (SRC / "CMakeLists.txt").read_text()
    sources = re.search(rf"add_library\({name} STATIC ([^)]*)\)", text).group(1)
    return [piece_of(Path(f).name) for f in sources.split()]


def include_graph(files: dict) -> dict:
    return {name: set(INCLUDE.findall(text)) & set(files) for name, text in files.items()}


def test_the_core_is_layered_as_its_umbrella_says():
    assert violations(core_files()) == []


def test_the_core_includes_form_no_cycle():
    files = core_files()
    order = list(TopologicalSorter(include_graph(files)).static_order())  # CycleError on a circle
    assert sorted(order) == sorted(files)


def test_the_layers_are_the_documented_ones():
    # the benchmarks' shared base first, start-up last; a change here is a change of design
    assert [piece_of(h) for h in INCLUDE.findall((CORE / UMBRELLA).read_text())] == [
        "parse", "rng", "stats", "json", "schedule", "hardware", "clock", "context", "watchdog", "files", "placement", "load",
        "network", "output", "robust", "calls", "call_start", "inject", "options", "run"]


def test_the_mpi_free_pieces_are_the_bottom_and_use_no_mpi():
    files = core_files()
    assert mpi_free(files[UMBRELLA]) == ["parse", "rng", "stats", "json", "schedule", "hardware"]
    assert mpi_violations(files) == []


def test_cmake_builds_the_mpi_free_pieces_alone_and_every_piece_in_the_umbrellas_order():
    order = [piece_of(h) for h in INCLUDE.findall((CORE / UMBRELLA).read_text())]
    free = mpi_free((CORE / UMBRELLA).read_text())
    assert cmake_library("jb_util") == free
    assert cmake_library("jb_core") == order[len(free):]


def test_each_header_declares_only_what_its_own_source_defines():
    files = core_files()
    assert DECLARED.findall(files["jb_run.h"]) == ["jb_init", "jb_options_done", "jb_finish", "jb_rank_of_world"]  # the reader works
    assert misplaced_functions(files) == []


def test_a_misplaced_function_or_mpi_in_an_mpi_free_piece_is_caught():
    files = core_files()
    files["jb_output.h"] += "\nint jb_finish(jb_ctx *ctx);\n"  # tear-down's declaration left behind by a move
    files["rng.c"] += "\nstatic double now(void) { return MPI_Wtime(); }\n"
    files["jb_stats.h"] += '\n#include "jb_clock.h"\n'
    assert misplaced_functions(files) == ["jb_output.h declares jb_finish, which output.c does not define"]
    found = mpi_violations(files)
    assert "rng.c (rng) uses MPI, which its layer may not" in found, found
    assert "jb_stats.h includes jb_clock.h, which uses MPI" in found, found


def test_a_double_comparator_is_written_once():
    # qsort's order of doubles is the core's (jb_compare_doubles): a benchmark or piece that
    # writes its own again repeats it
    written = [str(p.relative_to(SRC)) for p in sorted(SRC.rglob("*.c"))
               if re.search(r"\*\s*\(const double \*\)\s*a\b", p.read_text())]
    assert written == ["core/stats.c"]


def test_a_circle_or_an_upward_include_is_caught():
    files = core_files()
    files["jb_clock.h"] += '\n#include "jb_calls.h"\n'  # the circle the core had: clock <-> calls
    files["jb_files.h"] += '\n#include "jb_core.h"\n'
    files["output.c"] += '\n#include "cycle.h"\n'   # a benchmark's kernel
    found = violations(files)
    assert any(line.startswith("jb_clock.h (clock) includes jb_calls.h") for line in found), found
    assert any(line.startswith("jb_files.h includes the umbrella") for line in found), found
    assert any(line.startswith("output.c includes cycle.h") for line in found), found
    with pytest.raises(CycleError):  # jb_calls.h -> jb_context.h -> jb_clock.h -> jb_calls.h
        list(TopologicalSorter(include_graph(files)).static_order())


# where MPI_COMM_WORLD is right: before --rank-order is read (run.c), the slots' own view
# (placement.c: which world ranks share a CPU), and MPI_Abort, which ends every rank alike
WORLD_ALLOWED = re.compile(r"MPI_Abort\(MPI_COMM_WORLD|^src/core/(run|placement)\.c:")


def world_uses(root: Path) -> list:
    """file:line: text of each MPI_COMM_WORLD passed to a call in the C sources under root that
    WORLD_ALLOWED does not allow (the JSON's words may name it)."""
    found = []
    for path in sorted(root.rglob("*.c")):
        name = path.relative_to(root.parent).as_posix()
        for number, line in enumerate(path.read_text().splitlines(), 1):
            where = f"{name}:{number}: {line.strip()}"
            if re.search(r"MPI_COMM_WORLD\s*[,)]", line) and not WORLD_ALLOWED.search(where):  # as an argument
                found.append(where)
    return found


def test_benchmarks_talk_over_ctx_world_so_the_rank_order_moves_their_roles(tmp_path):
    """A check's launches rotate the ranks' roles (--rank-order, src/core/run.c): ctx->rank is a
    rank of ctx->world, so a benchmark that talked over MPI_COMM_WORLD would pair ranks of two
    orders.  The toy a newcomer copies (tests/fixtures/toy) keeps to it too; a stray use is found."""
    toy = Path(__file__).resolve().parent / "fixtures" / "toy" / "src"
    assert world_uses(SRC) == [] and world_uses(toy) == []
    stray = tmp_path / "src" / "new"
    stray.mkdir(parents=True)
    (stray / "main.c").write_text("    MPI_Barrier(MPI_COMM_WORLD);\n    MPI_Abort(MPI_COMM_WORLD, 2);\n")
    assert world_uses(tmp_path / "src") == ["src/new/main.c:1: MPI_Barrier(MPI_COMM_WORLD);"]

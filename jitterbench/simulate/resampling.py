"""Draws with replacement from a measured sample, exactly uniform and cheap on whole arrays: what
both simulators replay their trials from, in chunks of a fixed size (CHUNK_ELEMENTS), so that a
seed gives the same draws on every machine.
"""
from __future__ import annotations

import numpy as np

# Floats per (P, chunk) state array. Trials run in chunks of CHUNK_ELEMENTS // P so memory stays
# small at any P and the working set stays in cache. Fixed, because the chunking decides the order
# of the random draws: a seed gives the same result on every machine.
CHUNK_ELEMENTS = 1 << 17


def uniform_indices(rng: np.random.Generator, m: int, k: int, out: "np.ndarray | None" = None) -> np.ndarray:
    """k independent draws, each uniform on 0 .. m - 1 exactly (0 < m < 2^31), as an intp array.

    The division method on uniform 32-bit words u: with c = 2^32 // m, the words below c * m
    are accepted and give u // c, each index from exactly c words; the 2^32 mod m words above
    (a word falls there with probability below m / 2^32) are drawn again. Exact as Lemire's
    multiply-and-shift, which numpy's integers() uses, but cheaper on whole arrays: a word is
    checked for rejection by one comparison with c * m (usually just the array's maximum, where
    multiply-and-shift tests the low half of each 64-bit product), and the division by the
    constant c is a cheap 32-bit one. out: an intp array of k elements for the result.
    """
    return index_drawer(rng, m)(k, np.empty(k, np.intp) if out is None else out)


def index_drawer(rng: np.random.Generator, m: int):
    """uniform_indices(rng, m, k, out) as a function of (k, out), its constants computed once:
    the simulators call it once per round."""
    if m == 1:  # c would not fit in 32 bits; no word is needed
        def zeros(k, out):
            out.fill(0)
            return out
        return zeros
    raw = rng.bit_generator.random_raw
    c = np.uint32((1 << 32) // m)
    limit = np.uint32(int(c) * m - 1)  # the largest accepted word (c * m itself may be 2^32)

    def words(count):
        return raw((count + 1) // 2).view(np.uint32)[:count]

    def draw(k, out):
        u = words(k)
        if k and u.max() > limit:
            bad = np.flatnonzero(u > limit)
            while bad.size:
                new = words(bad.size)
                u[bad] = new
                bad = bad[new > limit]
        return np.floor_divide(u, c, out=out, casting="unsafe")

    return draw


def sampler(samples: np.ndarray, rng: np.random.Generator):
    """An exchange-time function (see alltoall._play) that draws each time from samples, with replacement.

    Its work arrays, and the durations it returns, are reused from one call to the next: alltoall._replay
    is done with a round's durations before it asks for the next round's.
    """
    if samples.size >= 1 << 31:
        return lambda r, a, b, start: resample(samples, rng, start.size).reshape(start.shape)
    indices = index_drawer(rng, samples.size)
    buffers = {}

    def draw(r, a, b, start):
        if start.shape not in buffers:
            buffers[start.shape] = np.empty(start.size, np.intp), np.empty(start.shape)
        work, out = buffers[start.shape]
        return samples.take(indices(start.size, work), out=out.reshape(-1), mode="clip").reshape(start.shape)

    return draw


def resample(samples: np.ndarray, rng: np.random.Generator, k: int, work: "np.ndarray | None" = None):
    """k draws with replacement from samples (work: an intp work array of k elements)."""
    if samples.size >= 1 << 31:
        return samples[rng.integers(samples.size, size=k)]
    return samples.take(uniform_indices(rng, samples.size, k, work), mode="clip")

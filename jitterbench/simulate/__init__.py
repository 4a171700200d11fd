"""Simulated all-to-all and halo timings from a measured sample of exchange times.

Tabe, Hardwick and Stout ("Statistical Analysis of Communication Time on the IBM SP2") measure the
time of one pairwise exchange many times, then predict a whole all-to-all on P processors by
replaying the round-robin schedule with times drawn from that sample. The point is that an
all-to-all is slower than (rounds x mean exchange): an exchange starts only when both partners are
free, so one slow exchange delays both partners, then their next partners, and so on. The same
resampling predicts a barrier-coupled halo exchange, whose per-call cost is the maximum over its
N tasks ("Switch Jitter"). A sample measured on a few nodes thus predicts behaviour at any P or N.

All times are in microseconds.
"""
from __future__ import annotations

import array
import math
import mmap
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..files import loads_json, open_input, parse_number, read_text

# Floats per (P, chunk) state array. Trials run in chunks of CHUNK_ELEMENTS // P so memory stays
# small at any P and the working set stays in cache. Fixed, because the chunking decides the order
# of the random draws: a seed gives the same result on every machine.
CHUNK_ELEMENTS = 1 << 17

# Worker processes that replay chunks of trials at once (simulate_alltoall): the CPUs this process
# may use, at most 8. Processes, not threads: a round is a dozen numpy calls on arrays of a few
# hundred KB, and threads wait on each other for the GIL between them (P = 1024, 1,000 trials on
# 2 CPUs: 2.2 s on two threads, 1.9 s on two processes, 3.1 s on one). Forked, so they share
# everything read-only; on Linux only (fork is unsafe on macOS and absent on Windows), else one.
# The result does not depend on it.
WORKERS = max(1, min(8, len(os.sched_getaffinity(0)))) if sys.platform == "linux" else 1


class SimulationInputError(ValueError):
    """A sample the simulator cannot use; the message is one line naming the file and the problem."""


def schedule(P: int) -> np.ndarray:
    """Partner of each processor in each round, shape (rounds, P), -1 where a processor sits out.

    The round-robin ("chess tournament") schedule of the paper's Figure 2: every pair of
    processors exchanges exactly once, in P-1 rounds for even P and P rounds for odd P, where
    processor i sits out round i.
    """
    if not isinstance(P, (int, np.integer)) or P < 2:
        raise ValueError(f"P must be an integer >= 2, not {P!r}")
    even = P % 2 == 0
    m = P - 1 if even else P
    i = np.arange(m)[:, None]
    p = np.arange(P)[None, :]
    other = (m + 2 * i - p) % m
    other = np.where(p == m, i, other)  # only for even P: processor m meets processor i
    return np.where(p == i, m if even else -1, other)


@dataclass(frozen=True)
class Interrupts:
    """Per-processor interrupts, the paper's planned refinement.

    Each processor is interrupted every period_us (a periodic tick with a uniformly random phase
    that it keeps for the whole trial, so interrupts are correlated in time, not fresh per
    exchange), each tick costing tick_us, plus rare long events, a Poisson process of rate
    rare_rate_per_us each costing rare_us. An exchange stalls when either partner is interrupted,
    so it pays for the interrupts of both partners that fall within [start, start + base time).
    Interrupts landing in the extra time they themselves add are ignored (a first-order model),
    and so are those while a processor waits, since it is idle then anyway.
    """
    period_us: float
    tick_us: float = 0.0
    rare_rate_per_us: float = 0.0
    rare_us: float = 0.0

    def __post_init__(self):
        if not self.period_us > 0 or not math.isfinite(self.period_us):
            raise ValueError(f"period_us must be finite and > 0, not {self.period_us!r}")
        for name in ("tick_us", "rare_rate_per_us", "rare_us"):
            value = getattr(self, name)
            if not (value >= 0 and math.isfinite(value)):
                raise ValueError(f"{name} must be finite and >= 0, not {value!r}")
        # interrupts that take all of a processor's time leave it none to exchange in
        if self.tick_us >= self.period_us:
            raise ValueError(f"tick_us ({self.tick_us:g}) must be shorter than period_us ({self.period_us:g})")
        if self.rare_rate_per_us > 1:
            raise ValueError(f"rare_rate_per_us must be at most 1 (an interrupt a microsecond), "
                             f"not {self.rare_rate_per_us:g}")
        if self.rare_rate_per_us * self.rare_us >= 1:
            raise ValueError(f"rare_rate_per_us x rare_us ({self.rare_rate_per_us * self.rare_us:g}), the share of "
                             f"time in rare interrupts, must be below 1")

    def stretch(self, exchange_time, P: int, n: int, rng: np.random.Generator):
        """Wraps an exchange-time function (see _play) so each exchange also pays for interrupts."""
        phase = rng.uniform(0.0, self.period_us, size=(P, n))

        def ticks(start, d, ph):  # ticks at ph + k*period within [start, start + d)
            return np.ceil((start + d - ph) / self.period_us) - np.ceil((start - ph) / self.period_us)

        def time(r, a, b, start):
            d = exchange_time(r, a, b, start)
            extra = self.tick_us * (ticks(start, d, phase[a]) + ticks(start, d, phase[b]))
            if self.rare_rate_per_us > 0:  # the sum of both partners' Poisson counts
                extra = extra + self.rare_us * rng.poisson(2.0 * self.rare_rate_per_us * d)
            return d + extra

        return time


class TraceInterrupts:
    """Interrupts replayed from a measured (or given) trace of one node: event times and costs.

    Each processor replays the trace, repeated end to end, from its own random offset, so its
    interrupts keep the trace's real correlations (ticks, bursts, gaps). An exchange pays for the
    events of both partners within [start, start + base time), as Interrupts does.
    """

    def __init__(self, times_us, costs_us, length_us=None):
        self.times = np.asarray(times_us, dtype=float)
        costs = np.asarray(costs_us, dtype=float)
        if self.times.ndim != 1 or self.times.size == 0 or costs.shape != self.times.shape:
            raise ValueError("an interrupt trace needs as many costs as times, at least one")
        if (np.diff(self.times) < 0).any() or self.times[0] < 0 or (costs < 0).any():
            raise ValueError("interrupt times must be >= 0 and in order, costs >= 0")
        self.length = float(length_us) if length_us else float(self.times[-1]) + float(
            np.mean(np.diff(self.times)) if self.times.size > 1 else self.times[-1] or 1.0)
        if self.length <= self.times[-1]:
            raise ValueError(f"the trace length {self.length} must exceed its last event {self.times[-1]}")
        self.cum = np.concatenate(([0.0], np.cumsum(costs)))

    def _cost_before(self, x):
        """Summed cost of the events before time x of the repeated trace."""
        laps, rest = np.divmod(x, self.length)
        return laps * self.cum[-1] + self.cum[np.searchsorted(self.times, rest, side="left")]

    def stretch(self, exchange_time, P: int, n: int, rng: np.random.Generator):
        offset = rng.uniform(0.0, self.length, size=(P, n))

        def window(start, d, off):
            return self._cost_before(start + d + off) - self._cost_before(start + off)

        def time(r, a, b, start):
            d = exchange_time(r, a, b, start)
            return d + window(start, d, offset[a]) + window(start, d, offset[b])

        return time


def load_interrupt_trace(path) -> TraceInterrupts:
    """A trace file: one event per line, 'time_us cost_us'; '# length_us L' sets the period."""
    path = Path(path)
    text = read_text(path, SimulationInputError)
    times, costs, length = [], [], None
    for lineno, line in enumerate(text.splitlines(), 1):
        words = line.split()
        if not words:
            continue
        if words[0] == "#":
            if len(words) == 3 and words[1] == "length_us":
                length = parse_number(words[2])
                if length is None:
                    raise SimulationInputError(f"{path}: line {lineno}: length_us is not a finite number")
            continue
        numbers = [parse_number(w) for w in words]
        if len(numbers) != 2 or None in numbers:
            raise SimulationInputError(f"{path}: line {lineno}: expected 'time_us cost_us', got {line.strip()[:40]!r}")
        times.append(numbers[0])
        costs.append(numbers[1])
    try:
        return TraceInterrupts(times, costs, length)
    except ValueError as e:
        raise SimulationInputError(f"{path}: {e}") from None


def _rounds(P: int):
    """Round r of schedule(P) in the slot coordinates that _replay uses, for r = 0 .. rounds-1.

    With m = P - 1 (even P) or P (odd P) and h = (m - 1) // 2, round r pairs processor
    (r + q) % m with (r - q) % m for q = 1 .. h, slot q; with even P, slot 0 pairs r with m,
    and with odd P processor r sits out in slot 0. Processor p is at q = p - r (mod m) in round
    r, so from one round to the next every processor moves one slot down, reflected at 0 and h:
    a whole round is a shift of slots, not a permutation. For each round: the runs of rows that
    its A sides (r + q, q from 0 with even P, else from 1) and its B sides (r - q, q from 1)
    occupy in _replay's idle arrays, A sides indexed by processor p and B sides by (-p) mod m so
    that both run forward with q; as (slots, rows) slice pairs, at most two of each (a run wraps
    around m at most once).
    """
    even = P % 2 == 0
    m = P - 1 if even else P
    h = (m - 1) // 2

    def runs(row, slot, count):
        out, row = [], row % m
        while count:
            k = min(count, m - row)
            out.append((slice(slot, slot + k), slice(row, row + k)))
            row, slot, count = 0, slot + k, count - k
        return out

    first = 0 if even else 1
    return [(runs(r + first, first, h + 1 - first), runs(1 - r, 1, h)) for r in range(m)]


def _pairs(P: int, r: int):
    """The pairs of round r in slot order (see _rounds), as (lower, higher) processor arrays."""
    even = P % 2 == 0
    m = P - 1 if even else P
    q = np.arange(1, (m - 1) // 2 + 1)
    a, b = (r + q) % m, (r - q) % m
    if even:
        a, b = np.concatenate(([r], a)), np.concatenate(([m], b))
    return np.minimum(a, b), np.maximum(a, b)


def _play(sched: np.ndarray, n: int, exchange_time):
    """_replay of sched, which must be schedule(P): the only schedule it replays."""
    P = sched.shape[1]
    if not np.array_equal(sched, schedule(P)):
        raise ValueError("_play replays schedule(P) only")
    return _replay(P, n, exchange_time, _rounds(P))


def _replay(P: int, n: int, exchange_time, rounds, pairs: bool = True, out=None):
    """Replays schedule(P) for n independent trials at once; returns (finish, idle), each (P, n),
    written into out = (finish, idle) if given.

    rounds is _rounds(P). exchange_time(r, a, b, start) gives the durations of round r's
    exchanges, between processors a[k] < b[k], starting at start[k, trial]; any shape that
    broadcasts to start's (pairs, n) (without `pairs`, a and b are None). Both partners share one
    duration: the exchange ends for both at once. An exchange starts when both partners are free;
    the earlier one is idle until then.

    After an exchange both partners are free at the same time, so the state is one free time per
    slot of _rounds, and a round is: start[q] = max(free[q + 1], free[q - 1]) (reflected at the
    ends), then free = start + duration. Every step is a whole-array operation on contiguous
    rows, all running forward (numpy is much slower on rows taken in reverse). The idle times
    are kept per processor, summed round by round in the order of the rounds, in one of two
    arrays: idle_a, by processor p, while p is an A side (r + q), and idle_b, by (-p) mod m, while
    it is a B side (r - q), so that the runs of either side are forward. A processor changes
    sides twice in the whole schedule, at the ends of the slot range, and its sum is copied
    across then.
    """
    even = P % 2 == 0
    m = P - 1 if even else P
    h = (m - 1) // 2
    # free[1 + q] is slot q's; free[0] mirrors slot 0 (with even P processor m stays there, so
    # slot 0's B side comes from slot 0 itself) and free[h + 2] slot h (the reflection there)
    free = np.zeros((h + 3, n))
    start = np.empty((h + 1, n))
    wait = np.empty((h + 1, n))
    idle_a, idle_b = np.zeros((m, n)), np.zeros((m, n))
    idle_m = np.zeros(n)  # processor m's, with even P: always in slot 0
    first = 0 if even else 1  # with odd P slot 0 holds the processor that sits out, no exchange
    for r, (a_runs, b_runs) in enumerate(rounds):
        np.maximum(free[first + 2:], free[first:h + 1], out=start[first:])
        lo, hi = _pairs(P, r) if pairs else (None, None)
        d = exchange_time(r, lo, hi, start[first:])
        # slot q's A side (r + q) comes from slot q + 1, its B side (r - q) from slot q - 1
        np.subtract(start[first:], free[first + 2:], out=wait[first:])
        for slots, rows in a_runs:
            idle_a[rows] += wait[slots]
        np.subtract(start[first:], free[first:h + 1], out=wait[first:])
        for slots, rows in b_runs:
            idle_b[rows] += wait[slots]
        if even:
            idle_m += wait[0]
        # processor r (slot 0) becomes a B side next round, processor r - h (B side of slot h)
        # an A side
        idle_b[-r % m] = idle_a[r]
        idle_a[(r - h) % m] = idle_b[(h - r) % m]
        if not even:  # processor r sits out: it keeps the free time it had in slot 1
            free[1] = free[2]
        np.add(start[first:], d, out=free[first + 1:h + 2])
        free[0], free[h + 2] = free[1], free[h + 1]
    # after the last round (r = m - 1) processor p is in slot |p - r| (mod m), an A side (in
    # idle_a) for p <= h and a B side (in idle_b) beyond; processor m is in slot 0
    q = (np.arange(m) - (m - 1)) % m
    slot = np.minimum(q, m - q)
    finish, idle = out if out is not None else (np.empty((P, n)), np.empty((P, n)))
    np.take(free, 1 + (np.concatenate((slot, [0])) if even else slot), axis=0, out=finish, mode="clip")
    sides = (idle_a[:h + 1], idle_b[h:0:-1])
    np.concatenate((*sides, idle_m[None]) if even else sides, out=idle)
    return finish, idle


def _uniform_indices(rng: np.random.Generator, m: int, k: int, out: "np.ndarray | None" = None) -> np.ndarray:
    """k independent draws, each uniform on 0 .. m - 1 exactly (0 < m < 2^31), as an intp array.

    The division method on uniform 32-bit words u: with c = 2^32 // m, the words below c * m
    are accepted and give u // c, each index from exactly c words; the 2^32 mod m words above
    (a word falls there with probability below m / 2^32) are drawn again. Exact as Lemire's
    multiply-and-shift, which numpy's integers() uses, but cheaper on whole arrays: a word is
    checked for rejection by one comparison with c * m (usually just the array's maximum, where
    multiply-and-shift tests the low half of each 64-bit product), and the division by the
    constant c is a cheap 32-bit one. out: an intp array of k elements for the result.
    """
    return _index_drawer(rng, m)(k, np.empty(k, np.intp) if out is None else out)


def _index_drawer(rng: np.random.Generator, m: int):
    """_uniform_indices(rng, m, k, out) as a function of (k, out), its constants computed once:
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


def _sampler(samples: np.ndarray, rng: np.random.Generator):
    """An exchange-time function (see _play) that draws each time from samples, with replacement.

    Its work arrays, and the durations it returns, are reused from one call to the next: _replay
    is done with a round's durations before it asks for the next round's.
    """
    if samples.size >= 1 << 31:
        return lambda r, a, b, start: _resample(samples, rng, start.size).reshape(start.shape)
    indices = _index_drawer(rng, samples.size)
    buffers = {}

    def draw(r, a, b, start):
        if start.shape not in buffers:
            buffers[start.shape] = np.empty(start.size, np.intp), np.empty(start.shape)
        work, out = buffers[start.shape]
        return samples.take(indices(start.size, work), out=out.reshape(-1), mode="clip").reshape(start.shape)

    return draw


def _resample(samples: np.ndarray, rng: np.random.Generator, k: int, work: "np.ndarray | None" = None):
    """k draws with replacement from samples (work: an intp work array of k elements)."""
    if samples.size >= 1 << 31:
        return samples[rng.integers(samples.size, size=k)]
    return samples.take(_uniform_indices(rng, samples.size, k, work), mode="clip")


def simulate_alltoall(samples_us, P: int, trials: int, rng: np.random.Generator,
                      interrupts: "Interrupts | TraceInterrupts | None" = None) -> dict:
    """Simulates `trials` pairwise-exchange all-to-alls on P processors.

    Every exchange takes a time drawn with replacement from samples_us (with interrupts: the
    uninterrupted time, to which the interrupt cost is added). Returns numpy arrays:
    total_us (trials,), the all-to-all time (the last processor's finish); finish_us (trials, P);
    idle_us (trials, P), each processor's summed waits for its partners. With odd P a processor
    that sat out a round waits for its next partner, and that wait counts as idle.

    The trials run in chunks of CHUNK_ELEMENTS // P, independent of each other, so they run in
    up to WORKERS processes at once (_in_workers). Each chunk draws from its own child of rng
    (rng.spawn, one per chunk), so a seed gives the same result whatever the number of workers
    and whichever worker runs which chunk. Interrupts draw from a second set of children,
    spawned after the first, so turning them on with zero costs leaves the exchange times, and
    the result, exactly as without them.
    """
    samples = _check_sample(samples_us, "samples_us")
    if not isinstance(trials, (int, np.integer)) or trials < 1:
        raise ValueError(f"trials must be an integer >= 1, not {trials!r}")
    schedule(P)  # checks P
    rounds = _rounds(P)
    chunk = max(1, CHUNK_ELEMENTS // P)
    starts = range(0, trials, chunk)
    exchange_rngs = rng.spawn(len(starts))
    interrupt_rngs = rng.spawn(len(starts)) if interrupts is not None else [None] * len(starts)
    workers = min(WORKERS, len(starts))
    # (finish, idle), each (P, trials); (trials, P) views of them are returned. With workers, in
    # memory shared with them (an anonymous shared mapping, which fork passes on).
    shared = mmap.mmap(-1, 2 * P * trials * 8) if workers > 1 else None
    finish, idle = np.frombuffer(shared, float).reshape(2, P, trials) if shared else np.empty((2, P, trials))

    def run(i):  # chunk i, into its own columns of finish and idle
        lo = starts[i]
        n = min(chunk, trials - lo)
        sampled = _sampler(samples, exchange_rngs[i])
        time = interrupts.stretch(sampled, P, n, interrupt_rngs[i]) if interrupts is not None else sampled
        _replay(P, n, time, rounds, pairs=interrupts is not None, out=(finish[:, lo:lo + n], idle[:, lo:lo + n]))

    _in_workers(run, len(starts), workers)
    return {"total_us": finish.max(axis=0), "finish_us": finish.T, "idle_us": idle.T}


def _in_workers(run, count: int, workers: int):
    """run(i) for i in range(count): in this process, or spread over `workers` forked
    processes (worker w runs i = w, w + workers, ...), which write their results into shared
    memory and leave with os._exit, never returning into the caller's code. A worker that
    fails is run again here, so that its error is raised in this process as it was there."""
    if workers <= 1:
        for i in range(count):
            run(i)
        return
    sys.stdout.flush()
    sys.stderr.flush()
    pids = {}
    for w in range(workers):
        pid = os.fork()
        if pid == 0:  # the worker
            code = 1
            try:
                for i in range(w, count, workers):
                    run(i)
                code = 0
            finally:
                os._exit(code)
        pids[pid] = w
    failed, running = [], dict(pids)
    try:
        for pid, w in pids.items():
            status = os.waitpid(pid, 0)[1]
            del running[pid]
            if status != 0:
                failed.append(w)
    except BaseException:  # Ctrl-C here reaches the workers too; leave none running
        for pid in running:
            try:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
            except OSError:
                pass
        raise
    for w in failed:
        for i in range(w, count, workers):
            run(i)


def throughput_mb_s(total_us, P: int, message_bytes: float):
    """Per-processor throughput (MB/s, MB = 10^6 B) as in the paper's Table 1: each processor
    sends and receives message_bytes to and from each of the P-1 others; bytes/us = MB/s."""
    return 2 * (P - 1) * message_bytes / np.asarray(total_us, dtype=float)


def expected_max(values, n: float, probs=None) -> float:
    """E[max of n iid draws] of a discrete distribution, exactly, from its CDF.

    values with probabilities probs (default: equal weights, i.e. values is a sample and this is
    its empirical CDF). With the values sorted and F_k the CDF at the k-th, the maximum equals
    x_k with probability F_k^n - F_{k-1}^n. Exact, so it checks the resampling simulations and
    shows directly how the tail takes over as n grows. n may be fractional (a CDF G^n).
    """
    x = np.asarray(values, dtype=float)
    w = np.ones_like(x) if probs is None else np.asarray(probs, dtype=float)
    if x.ndim != 1 or x.size == 0 or w.shape != x.shape or (w < 0).any() or w.sum() <= 0:
        raise ValueError("expected_max needs a non-empty 1-D sample and matching non-negative weights")
    order = np.argsort(x, kind="stable")
    cdf = np.minimum(np.cumsum(w[order]) / w.sum(), 1.0)
    below = np.concatenate(([0.0], cdf[:-1]))
    return float(np.sum(x[order] * (cdf ** n - below ** n)))


def _halo_once(sample: np.ndarray, N: int, calls: int, rng, coupled: bool, progress=None):
    """(MAX, AVG) per call for N tasks whose per-call times are drawn from sample.

    Coupled: a barrier before each call makes every call wait for its slowest task, so MAX is the
    mean over calls of the per-call maximum. Uncoupled, the opposite limit: tasks never wait for
    each other until the end, so delays average out within each task and MAX is the slowest
    task's mean time per call. AVG is the mean over tasks and calls in both.

    Both draw from the exact distributions, at a cost that does not grow with N where it need
    not. Coupled: a call's maximum over N draws from a sample of CDF F has CDF F^N, so it is one
    draw by the inverse of F^N, and the AVG (the mean of all N x calls draws) is one multinomial
    draw of how many times each distinct value comes up. Uncoupled: each task's mean over its
    calls, in chunks of tasks: drawn directly, or, for a sample of few distinct values, as one
    multinomial draw per task of how often each value comes up.  Its time grows as N (a draw per
    task), its memory does not: each chunk's maximum and sum are kept, not a mean per task (8 bytes
    a task held 800 MB at 10^8 tasks, issue 61).  progress(tasks) is told of each chunk done.
    """
    if coupled:
        values, counts = np.unique(sample, return_counts=True)
        cdf = np.cumsum(counts) / sample.size
        cdf_max = cdf ** N
        cdf_max[-1] = 1.0
        per_call_max = values[np.minimum(np.searchsorted(cdf_max, rng.random(calls), side="right"), values.size - 1)]
        every = rng.multinomial(N * calls, counts / sample.size)
        return float(per_call_max.mean()), float(every @ values / (N * calls))
    values, counts = np.unique(sample, return_counts=True)
    few = 20 * values.size < calls  # few distinct values (a histogram's): how often each comes up
    step = max(1, CHUNK_ELEMENTS // (values.size if few else calls))
    work = None if few else np.empty(step * calls, np.intp)
    largest, total = -math.inf, 0.0
    for lo in range(0, N, step):
        rows = min(step, N - lo)
        if few:
            per_task = rng.multinomial(calls, counts / sample.size, size=rows) @ values / calls
        else:
            per_task = _resample(sample, rng, rows * calls, work[:rows * calls]).reshape(rows, calls).mean(axis=1)
        largest, total = max(largest, float(per_task.max())), total + float(per_task.sum())
        if progress is not None:
            progress(rows)
    return largest, total / N


def halo_prediction(per_task_samples_us, tasks_list, rng: np.random.Generator, trials: int,
                    barrier_coupled: bool = True, n_boot: int = 20, progress=None) -> dict:
    """Predicts the halo benchmark's per-call MAX and AVG for each task count N in tasks_list.

    Each of `trials` simulated calls draws N per-task times from the measured sample. Returns
    {N: {max_mean, avg_mean, ratio (MAX/AVG), max_se}}. max_se is a bootstrap standard error:
    the spread of max_mean over n_boot repeats of the prediction, each from a resample (with
    replacement) of the measured sample, so it covers both the finite measurement and the
    simulation's own noise. The tail decides MAX at large N, and a finite sample knows its tail
    only roughly, so the uncertainty matters.
    """
    sample = _check_sample(per_task_samples_us, "per_task_samples_us")
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, not {n_boot!r}")
    out = {}
    for N in tasks_list:
        mx, av = _halo_once(sample, N, trials, rng, barrier_coupled, progress)
        boot = [_halo_once(rng.choice(sample, sample.size), N, trials, rng, barrier_coupled, progress)[0]
                for _ in range(n_boot)]
        out[N] = {"max_mean": mx, "avg_mean": av, "ratio": mx / av if av > 0 else math.nan,
                  "max_se": float(np.std(boot, ddof=1))}
    return out


def halo_extrapolation(max_series_us, measured_tasks: int, tasks_list, rng: np.random.Generator,
                       n_boot: int = 200) -> dict:
    """Per-call MAX at other task counts from the per-call MAX measured at N0 tasks.

    Barrier-coupled calls, tasks independent and alike: the MAX over N0 tasks has CDF F^N0, so
    the MAX over N has CDF G^(N/N0) with G the measured MAX distribution. Unlike resampling the
    merged histogram, this needs no per-task distribution: a task delayed by its neighbour
    counts once, in the MAX, not once per task that waited. At N = N0 it gives the measured mean
    back exactly. max_se: bootstrap over the measured calls.
    """
    series = _check_sample(max_series_us, "max_series_us")
    out = {}
    for N in tasks_list:
        power = N / measured_tasks
        boot = [expected_max(rng.choice(series, series.size), power) for _ in range(n_boot)]
        out[N] = {"max_mean": expected_max(series, power), "max_se": float(np.std(boot, ddof=1))}
    return out


def window_costs(trace: TraceInterrupts, window_us: float):
    """The distribution of the detour cost met by a call of window_us that starts at a uniformly
    random instant of the (repeated) trace at which the task runs: (costs, probabilities), costs
    sorted and distinct.

    The cost is that of the events starting inside [s, s + window), as TraceInterrupts counts
    it. A call cannot start inside a detour (the task is not running), so s is uniform over the
    trace less the detours [time, time + cost): after a trace that takes a third of the CPU, a
    window meets 1.5 times as many detours as one placed anywhere would. The cost changes only
    where s or s + window crosses an event, so it is constant between those points; each piece
    has probability (its running time) / (the trace's running time). Exact, O(E log E).
    """
    L = trace.length
    laps, beta = divmod(float(window_us), L)
    ends = trace.times + np.diff(trace.cum)
    cuts = np.sort(np.concatenate(([0.0, L], trace.times, (trace.times - beta) % L, ends % L)))
    lengths = np.diff(cuts)
    keep = lengths > 0
    middle, lengths = cuts[:-1][keep] + lengths[keep] / 2, lengths[keep]
    cost = trace._cost_before(middle + beta) - trace._cost_before(middle) + laps * trace.cum[-1]
    # inside a detour: after the start of some event, before the latest end so far (this lap's
    # or, wrapping around, the last lap's)
    latest = np.maximum.accumulate(ends)
    last = np.searchsorted(trace.times, middle, side="right") - 1
    inside = (np.where(last >= 0, latest[np.maximum(last, 0)], -np.inf) > middle) | (middle + L < latest[-1])
    running = np.where(inside, 0.0, lengths)
    if running.sum() <= 0:  # detours cover the whole trace: no instant to start at; take them all
        running = lengths
    costs, where = np.unique(cost, return_inverse=True)
    return costs, np.bincount(where, weights=running) / running.sum()


def halo_trace_prediction(max_series_us, measured_tasks: int, tasks_list, trace: TraceInterrupts,
                          rng: np.random.Generator, n_boot: int = 200, groups: int = 256) -> dict:
    """Per-call MAX at N tasks when each task also meets the detours of a trace (jb-noise --trace).

    Every task replays the trace from its own uniformly random offset, as TraceInterrupts does in
    the all-to-all: a call of length b on a task grows by the detours that start inside it (first
    order: detours in the time they add, or while the task waits, are not counted). A call's
    length b comes from the measured per-call MAX at N0 tasks, extrapolated to N as
    halo_extrapolation does (CDF G^(N/N0)); its N tasks' windows are independent draws of
    window_costs(b), so the call's MAX is b plus the largest of N of them (an exact expectation,
    from that distribution's CDF to the power N), and the call meets a detour on some task with
    probability 1 - (1 - p_b)^N, p_b the chance of one window meeting one. Returns
    {N: {max_mean, max_se, detour_fraction, detour_fraction_se}}: no simulated calls, so
    nothing here grows with N. The se are bootstraps over the measured calls (n_boot). The calls
    are grouped into at most `groups` runs of the sorted series, each run's windows taken at its
    mean length, so the cost is O(groups x E log E) for a trace of E events. With an empty trace
    (or one of zero costs) max_mean is halo_extrapolation's.
    """
    series = np.sort(_check_sample(max_series_us, "max_series_us"))
    if n_boot < 2:
        raise ValueError(f"n_boot must be >= 2, not {n_boot!r}")
    C = series.size
    edges = np.unique(np.linspace(0, C, min(groups, C) + 1).astype(int))
    group_of = np.repeat(np.arange(edges.size - 1), np.diff(edges))
    windows = [window_costs(trace, b) for b in np.add.reduceat(series, edges[:-1]) / np.diff(edges)]
    positions = np.arange(C + 1) / C

    def weights(power, picked):  # P(the maximum of `power` draws of the sorted picked is the k-th)
        cdf = positions ** power
        return np.bincount(picked, weights=np.diff(cdf), minlength=C) if picked is not None else np.diff(cdf)

    out = {}
    for N in tasks_list:
        extra = np.empty(len(windows))
        hit = np.empty(len(windows))
        for g, (costs, probs) in enumerate(windows):
            cdf = np.minimum(np.cumsum(probs), 1.0)
            below = np.concatenate(([0.0], cdf[:-1]))
            extra[g] = float(np.sum(costs * (cdf ** N - below ** N)))
            hit[g] = 1.0 - (1.0 - probs[costs > 0].sum()) ** N
        per_call_max, per_call_hit = series + extra[group_of], hit[group_of]
        power = N / measured_tasks

        def predict(picked=None):
            w = weights(power, picked)
            return float(w @ per_call_max), float(w @ per_call_hit)

        boot = np.array([predict(np.sort(rng.integers(C, size=C))) for _ in range(n_boot)])
        mx, frac = predict()
        out[N] = {"max_mean": mx, "max_se": float(np.std(boot[:, 0], ddof=1)),
                  "detour_fraction": frac, "detour_fraction_se": float(np.std(boot[:, 1], ddof=1))}
    return out


def _check_sample(values, where: str) -> np.ndarray:
    """The sample as a 1-D float array; one line naming `where` if it is empty, not numeric,
    negative or not finite (a time cannot be any of these, and one NaN would poison every max)."""
    numeric = isinstance(values, np.ndarray) and values.dtype.kind in "fiu"
    if not numeric and any(isinstance(v, (bool, np.bool_, str, bytes)) for v in np.ravel(np.asarray(values, dtype=object))):
        raise SimulationInputError(f"{where}: holds a value that is not a number")
    try:
        x = np.asarray(values, dtype=float).ravel()
    except (TypeError, ValueError):
        raise SimulationInputError(f"{where}: holds a value that is not a number") from None
    if x.size == 0:
        raise SimulationInputError(f"{where}: no samples")
    bad = np.flatnonzero(~np.isfinite(x) | (x < 0))
    if bad.size:
        raise SimulationInputError(f"{where}: sample {bad[0]} is {x[bad[0]]}, not a finite time >= 0")
    return x


SAMPLE_LINE = 4096  # characters: a line longer than this holds no one number (a value is tens)
_READ = 1 << 20


def load_samples(path, entry: int | None = None) -> np.ndarray:
    """Reads a sample of exchange times (us) from a file.

    Either text, one value per line (blank lines and lines starting with # ignored), or the JSON
    document of jb-alltoall, whose results entries may hold a list "samples_us". A document with
    several such entries needs `entry` (an index into results): their samples are usually for
    different message sizes, and pooling them would describe no real exchange.

    Text is read as a stream, a chunk at a time, and refused at its first bad line: a garbage file
    of 300 MB held 2.7 GB before its line 1 was named (issue 61), and one of 1,000 MB ran out of
    memory first.  What it holds beyond the bad line is never read.
    """
    path = Path(path)
    with open_input(path, SimulationInputError) as f:
        try:
            first = f.read(_READ)
        except OSError as e:
            raise SimulationInputError(f"{path}: cannot read: {e.strerror}") from None
        if first.lstrip().startswith(b"{"):  # a jb-alltoall document: JSON is read whole
            return _json_samples(path, read_text(path, SimulationInputError), entry)
        values = array.array("d")
        lineno, pending, chunk = 0, b"", first
        while chunk:
            *lines, pending = (pending + chunk).split(b"\n")  # pending: the line the next chunk goes on with
            for line in lines:
                lineno += 1
                _sample_line(path, lineno, line, values)
            if len(pending) > SAMPLE_LINE:  # no number is that long, and a comment need not be
                raise SimulationInputError(f"{path}: line {lineno + 1}: longer than {SAMPLE_LINE} characters, "
                                           f"not a number: {pending[:40].decode(errors='replace')!r}")
            try:
                chunk = f.read(_READ)
            except OSError as e:
                raise SimulationInputError(f"{path}: cannot read: {e.strerror}") from None
        if pending:
            _sample_line(path, lineno + 1, pending, values)
    return _check_sample(np.frombuffer(values, dtype=float) if values else [], str(path))


def _sample_line(path, lineno: int, raw: bytes, values) -> None:
    """One line of a samples file: appended to values, skipped (blank, a # comment), or refused."""
    try:
        s = raw.decode().strip()
    except UnicodeDecodeError:
        raise SimulationInputError(f"{path}: line {lineno}: not a number: "
                                   f"{raw[:40].decode(errors='replace')!r}") from None
    if not s or s.startswith("#"):
        return
    try:
        v = float(s)
    except ValueError:
        raise SimulationInputError(f"{path}: line {lineno}: not a number: {s[:40]!r}") from None
    if not (math.isfinite(v) and v >= 0):
        raise SimulationInputError(f"{path}: line {lineno}: {s[:40]!r} is not a finite time >= 0")
    values.append(v)


def _json_samples(path: Path, text: str, entry: int | None) -> np.ndarray:
    doc = loads_json(text, path, SimulationInputError)
    results = doc.get("results") if isinstance(doc, dict) else None
    if not isinstance(results, list):
        raise SimulationInputError(f"{path}: no 'results' list")
    found = [i for i, r in enumerate(results) if isinstance(r, dict) and "samples_us" in r]
    if entry is None:
        if not found:
            raise SimulationInputError(f"{path}: no results entry holds 'samples_us'")
        if len(found) > 1:
            raise SimulationInputError(f"{path}: results entries {found} all hold 'samples_us'; choose one (entry=)")
        entry = found[0]
    elif entry not in found:
        raise SimulationInputError(f"{path}: results[{entry}] does not exist or holds no 'samples_us'")
    values = results[entry]["samples_us"]
    if not isinstance(values, list):
        raise SimulationInputError(f"{path}: results[{entry}].samples_us is not a list")
    return _check_sample(values, f"{path}: results[{entry}].samples_us")


def alltoall_results(sample, procs, trials: int, seed: int, size: int, interrupts=None, progress=None) -> list[dict]:
    """The SP2 study's resampling simulator: trials all-to-alls on each P of procs, one random
    stream of seed through them all; an entry per P.  progress(exchanges) is told of each P done
    (P x P x trials exchanges)."""
    rng = np.random.default_rng(seed)
    entries = []
    for P in procs:
        r = simulate_alltoall(sample, P, trials, rng, interrupts)
        if progress is not None:
            progress(P * P * trials)
        total, idle0 = r["total_us"], r["idle_us"][:, 0]
        thr = throughput_mb_s(total, P, size)
        entries.append({"P": P, "total_mean_us": float(total.mean()), "total_p50_us": float(np.percentile(total, 50)),
                        "total_p99_us": float(np.percentile(total, 99)), "throughput_mean_mb_s": float(thr.mean()),
                        "idle_mean_us": float(r["idle_us"].mean()), "idle0_zero_fraction": float((idle0 == 0).mean()),
                        "idle0_p50_us": float(np.percentile(idle0, 50)), "idle0_p99_us": float(np.percentile(idle0, 99)),
                        "idle0_max_us": float(idle0.max())})
    return entries


def per_task_times(bins):
    """Per-task times rebuilt from a merged histogram [[lower_us, upper_us or None, count], ...]:
    each bin's count of its middle (geometric; the bound there is where the other is 0 or
    open).  A merged histogram also counts a task's waits for a delayed neighbour, so from a
    run of more than one task these times are longer than the tasks' own."""
    return np.repeat([np.sqrt(lo * hi) if lo > 0 and hi is not None else (hi or lo) for lo, hi, _ in bins],
                     [n for _, _, n in bins])

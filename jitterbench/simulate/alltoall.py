"""The SP2's pairwise all-to-all, simulated (Tabe, Hardwick and Stout, "Statistical Analysis of
Communication Time on the IBM SP2"): the time of one pairwise exchange, measured many times,
predicts a whole all-to-all on P processors by replaying the round-robin schedule with times drawn
from that sample.  An all-to-all is slower than (rounds x mean exchange): an exchange starts only
when both partners are free, so one slow exchange delays both partners, then their next partners,
and so on.  A sample measured on a few nodes thus predicts any P.

All times are in microseconds.
"""
from __future__ import annotations

import mmap
import os
import sys

import numpy as np

from .interrupts import Interrupts, TraceInterrupts
from .resampling import CHUNK_ELEMENTS, sampler
from .samples import checked_sample

# Worker processes that replay chunks of trials at once (simulate_alltoall): the CPUs this process
# may use, at most 8. Processes, not threads: a round is a dozen numpy calls on arrays of a few
# hundred KB, and threads wait on each other for the GIL between them (P = 1024, 1,000 trials on
# 2 CPUs: 2.2 s on two threads, 1.9 s on two processes, 3.1 s on one). Forked, so they share
# everything read-only; on Linux only (fork is unsafe on macOS and absent on Windows), else one.
# The result does not depend on it.
WORKERS = max(1, min(8, len(os.sched_getaffinity(0)))) if sys.platform == "linux" else 1


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
    samples = checked_sample(samples_us, "samples_us")
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
        sampled = sampler(samples, exchange_rngs[i])
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

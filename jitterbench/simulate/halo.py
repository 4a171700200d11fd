"""The halo exchange's per-call MAX at other task counts ("Switch Jitter"): a barrier-coupled call
costs the maximum over its N tasks, so a sample measured on a few tasks predicts it at any N, by
resampling per-task times (halo_prediction), from the measured per-call MAX alone
(halo_extrapolation), and with each task meeting a node's trace of detours (halo_trace_prediction).

All times are in microseconds.
"""
from __future__ import annotations

import math

import numpy as np

from .interrupts import TraceInterrupts, window_costs
from .resampling import CHUNK_ELEMENTS, resample
from .samples import checked_sample

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
            per_task = resample(sample, rng, rows * calls, work[:rows * calls]).reshape(rows, calls).mean(axis=1)
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
    sample = checked_sample(per_task_samples_us, "per_task_samples_us")
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
    series = checked_sample(max_series_us, "max_series_us")
    out = {}
    for N in tasks_list:
        power = N / measured_tasks
        boot = [expected_max(rng.choice(series, series.size), power) for _ in range(n_boot)]
        out[N] = {"max_mean": expected_max(series, power), "max_se": float(np.std(boot, ddof=1))}
    return out


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
    series = np.sort(checked_sample(max_series_us, "max_series_us"))
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

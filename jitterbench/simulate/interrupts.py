"""Interrupts an exchange or a call pays for: the all-to-all simulator's modelled ticks and rare
events (Interrupts), a node's measured trace replayed from each processor's own offset
(TraceInterrupts), and the detour cost a call window meets in a trace (window_costs, the halo's).

All times are in microseconds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


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
        """Wraps an exchange-time function (see alltoall._play) so each exchange also pays for interrupts."""
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

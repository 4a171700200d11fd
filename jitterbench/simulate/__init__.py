"""Simulated all-to-all and halo timings from a measured sample of exchange times.

Tabe, Hardwick and Stout ("Statistical Analysis of Communication Time on the IBM SP2") measure the
time of one pairwise exchange many times, then predict a whole all-to-all on P processors by
replaying the round-robin schedule with times drawn from that sample. The point is that an
all-to-all is slower than (rounds x mean exchange): an exchange starts only when both partners are
free, so one slow exchange delays both partners, then their next partners, and so on. The same
resampling predicts a barrier-coupled halo exchange, whose per-call cost is the maximum over its
N tasks ("Switch Jitter"). A sample measured on a few nodes thus predicts behaviour at any P or N.

The models, one a module: alltoall (the replayed schedule), halo (the halo at other task
counts), interrupts (what an exchange or a call pays for a node's interrupts), resampling (the
draws both replay from), samples (the measured samples, read and checked), profile (a measured
step under other networks); command, the `jitterbench simulate` subcommands.  This package only
hands their names on.

All times are in microseconds.
"""
from __future__ import annotations

from .alltoall import alltoall_results, schedule, simulate_alltoall, throughput_mb_s
from .halo import expected_max, halo_extrapolation, halo_prediction, halo_trace_prediction
from .interrupts import Interrupts, TraceInterrupts, window_costs
from .samples import SimulationInputError, load_interrupt_trace, load_samples, per_task_times

__all__ = ["Interrupts", "SimulationInputError", "TraceInterrupts", "alltoall_results", "expected_max",
           "halo_extrapolation", "halo_prediction", "halo_trace_prediction", "load_interrupt_trace", "load_samples",
           "per_task_times", "schedule", "simulate_alltoall", "throughput_mb_s", "window_costs"]

"""OsuCheck: the OSU Micro-Benchmarks (osu_latency, osu_bw, ...), set beside jb-pingpong.
Not a jitterbench benchmark: no C folder, no JSON document, no summary."""
from __future__ import annotations

import re
import statistics
from collections import defaultdict

from ..figures import figure, finish, fmt, line_plot, subplots
from . import Descriptor, _cost as cost
from .perftest import CHECK as PERFTEST
from .pingpong import CHECK as PINGPONG

CHECK = "OsuCheck"


# the variables each program's line is drawn from: latency_8, bandwidth_4096 (OSU); p50_8 (perftest's
# median half round trip: the verbs beneath the MPI), bandwidth_4096
DRAWN = {"osu_latency": "latency", "osu_bw": "bandwidth", "ib_send_lat": "p50", "ib_write_bw": "bandwidth"}


@figure
def osu(col):
    """OSU Micro-Benchmarks and perftest beside jitterbench

    Each quantity beside jitterbench's of the same definition: osu_latency's average latency and
    jb-pingpong's half cycle of one message (mode send); osu_bw -b multiple and jb-pingpong's window of 64
    messages from distinct buffers (PingPongCheck sweep=window); beneath them the verbs' own, where perftest
    ran: ib_send_lat's median half round trip and ib_write_bw's average bandwidth.
    """
    ours = [c for c in col.of(PINGPONG) if (c.params.get("mode"), c.params.get("messages")) in (("send", 1),
                                                                                              ("window", 64))]
    theirs = [c for c in col.of(CHECK) + col.of(PERFTEST) if c.params.get("benchmark") in DRAWN]
    if not ours and not theirs:
        return f"no {PINGPONG} (send, one message; window), {CHECK} or {PERFTEST} results"
    rows, lat, bw = [], defaultdict(list), defaultdict(list)
    for c in ours:
        size = c.params.get("msg_size")
        if c.params.get("mode") == "send" and c.value("cycle") is not None:  # None: a value not measured
            lat[(c.label, c.environ, "jb-pingpong")].append((size, c.value("cycle") / 2))
        if c.params.get("mode") == "window" and c.value("speed") is not None:
            bw[(c.label, c.environ, "jb-pingpong window")].append((size, c.value("speed")))
    for c in theirs:
        program = c.params["benchmark"]
        target = bw if DRAWN[program] == "bandwidth" else lat
        for var, p in c.perf.items():
            if re.fullmatch(DRAWN[program] + r"_[0-9]+", var) and p.value is not None:  # latency_8: at 8 bytes
                target[(c.label, c.environ, c.params["benchmark"])].append((int(var.rsplit("_", 1)[1]), p.value))
    fig, (left, right) = subplots(1, 2, figsize=(9, 4))
    for ax, data, ylabel in ((left, lat, "latency us"), (right, bw, "MB/s")):
        series = {g: [(s, statistics.median([v for x, v in pts if x == s]), 0, 0, sum(x == s for x, _ in pts))
                      for s in sorted({x for x, _ in pts})] for g, pts in data.items()}
        line_plot(ax, series, ("label", "environ", "benchmark"), keep=("benchmark",))
        finish(fig, ax, "message size (bytes)", ylabel, logx=True)
        rows += [(*g, ylabel, p[0], fmt(p[1]), p[4]) for g, ps in series.items() for p in ps]
    note = "" if theirs else "OSU Micro-Benchmarks and perftest did not run here (skipped): jitterbench alone."
    return ("label", "environ", "benchmark", "quantity", "size", "value", "repeats"), rows, fig, note


# What a program's run costs, from OSU 7.4's own loops (c/util/osu_util.h: iterations plus
# warm-up, at and below LARGE_MESSAGE_SIZE, then above) and the sizes OsuCheck asks for
# (reframe_checks/osu.py, -m): the same rough message model as jitterbench's own benchmarks.
OSU_LARGE = 8192
OSU_LOOPS = {"latency": (10000 + 100, 1000 + 10), "bandwidth": (100 + 10, 20 + 2),
             "collective": (1000 + 100, 100 + 10)}
OSU_WINDOW = 64  # WINDOW_SIZE_LARGE: messages in flight per iteration of the bandwidth programs
# program: (loops, largest size, messages an iteration costs one task, given the run's tasks)
OSU_RUNS = {
    "osu_latency": ("latency", 65536, lambda tasks: 2),
    "osu_multi_lat": ("latency", 65536, lambda tasks: 2),
    "osu_bw": ("bandwidth", 1048576, lambda tasks: OSU_WINDOW + 1),
    "osu_bibw": ("bandwidth", 1048576, lambda tasks: 2 * OSU_WINDOW + 1),
    "osu_mbw_mr": ("bandwidth", 1048576, lambda tasks: OSU_WINDOW + 1),
    "osu_alltoall": ("collective", 65536, lambda tasks: tasks - 1),
}


def osu_seconds(v):
    """One run of the variant's program (a --describe record) over its sizes 1, 2, 4 ... bytes."""
    tasks = cost.tasks(v)
    if v.get("benchmark") == "osu_barrier":
        return sum(OSU_LOOPS["collective"]) * cost.barrier_s(tasks)
    loops, largest, messages = OSU_RUNS.get(v.get("benchmark"), OSU_RUNS["osu_bw"])
    sizes = [1 << k for k in range(largest.bit_length())]
    return sum(OSU_LOOPS[loops][size > OSU_LARGE] * messages(tasks) * cost.message_s(size) for size in sizes)


DESCRIPTOR = Descriptor(check=CHECK, benchmark=None, order=90, figures=(osu,), cost=osu_seconds)

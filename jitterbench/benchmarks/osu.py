"""OsuCheck: the OSU Micro-Benchmarks (osu_latency, osu_bw, ...), set beside jb-pingpong.
Not a jitterbench benchmark: no C folder, no JSON document, no summary."""
from __future__ import annotations

import re
import statistics
from collections import defaultdict

from ..figures import figure, finish, fmt, line_plot, subplots
from . import Descriptor
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


# OSU's sizes up to 1 MB, a run per program
DESCRIPTOR = Descriptor(check=CHECK, benchmark=None, order=90, figures=(osu,), cost=lambda v: 30.0)

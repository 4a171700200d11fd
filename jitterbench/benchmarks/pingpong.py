"""jb-pingpong and PingPongCheck: multi-ping-pong (Hein, Booth and Bull)."""
from __future__ import annotations

import statistics
from collections import defaultdict

from ..figures import figure, finish, fmt, line_plot, subplots
from . import PER_CALL_CONTEXT, Column, Descriptor, Parameter, Quantity, _cost as cost, median, of, per_call

CHECK, BENCHMARK = "PingPongCheck", "pingpong"


def cases_of(doc):
    for r in doc["results"]:
        yield {"mode": r["mode"], "messages": r["messages"], "msg_size": r["size"]}, DESCRIPTOR.values_of(r)


def _pingpong_points(col):
    """(label, environ, mode, messages, size, speed) of every multi-ping-pong result."""
    return [(c.label, c.environ, c.params.get("mode"), c.params.get("messages"), c.params.get("msg_size"),
             c.value("speed")) for c in col.of(CHECK) if c.value("speed") is not None]


@figure
def pingpong_speed(col):
    """Multi-ping-pong: speed against message size and count

    speed = 2 n size / cycle time (MB = 10^6 bytes), the cycle time being the mean over cycles of the slowest
    pair, as in Hein, Booth and Bull, Fig. 1.
    """
    points = _pingpong_points(col)
    if not points:
        return "no multi-ping-pong results in these runs"
    fields = ("label", "environ", "mode", "messages")
    by_size = defaultdict(lambda: defaultdict(list))
    for lab, env, mode, n, size, speed in points:
        by_size[(lab, env, mode, n)][size].append(speed)
    series = {g: [(s, statistics.median(v), min(v), max(v), len(v)) for s, v in sorted(sizes.items())]
              for g, sizes in by_size.items()}
    fig, ax = subplots()
    line_plot(ax, series, fields)
    finish(fig, ax, "message size (bytes)", "MB/s", logx=True)
    rows = [(*g, p[0], fmt(p[1]), p[4]) for g, ps in series.items() for p in ps]
    return (*fields, "size", "speed MB/s", "repeats"), rows, fig


@figure
def pingpong_split(col):
    """Splitting a message: speed in n messages over speed in one

    For a fixed total of data, the speed when sent as n messages of total/n bytes divided by the speed as one
    message (Hein, Booth and Bull, Figs. 3 and 4); above 1, splitting pays.
    """
    speeds = defaultdict(list)
    for lab, env, mode, n, size, speed in _pingpong_points(col):
        speeds[(lab, env, mode, n * size, n)].append(speed)
    med = {k: statistics.median(v) for k, v in speeds.items()}
    series = defaultdict(list)
    for (lab, env, mode, total, n), s in sorted(med.items(), key=lambda kv: repr(kv[0])):
        one = med.get((lab, env, mode, total, 1))
        if n > 1 and one:
            series[(lab, env, mode, n)].append((total, s / one, s / one, s / one, 1))
    if not series:
        return ("no fixed total measured both whole and split; run e.g. "
                "jb-pingpong --total 8K,64K --messages 1,2,4,8 --json split.json")
    fields = ("label", "environ", "mode", "messages")
    fig, ax = subplots()
    line_plot(ax, series, fields)
    ax.axhline(1.0, color="grey", lw=0.8)
    finish(fig, ax, "total bytes per direction", "speed ratio", logx=True)
    rows = [(*g, p[0], fmt(p[1])) for g, ps in series.items() for p in ps]
    return (*fields, "total bytes", "ratio"), rows, fig


def peak_speed(cases, at):
    """MB/s, the saturation speed of multi-ping-pong."""
    return max([c.value("speed") for c in of(cases, CHECK) if c.value("speed") is not None], default=None)


def small_message_latency(cases, at):
    """The one-way latency of the smallest message: half the cycle of one message sent."""
    pp = [c for c in of(cases, CHECK) if c.params.get("mode") == "send" and c.params.get("messages") == 1]
    smallest = min((c.params.get("msg_size") for c in pp), default=None)
    return median([c.value("cycle") / 2 for c in pp if c.params.get("msg_size") == smallest])


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=20, cases=cases_of, swept="mode",
    study="Hein, Booth, Bull", about="multi-ping-pong, four send modes, splitting a fixed total",
    # a cycle's time is the slowest pair's (the per-call MAX over pairs)
    quantities=(Quantity("cycle", "max_us", "us", "mean over cycles of the slowest pair's cycle time"),
                Quantity("speed", "speed_mb_s", "MB/s", "2 n size over the mean cycle time", better="higher"),
                Quantity("speed_p50", "speed_p50_mb_s", "MB/s", "2 n size over the median cycle time",
                         better="higher", role="recorded"),
                Quantity("latency", "latency_us", "us", "half the mean cycle time of one message",
                         role="recorded"),
                *(q for q in per_call() if q.name != "max")),
    result_fields=("mode", "messages", "size", "total", "buffers", "pairs", "pairs_off_node", "cycles",
                   *PER_CALL_CONTEXT,
                   "series"),
    parameters=(Parameter("modes", ("send", "isend", "ssend", "issend"), quick=("send",)),
                Parameter("messages", (1, 8), quick=(1,)),  # messages per direction and cycle
                Parameter("msg_sizes", (8, 4096, 65536)), Parameter("totals", (8192, 65536, 1048576)),
                Parameter("calls", 500)),
    small=("--size", "8", "--messages", "1,2"),
    option_values={"messages": ["1", "2,4"], "total": ["64", "1K"]},
    cost=lambda v: cost.sweep_s(v, 20, lambda s: sum(2 * n * cost.message_s(s) for n in v.get("messages", [1]))),
    figures=(pingpong_speed, pingpong_split),
    distribution=("mode", "size"),
    counterparts={"pingpong_peak_speed": peak_speed, "small_message_latency_us": small_message_latency},
    summary=(Column.text("mode", "mode"), Column.text("messages", "messages"), Column.text("size", "size"),
             Column.text("pairs", "pairs"), Column.number("cycle us", "max_us"),
             Column.number("speed MB/s", "speed_mb_s"), Column.number("p99(cycle)", "p99_us")),
)

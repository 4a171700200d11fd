"""Network profiles: the run time of a measured step under other networks (paper 004).

The LANL slides model an application's run time "under various network profiles"
(latency 1, 2, 4 and 8 us, bandwidth 1 MB/s to 5 GB/s), "assuming zero overhead when
communicating", with and without overlapping the communication with independent work.
Here a step is

    compute_us  C  the computation of one step (its time on an ideal network)
    messages    m  messages per step, sent one after another (their times add)
    size        s  bytes per message
    overlap_us  O  independent work, part of C, that could run while the messages are in flight

and under a profile of latency L (us) and bandwidth B (MB/s, MB = 10^6 bytes, so bytes/B is us)

    comm         = m (L + s / B)                   zero overhead: the CPU is not busy sending
    no overlap:  step = C + comm
    overlap:     step = C + max(0, comm - O)       comm hidden behind at most O of the work

The normalized execution time is step / C, the time under the profile over the time on an
ideal network (zero latency, infinite bandwidth), where the step is its computation alone.
The slides do not say what they normalize by; their Sweep3D column without overlap (1.20,
1.39, 1.79, 2.59 at 1, 2, 4, 8 us) lies on 1 + 0.2 L/us to within 0.01, which is 1 at L = 0:
consistent with this denominator.  Their overlapped column is not this model's: it matches
the plain column at half the latency, a fixed fraction of the communication hidden (Sweep3D's
overlap is dependent work, pipelined), where a fixed amount of independent work gives a flat
1.0 up to comm = O and then the plain slope.

From jb-torus documents (src/torus/README.md) the step is read off a measured run: m = 2 d
(each task sends one message to each neighbour in each of d dimensions), s the message size,
C = the time per call with the work after the final wait less the time per call without work
(same pattern and size), and O = C, since the vector add touches no message.  The measured
network's own profile is fitted to the calls without work at two or more sizes: least squares
of time per call = m L + (m / B) s.  With m counted this way B is the bandwidth a node injects
(on the emulated torus each neighbour has its own link, so B is twice a link's rate for the
patterns that send to both at once) and L the latency per message the model charges.
"""
from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass

from .. import results
from .samples import SimulationInputError

LATENCIES_US = (1.0, 2.0, 4.0, 8.0)
# 1 MB/s to 5 GB/s, log-spaced: the 1-2-5 series
BANDWIDTHS_MB_S = (1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0)


@dataclass(frozen=True)
class Step:
    compute_us: float
    messages: float
    size: float
    overlap_us: float = 0.0

    def check(self) -> "Step":
        """self, or SimulationInputError naming the value the model cannot use."""
        for name, value in asdict(self).items():
            if not (isinstance(value, (int, float)) and math.isfinite(value) and value >= 0):
                raise SimulationInputError(f"{name} is {value!r}: it must be a finite number >= 0")
        if self.compute_us <= 0:
            raise SimulationInputError("compute_us is 0: the normalized time divides by the time on an ideal "
                                       "network, which is the computation alone")
        if self.overlap_us > self.compute_us:
            raise SimulationInputError(f"overlap_us {self.overlap_us:g} exceeds compute_us {self.compute_us:g}: "
                                       "the independent work is part of the computation")
        return self


def comm_us(step: Step, latency_us: float, bandwidth_mb_s: float) -> float:
    """The messages' time per step, zero overhead: m (L + s / B)."""
    return step.messages * (latency_us + step.size / bandwidth_mb_s)


def step_us(step: Step, latency_us: float, bandwidth_mb_s: float, overlap: bool) -> float:
    comm = comm_us(step, latency_us, bandwidth_mb_s)
    return step.compute_us + (max(0.0, comm - step.overlap_us) if overlap else comm)


def normalized(step: Step, latency_us: float, bandwidth_mb_s: float, overlap: bool) -> float:
    """Time under the profile over the time on an ideal network (the computation alone)."""
    return step_us(step, latency_us, bandwidth_mb_s, overlap) / step.compute_us


def grid(step: Step, latencies, bandwidths) -> list[dict]:
    """Every profile: its latency, bandwidth, step times and normalized times."""
    rows = []
    for bw in bandwidths:
        for lat in latencies:
            plain, over = step_us(step, lat, bw, False), step_us(step, lat, bw, True)
            rows.append({"latency_us": lat, "bandwidth_mb_s": bw, "comm_us": comm_us(step, lat, bw),
                         "step_us": plain, "step_overlap_us": over, "normalized": plain / step.compute_us,
                         "normalized_overlap": over / step.compute_us})
    return rows


def fit_profile(sizes, times_us, messages: float) -> dict:
    """Least squares of time per call = m L + (m / B) size: the measured network's profile."""
    n = len(sizes)
    if n < 2 or len(set(sizes)) < 2:
        raise SimulationInputError("fitting a profile needs calls without work at two sizes or more")
    mx, my = sum(sizes) / n, sum(times_us) / n
    sxx = sum((x - mx) ** 2 for x in sizes)
    slope = sum((x - mx) * (y - my) for x, y in zip(sizes, times_us)) / sxx
    intercept = my - slope * mx
    if slope <= 0:
        raise SimulationInputError(f"the times per call without work do not grow with the size ({slope:.3g} us "
                                   "per byte): no bandwidth to fit")
    return {"latency_us": intercept / messages, "bandwidth_mb_s": messages / slope, "messages": messages,
            "points": [[x, y] for x, y in zip(sizes, times_us)],
            "residuals_us": [y - (intercept + slope * x) for x, y in zip(sizes, times_us)]}


# ---- jb-torus documents --------------------------------------------------------------------

# what a call's time is read from: the mean over calls of the per-call MAX over tasks, or the
# median over calls of it (robust to the rare slow call, a TCP retransmission say)
STATISTICS = ("max_us", "p50_us")


def torus_results(paths, statistic="max_us") -> list[dict]:
    """The results of jb-torus documents, each with the file it came from and its time per call
    (time_us) of the statistic named."""
    out = []
    for path in paths:
        doc = results.load(path)
        if doc["benchmark"] != "torus":
            raise SimulationInputError(f"{path}: a {doc['benchmark']!r} document, not jb-torus's")
        for i, r in enumerate(doc["results"]):
            for key in ("pattern", "work"):
                if not isinstance(r.get(key), str):
                    raise SimulationInputError(f"{path}: field results[{i}].{key} is missing or not a string")
            for key in ("ndims", "size", "work_bytes", "calls"):
                v = r.get(key)
                if not (isinstance(v, int) and not isinstance(v, bool) and v >= 0):
                    raise SimulationInputError(f"{path}: field results[{i}].{key} is missing or not a whole "
                                               "number >= 0")
            v = r.get(statistic)
            if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v >= 0):
                raise SimulationInputError(f"{path}: field results[{i}].{statistic} is missing or not a time >= 0")
            out.append(dict(r, source=f"{path}: results[{i}]", time_us=v))
    if not out:
        raise SimulationInputError(f"{', '.join(map(str, paths))}: no results")
    return out


def the_only(values, what, option):
    values = sorted(set(values))
    if len(values) != 1:
        raise SimulationInputError(f"the documents hold {what} {', '.join(map(str, values))}: choose one with "
                                   f"{option}")
    return values[0]


def _one(rows, what):
    """The one result of rows, else SimulationInputError: none, or several (give one run)."""
    if not rows:
        raise SimulationInputError(f"the documents hold no result {what}")
    if len(rows) > 1:
        raise SimulationInputError(f"the documents hold {len(rows)} results {what} ({rows[0]['source']}, "
                                   f"{rows[1]['source']}): give one run of each")
    return rows[0]


def from_torus(rs, pattern=None, size=None, work=None) -> dict:
    """The step and the measured network's profile of jb-torus results: {'pattern', 'step',
    'fit' (or None), 'measured': {after_us, before_us, none_us}, 'sources'}.  What cannot be
    read from them raises SimulationInputError naming it."""
    pattern = pattern or the_only([r["pattern"] for r in rs], "patterns", "--pattern")
    rs = [r for r in rs if r["pattern"] == pattern]
    if not rs:
        raise SimulationInputError(f"the documents hold no result of pattern {pattern}")
    ndims = the_only([r["ndims"] for r in rs], "tori of dimensions", "separate runs")
    messages = 2 * ndims
    plain = [r for r in rs if r["work"] == "none"]
    by_size = {}
    for r in plain:
        if r["size"] in by_size:
            raise SimulationInputError(f"the documents hold two results without work at size {r['size']} "
                                       f"({by_size[r['size']]['source']}, {r['source']}): give one run of each")
        by_size[r["size"]] = r
    worked = [r for r in rs if r["work"] in ("after", "before")]
    out = {"pattern": pattern, "ndims": ndims, "fit": None, "measured": {}, "sources": []}
    if len(by_size) >= 2:
        sizes = sorted(by_size)
        out["fit"] = fit_profile(sizes, [by_size[s]["time_us"] for s in sizes], messages)
        out["sources"] += [by_size[s]["source"] for s in sizes]
    if size is None and worked:
        size = the_only([r["size"] for r in worked], "message sizes with work", "--size")
    elif size is None and len(by_size) == 1:
        size = next(iter(by_size))
    if worked:
        work = work if work is not None else the_only([r["work_bytes"] for r in worked], "work sizes", "--work")
    compute = None
    if work is not None:
        at = f"of pattern {pattern} at size {size} with work {work} bytes"
        after = _one([r for r in worked if r["size"] == size and r["work_bytes"] == work and r["work"] == "after"],
                     f"with the work after the wait {at}")
        before = _one([r for r in worked if r["size"] == size and r["work_bytes"] == work and r["work"] == "before"],
                      f"with the work before the wait {at}")
        if size not in by_size:
            raise SimulationInputError(f"the documents hold no result without work of pattern {pattern} at size "
                                       f"{size}: the computation is the time with work less the time without")
        none = by_size[size]
        compute = after["time_us"] - none["time_us"]
        if compute <= 0:
            raise SimulationInputError(f"{after['source']}: the time with work ({after['time_us']:.1f} us) is not "
                                       f"above the time without ({none['time_us']:.1f} us, {none['source']}): no "
                                       "computation to measure")
        out["measured"] = {"none_us": none["time_us"], "after_us": after["time_us"], "before_us": before["time_us"]}
        out["sources"] += [after["source"], before["source"]]
        if none["source"] not in out["sources"]:
            out["sources"].append(none["source"])
    out.update(messages=messages, size=size, sizes=sorted(by_size), work_bytes=work, compute_us=compute)
    return out


# ---- the figure ------------------------------------------------------------------------------

SVG_CREATOR = "jitterbench simulate profile"  # in the figure's metadata: what --figure replaces only its own
# how every figure it draws begins (Matplotlib's SVG head, this creator in its metadata): what --figure
# replaces only its own, not a file that merely holds the words further in
SVG_HEAD = re.compile(r'<\?xml [^\n]*\?>\n<!DOCTYPE svg[^>]*>\n<svg [^>]*>\n <metadata>(?:(?!</metadata>).)*'
                      r'<dc:title>' + re.escape(SVG_CREATOR) + '</dc:title>', re.S)


def figure_svg(step: Step, rows, latencies, title: str) -> str:
    """Normalized time against bandwidth, a line per latency, solid without and dashed with
    overlap, as SVG text."""
    import io

    from ..figures import subplots
    fig, ax = subplots()
    for i, lat in enumerate(latencies):
        pts = sorted((r["bandwidth_mb_s"], r["normalized"], r["normalized_overlap"]) for r in rows
                     if r["latency_us"] == lat)
        bw = [p[0] for p in pts]
        colour = f"C{i % 10}"
        ax.plot(bw, [p[1] for p in pts], "-o", color=colour, ms=3, label=f"{lat:g} us")
        ax.plot(bw, [p[2] for p in pts], "--", color=colour, label=f"{lat:g} us, overlap")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("network bandwidth (MB/s)")
    ax.set_ylabel("normalized execution time (to an ideal network)")
    ax.set_title(title.replace("$", r"\$"), fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Creator": SVG_CREATOR})
    return buf.getvalue()


def predict(torus=(), *, statistic="max_us", pattern=None, size=None, work=None, messages=None,
            compute_us=None, overlap_us=None, latencies_us=LATENCIES_US, bandwidths_mb_s=BANDWIDTHS_MB_S) -> dict:
    """The step, of jb-torus documents (torus) or given whole (compute_us, messages, size,
    overlap_us), under every network profile of latencies_us by bandwidths_mb_s; from documents
    also the measured network's fitted profile and the model's times at it beside the measured
    ones.  What the model cannot use raises SimulationInputError naming it."""
    got = None
    if torus:
        got = from_torus(torus_results(torus, statistic), pattern, size, work)
        compute = compute_us if compute_us is not None else got["compute_us"]
        if compute is None:
            raise SimulationInputError("the documents hold no run with --work: give --compute-us")
        overlap = overlap_us if overlap_us is not None else (compute if got["compute_us"] is not None else 0.0)
        if got["size"] is None:
            the_only(list(got["sizes"]), "message sizes", "--size")
        step = Step(compute, messages if messages is not None else got["messages"], got["size"], overlap)
    else:
        if pattern or work is not None:
            raise SimulationInputError("--pattern and --work choose among jb-torus documents: give some")
        missing = [o for o, v in (("--compute-us", compute_us), ("--messages", messages), ("--size", size))
                   if v is None]
        if missing:
            raise SimulationInputError(f"give jb-torus documents, or {', '.join(missing)}")
        step = Step(compute_us, messages, size, overlap_us or 0.0)
    step.check()
    lats, bws = list(latencies_us), list(bandwidths_mb_s)
    out = {"model": "comm = messages (latency + size / bandwidth), zero overhead; step = compute + comm, with "
                    "overlap compute + max(0, comm - overlap)",
           "normalized_to": "the step on an ideal network (zero latency, infinite bandwidth): compute_us",
           "step": asdict(step), "latencies_us": lats, "bandwidths_mb_s": bws,
           "profiles": grid(step, lats, bws)}
    if got:
        out.update(source={**{k: got[k] for k in ("pattern", "ndims", "work_bytes", "sources")},
                           "statistic": statistic}, fit=got["fit"], measured=got["measured"])
        fit = got["fit"]
        if fit and got["measured"]:
            out["check"] = {"after_us": step_us(step, fit["latency_us"], fit["bandwidth_mb_s"], False),
                            "before_us": step_us(step, fit["latency_us"], fit["bandwidth_mb_s"], True)}
    return out

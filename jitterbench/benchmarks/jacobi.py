"""jb-jacobi and JacobiCheck: the Jacobi inverter of Hein, Booth and Bull (section 8), its halos
exchanged by 4 x MPI_Sendrecv or by Irecv/Isend and MPI_Waitall(8)."""
from __future__ import annotations

from ..figures import figure, finish, fmt, subplots
from . import PER_CALL_CONTEXT, START_SKEW, Column, Descriptor, Parameter, Quantity, _cost as cost, median, per_call, results_of

CHECK, BENCHMARK = "JacobiCheck", "jacobi"
# the three parts of Fig. 7, each from the fastest trial, and what names them in a result
PARTS = (("halo", "fastest_halo_us"), ("compute", "fastest_compute_us"), ("total", "fastest_step_us"))


def cases_of(doc):
    for r in doc["results"]:
        yield {"halo": r["halo"], "local": r["local"]}, DESCRIPTOR.values_of(r)


def gains(results):
    """{part: % by which waitall's fastest trial beats sendrecv's} for each run that measured both, as
    the study's 37 % (halo) and 17 % (total)."""
    by_run = {}
    for r in results:
        by_run.setdefault((r["local"], r["tasks"], r["calls"], r["trials"]), {})[r["halo"]] = r
    return [{part: 100 * (1 - pair["waitall"][key] / pair["sendrecv"][key]) for part, key in PARTS}
            for pair in by_run.values() if {"sendrecv", "waitall"} <= pair.keys()]


def gain_of(part):
    def measured(cases, at):
        return median(g[part] for g in gains(results_of(cases, BENCHMARK)))
    measured.__doc__ = f"The median over runs of the non-blocking halo's gain in its fastest trial's {part} time (%)."
    return measured


@figure
def jacobi(col):
    """Jacobi inverter: halo, compute and total time by halo method

    The fastest of the trials of each method (Hein, Booth and Bull, Fig. 7: 4 x MPI_Sendrecv against 4 x
    MPI_Irecv, 4 x MPI_Isend and MPI_Waitall(8)), per iteration; the table adds the gain of the non-blocking
    halo in each part, beside which the study states 37 % (halo) and 17 % (total).
    """
    # a run's document once, though each of its halo methods is a case of its own
    documents = {id(d): (c, d) for c in col.of(CHECK) for d in c.documents if d["benchmark"] == BENCHMARK}
    runs = [(c, r, gains(d["results"])) for c, d in documents.values() for r in d["results"]]
    if not runs:
        return f"no {CHECK} results in these runs"
    fig, ax = subplots()
    for i, (part, key) in enumerate(PARTS):
        ax.bar([x + 0.27 * (i - 1) for x in range(len(runs))], [r[key] for _, r, _ in runs], width=0.27, label=part)
    ax.set_xticks(range(len(runs)), [" ".join(dict.fromkeys((c.label, c.environ))) + f" {r['tasks']} tasks {r['halo']}"
                                    for c, r, _ in runs],
                  rotation=30, ha="right", fontsize=7)
    finish(fig, ax, "", "us per iteration (fastest trial)")
    rows = [(c.label, c.environ, c.params.get("nodes"), r["tasks"], r["local"], r["halo"], r["trials"],
             *(fmt(r[key]) for _, key in PARTS), *(fmt(g[0][part]) if g else "-" for part, _ in PARTS))
            for c, r, g in runs]
    return ("label", "environ", "nodes", "tasks", "local", "halo", "trials", "halo us", "compute us", "total us",
            "halo gain %", "compute gain %", "total gain %"), rows, fig


DESCRIPTOR = Descriptor(
    check=CHECK, benchmark=BENCHMARK, order=35, cases=cases_of, swept="halo",
    study="Hein, Booth, Bull", about="the 2-D Jacobi inverter, halos by 4 x Sendrecv or Waitall(8), fastest of N trials",
    # max, avg...: of the halo exchange alone; compute and step: of the whole iteration
    quantities=(*per_call("max", "avg", "p99", "t_max"), *START_SKEW,
                Quantity("compute", "compute_us", "us", "mean over iterations of the sweep's time, MAX over tasks"),
                Quantity("step", "step_us", "us", "mean over iterations of halo and sweep, MAX over tasks"),
                Quantity("fastest", "fastest_step_us", "us", "the fastest trial's step"),
                Quantity("fastest_halo", "fastest_halo_us", "us", "the fastest trial's halo exchange"),
                Quantity("fastest_compute", "fastest_compute_us", "us", "the fastest trial's sweep")),
    result_fields=("halo", "dims", "local", "lattice", "tasks", "trials", "halo_x_bytes", "halo_y_bytes", "checksum",
                   *PER_CALL_CONTEXT, "series"),
    parameters=(Parameter("halos", ("sendrecv", "waitall")), Parameter("points_per_task", (210, 252)),  # x and y
                Parameter("trials", 30, quick=2), Parameter("calls", 2000)),
    option_values={"lattice": ["2x2", "8x6"], "local": ["2x2", "3x5"], "halo": ["sendrecv"], "trials": ["1", "2"],
                   "dims": ["1x2", "2x1"]},
    # each method: (warm-up + calls x trials) iterations of a barrier, four halos and a sweep (5 flops a point)
    cost=lambda v: len(v.get("halos") or [None]) * ((v.get("calls") or 2000) * (v.get("trials") or 1) + 10) * (
        cost.barrier_s(cost.tasks(v)) + 4 * cost.message_s(4 * (v.get("points_per_task") or [210, 252])[1])
        + 5 * (v.get("points_per_task") or [210, 252])[0] * (v.get("points_per_task") or [210, 252])[1] / 1e9),
    figures=(jacobi,),
    distribution=("halo", "local"),
    counterparts={"jacobi_halo_gain": gain_of("halo"), "jacobi_total_gain": gain_of("total")},
    summary=(Column.text("halo", "halo"), Column.text("grid", "dims"), Column.text("local", "local"),
             Column.number("MAX us", "max_us"), Column.number("AVG us", "avg_us"),
             Column.ratio("MAX/AVG", "max_us", "avg_us"), Column.number("compute us", "compute_us"),
             Column.number("step us", "step_us"), Column.number("fastest step us", "fastest_step_us")),
)

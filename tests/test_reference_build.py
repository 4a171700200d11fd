"""The rule that builds a reference file from runs (jitterbench/reference_build.py), pinned byte for
byte: the file `jitterbench reference` writes from a fixed set of run reports is the one in
tests/fixtures/references/built.yaml.  A change of the rule is a change of that file, made on
purpose: write it again with `python tests/test_reference_build.py` and say why in the commit.

The runs are made here, not recorded (a recorded report is megabytes): eight ReFrame run reports
of one system whose cases reach every part of the rule: three checks under two MPIs, each figure
in its pool (times, percentiles over calls, sizes, rates by their unit, the node's figures), a
variable measured in too few runs, one with a value of 0, one too noisy to bound, a retried case,
a fixture and a skipped case, medians of launches in rounds and each run's compute probe."""
from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from jitterbench import checkout, reference_build, references

pytestmark = pytest.mark.unit

BUILT = Path(__file__).resolve().parent / "fixtures" / "references" / "built.yaml"
RUNS = 8
COMMIT = "0123456789ab"  # the checkout's commit, which the provenance names: fixed here, as the file is


def _case(rng, run, check, params, environ, perf, calls, **more):
    display = " ".join([check, *(f"%{k}={v}" for k, v in params.items())])
    mpi_library = {"openmpi": "Open MPI v4.1.4", "mpich": "MPICH Version: 5.0.2"}[environ]
    return {"display_name": display, **params, "system": "local", "partition": "default", "environ": environ,
            "result": "pass", "fixture": False, "calls": calls, "mpi_library": mpi_library,
            "cpu": "AMD EPYC 7B13; 2 CPUs", "hardware": "vendor=AuthenticAMD family=25 model=1",
            "transport": "vm: shm", "node_list": "vm", "launches": 5, "rounds": 2, "rounds_pooled": 2,
            "load_before": "; ".join(f"node=vm runnable=2 disturbed=0 "
                                     f"probe_us={2000 * (1 + 0.02 * run) + rng.random():.1f}" for _ in range(5)),
            "perfvalues": {f"local:default:{name}": [value, 0, None, None, unit, "pass"]
                           for name, (value, unit) in perf.items()}, **more}


def run_report(folder: Path, run: int) -> Path:
    """Run `run` of RUNS: every value drawn from a stream of its own, the whole run slower by a
    factor of its own (the machine's), one variable noisier than any bound."""
    rng = random.Random(run)
    slow = 1 + 0.03 * rng.random() + (0.12 if run == 5 else 0)

    def timed(median, spread=0.05, factor=slow):
        return round(median * factor * (1 + spread * rng.random()), 4)

    cases = []
    for environ, calls in (("openmpi", 100), ("mpich", 10000)):
        for pattern in ("sendrecv", "isend-recv"):
            perf = {"max": (timed(40), "us"), "avg": (timed(25), "us"), "p99": (timed(90, 0.3), "us"),
                    "jitter": (timed(1.6), "MAX/AVG"), "t_max": (timed(30), "us"),
                    # the node's own: not slower with the run
                    "node_probe_us": (timed(2000, 0.01, 1), "us"), "node_pair_ns": (timed(120, 0.1, 1), "ns")}
            if environ == "mpich" and pattern == "isend-recv":
                perf["p99"] = (timed(90, 4), "us")  # too noisy to bound: its pool's percentiles are not assertable
            cases.append(_case(rng, run, "HaloCheck", {"nodes": 1, "pattern": pattern}, environ, perf, calls))
        cases.append(_case(rng, run, "EagerCheck", {"nodes": 1}, environ,
                           {"eager_limit_shm": (4096 if run % 2 else 4104, "B"),
                            "eager_send_shm": (timed(3), "us")}, 0))
        osu = {"bandwidth_4096": (timed(900), "MB/s"), "latency_8": (timed(1.2), "us")}
        if run < 3:
            osu["bandwidth_65536"] = (timed(2000), "MB/s")  # in three runs only: fewer than five repeats
        if environ == "mpich":
            osu["latency_0"] = (0.0, "us")  # no log scale
        cases.append(_case(rng, run, "OsuCheck", {"benchmark": "osu_bw"}, environ, osu, 0))
    retried = {**cases[0], "result": "fail", "fail_reason": "performance"}
    skipped = {**cases[1], "display_name": "HaloCheck %nodes=2 %pattern=sendrecv", "nodes": 2, "result": "skip",
               "perfvalues": {}}
    build = {"display_name": "JitterbenchBuild ~local:default+openmpi", "system": "local", "partition": "default",
             "environ": "openmpi", "result": "pass", "fixture": True}
    report = {"session_info": {"version": "4.10.4", "time_start_unix": 1795318686 + 86400 * (run // 3) + 3600 * run,
                               "uuid": f"run-{run}", "hostname": "vm",
                               "cmdline": "/work/main/.venv/bin/reframe -C systems/config.py --mode quick -r"},
              "runs": [{"testcases": [retried, skipped, build, *cases[1:]]}, {"testcases": [cases[0]]}]}
    path = folder / f"run-{run}" / "report.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1))
    return path


def built(folder: Path, **rule) -> str:
    """The file `jitterbench reference` writes from the runs, as text."""
    paths = [run_report(folder, run) for run in range(RUNS)]
    return references.dump(reference_build.build(paths, "local", "golden", **rule))


def test_the_rule_builds_the_pinned_file_byte_for_byte(tmp_path, monkeypatch):
    monkeypatch.setattr(checkout, "commit", lambda: COMMIT)
    assert built(tmp_path) == BUILT.read_text()


if __name__ == "__main__":  # writes the pinned file again, from the rule as it is now
    import tempfile
    checkout.commit = lambda: COMMIT
    with tempfile.TemporaryDirectory() as folder:
        BUILT.write_text(built(Path(folder)))
    print(f"wrote {BUILT}", file=sys.stderr)

"""The reference files the project ships (reference_data/): each made by the stated rule, each
covering the suite it is for."""
from __future__ import annotations

import re

import pytest

from support.reframe_runs import REPO


PER_CALL = ("max", "avg", "p99", "t_max")  # the per-call statistics every per-call record asserts
HALO_VARIABLES = {f"{q}_{p}_{size}" for q in (*PER_CALL, "jitter") for size in (4096, 40960)
                  for p in ("two-phase", "irecv-isend", "isend-recv", "sendrecv")}
PINGPONG_VARIABLES = {f"{q}_{mode}_{size}_n{n}" for q in ("cycle", "speed") for size in (8, 4096, 65536)
                      for n in (1, 8) for mode in ("send", "isend", "ssend", "issend")}
TORUS_VARIABLES = {f"{q}_{p}_{size}" for q in (*PER_CALL, "bandwidth") for size in (1024, 16384)
                   for p in ("phases", "sendrecv", "isend", "issend", "ibsend")}


@pytest.mark.unit
def test_committed_local_references_are_made_by_the_rule_and_cover_the_quick_suite():
    """reference_data/local.yaml: ten clean quick runs (at least ci/main.sh's baseline of five) by the
    stated rule, for a verdict in two attempts, with the fingerprint of the machine type; every variable of the quick
    suite there, every noisy one listed."""
    from jitterbench import fingerprint, references
    doc = references.load(REPO / "reference_data" / "local.yaml")
    prov, fp = doc["provenance"], doc["fingerprint"]
    # ten runs; a case inconclusive in one (a launch disturbed through every try) is a repeat fewer
    assert str(prov["repeats"]).split("-")[-1] == "10"
    assert (prov["false_alarm_rate"], prov["modes"], prov["calls"]) == (0.01, ["quick"], [100])
    assert (prov["attempts"], prov["false_alarm_rate_per_attempt"]) == (2, 0.1)  # as ci/main.sh judges
    assert "/work" not in (REPO / "reference_data" / "local.yaml").read_text()
    assert fp["cpu"] and all(re.fullmatch(r".+; \d+ CPUs", cpu) for cpu in fp["cpu"])
    # the hardware fact by fact (a hypervisor names every EPYC host alike), and the node judged first
    assert fp["hardware"] and all({"vendor", "family", "model", "stepping", "l2", "l3", "cpus", "hypervisor"} <=
                                  set(fingerprint.hardware_facts(h)) for h in fp["hardware"])
    assert prov["node_figures"]["false_alarm_rate"] == 0.01 and prov["node_figures"]["attempts"] == 1
    assert sorted(fp["mpi_library"]) == sorted(fp["transport"]) == ["intelmpi", "mpich", "openmpi"]
    # each case the median of the main job's launches, 1 in each of 10 rounds; the checks that run once, once
    assert {check: fp["launches"][check] for check in ("HaloCheck", "JacobiCheck", "EagerCheck", "NoiseCheck")} == {
        "HaloCheck": ["10x1"], "JacobiCheck": ["10x1"], "EagerCheck": [1], "NoiseCheck": [1]}
    quick = {"HaloCheck": ({v for v in HALO_VARIABLES if "_isend-recv_" in v}, ("row", "bunched")),
             "PingPongCheck": ({v for v in PINGPONG_VARIABLES if "_send_" in v and v.endswith("_n1")}, ("sizes",)),
             "TorusCheck": ({v for v in TORUS_VARIABLES if "_isend_" in v}, ((1, 0),))}
    for environ in ("openmpi", "mpich", "intelmpi"):
        for check, (variables, leaves) in quick.items():
            for leaf in leaves:
                node = doc[check]["local:default"][environ][1][2]["block"][1]["default"]
                for key in leaf if isinstance(leaf, tuple) else (leaf,):
                    node = node[key]
                # and the node's own figures, bounded: its compute probe, and its cores' round trip over launches
                assert set(node) - set(fingerprint.NODE_FIGURES) == variables, (check, environ, leaf)
                assert node["node_probe_us"][2] is not None and "node_pair_ns" in node, (check, environ, leaf)
    # the noisy ones: unbounded in the file, each listed with its slowdown above the limit
    for item in doc["not_assertable"]:
        node = doc[item["check"]]
        for key in item["at"]:
            node = node[key]
        assert node[item["variable"]][1:3] == [None, None]
        assert item["detectable_slowdown"] is None or item["detectable_slowdown"] > prov["max_detectable"]

    def count(node):
        return sum(count(v) for v in node.values()) if isinstance(node, dict) else (node[1:3] != [None, None])
    bounded = sum(count({k: v for k, v in doc[c].items() if k != "$index"}) for c in doc if c not in references.SECTIONS)
    assert bounded == prov["bounded"]


@pytest.mark.unit
def test_committed_torus_references_are_made_by_the_rule_and_hold_the_contention_test_s_variable():
    """reference_data/torus.yaml: seven quick runs of 5 rounds of 2 launches on the ring of six by the
    stated rule, with its fingerprint (three lost Open MPI cases to a crash at start-up: 5-7 repeats);
    the link pattern's slowdown at 3 pairs that test_contention.py checks against it."""
    from jitterbench import references
    text = (REPO / "reference_data" / "torus.yaml").read_text()
    doc = references.load(REPO / "reference_data" / "torus.yaml")
    prov, fp = doc["provenance"], doc["fingerprint"]
    assert (prov["system"], prov["false_alarm_rate"], prov["modes"], prov["repeats"]) == ("torus", 0.01, ["quick"], "5-7")
    assert fp["launches"] == {"ContentionCheck": ["5x2"]}
    assert "/work" not in text and set(fp["mpi_library"]) == set(fp["transport"]) == {"openmpi", "intelmpi"}
    link = doc["ContentionCheck"]["torus:links"]["openmpi"][6][1]["block"][1]["default"]["link"]
    assert link["slowdown_65536_d3"][0] > 1 and link["latency_65536_d3"][0] > 0
    listed = {(i["check"], tuple(i["at"]), i["variable"]) for i in doc["not_assertable"]}
    assert len(listed) == len(doc["not_assertable"]) == prov["asserted"] - prov["bounded"]


@pytest.mark.unit
def test_committed_vcluster_references_are_made_by_the_rule_and_cover_the_quick_suite():
    """reference_data/vcluster.yaml: five quick runs on the 3-node virtual cluster by the stated
    rule, with its fingerprint; the quick suite's halo and ping-pong variables (one pattern or send
    mode a run, every size: systems/config.py, QUICK) at 1 to 3 nodes for every MPI."""
    from jitterbench import references
    text = (REPO / "reference_data" / "vcluster.yaml").read_text()
    doc = references.load(REPO / "reference_data" / "vcluster.yaml")
    prov, fp = doc["provenance"], doc["fingerprint"]
    assert (prov["system"], prov["false_alarm_rate"], prov["modes"]) == ("vcluster", 0.01, ["quick"])
    assert str(prov["repeats"]).split("-")[-1] == "5" and "/work" not in text
    assert {"openmpi", "mpich", "intelmpi"} <= set(fp["mpi_library"]) and set(fp["transport"]) == set(fp["mpi_library"])
    halo_quick = {v for v in HALO_VARIABLES if "_isend-recv_" in v}
    pingpong_quick = {v for v in PINGPONG_VARIABLES if "_send_" in v and v.endswith("_n1")}
    for environ in ("openmpi", "mpich", "intelmpi"):
        for nodes in (1, 2, 3):
            for placement in ("row", "bunched"):
                halo = doc["HaloCheck"]["vcluster:vc"][environ][nodes][2]["block"][1]["default"][placement]
                assert set(halo) == halo_quick
            pingpong = doc["PingPongCheck"]["vcluster:vc"][environ][nodes][2]
            for distribution in ("block", "cyclic") if nodes > 1 else ("block",):
                assert set(pingpong[distribution][1]["default"]["sizes"]) == pingpong_quick
    # every variable either bounded or listed as not assertable, with its reason
    listed = {(i["check"], tuple(i["at"]), i["variable"]) for i in doc["not_assertable"]}
    for item in doc["not_assertable"]:
        node = doc[item["check"]]
        for key in item["at"]:
            node = node[key]
        assert node[item["variable"]][1:3] == [None, None]
    assert len(listed) == len(doc["not_assertable"])


@pytest.mark.unit
def test_every_acceptance_job_runs_as_its_system_s_references_were_made():
    """ci/gitlab-ci.yml: each system's acceptance job makes its figures the median of what its
    reference file's were (JB_ROUNDS, JB_LAUNCHES: the job's own, else the pipeline's, else the
    defaults), or no reference of the file would judge it (fingerprint.differences)."""
    import yaml

    from jitterbench import fingerprint, references, settings
    pipeline = yaml.safe_load((REPO / "ci" / "gitlab-ci.yml").read_text())
    defaults = {name: str(v["value"]) if isinstance(v, dict) else str(v) for name, v in pipeline["variables"].items()}
    jobs = {name.split(":", 1)[1]: job for name, job in pipeline.items() if name.startswith("acceptance:")}
    assert sorted(jobs) == ["local", "vcluster"]
    for system, job in jobs.items():
        env = {**defaults, **{name: str(v) for name, v in job.get("variables", {}).items()}}
        fp = references.load(REPO / "reference_data" / f"{system}.yaml")["fingerprint"]
        made = fp["launches"]["HaloCheck"] if "launches" in fp else [1]
        assert fingerprint.made_of(settings.launches(env), settings.rounds(env)) in made, system

"""The papers' machines: what each paper states (reference_data/<system>.yaml, `stated`)
and their ReFrame systems (systems/papers/hpce.py ... xt3.py), launchers and references."""
from __future__ import annotations

import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from conftest import folder
from jitterbench import references
from jitterbench.harness.topology import read_shape

REPO = Path(__file__).resolve().parents[1]
REFERENCE_DIR = REPO / "reference_data"
PAPER_DIR = REPO.parent / "shared" / "papers"
REFRAME = Path(sys.executable).with_name("reframe")

# each paper, by the title its reference files' provenance gives, and the files made from it
PAPERS = {
    "Switch “Jitter”": ("hpce", "c1a"),
    "An evaluative study on the effect of contention on message latencies in large supercomputers": ("bgp", "xt3"),
    "Exchanging multiple messages via MPI": ("hpcx",),
    "Statistical Analysis of Communication Time on the IBM SP2": ("sp2",),
    "Performance and cost of HPC networks": ("lanl-ib",),
}


def paper_text(title):
    """The text of the paper of that title among the shared papers (the project cites a paper by
    its authors, title and year, never by the file it was read from)."""
    (text,) = [t for p in sorted(PAPER_DIR.glob("*.txt")) if title in (t := p.read_text())]
    return text


# the papers' machines in the ReFrame configuration: cores per node (max_tasks_per_node),
# launcher, the network transport and the variable that sets its eager limit
SYSTEMS = {
    "hpce": (16, "poe", "switch", "MP_EAGER_LIMIT"),
    "c1a": (32, "poe", "switch", "MP_EAGER_LIMIT"),
    "hpcx": (8, "poe", "switch", "MP_EAGER_LIMIT"),
    "sp2": (1, "poe", "switch", "MP_EAGER_LIMIT"),
    "bgp": (4, "bgp-mpirun", "torus", "DCMF_EAGER"),
    "xt3": (2, "yod", "torus", "MPICH_MAX_SHORT_MSG_SIZE"),
}
# where a paper states the cores (or processors) per node: that file's entry
STATED_CORES = {"hpce": "cores-per-node", "c1a": "cores-per-node", "hpcx": "lpar-smp"}
# number words the papers use for small numbers
WORDS = {0: ("zero",), 1: ("one", "once", "single"), 2: ("two", "dual", "double", "twice"), 3: ("three",),
         4: ("four",), 5: ("five",), 6: ("six",), 8: ("eight",)}


def stated(system):
    return {e["id"]: e for e in references.stated(references.load(REFERENCE_DIR / f"{system}.yaml"))}


def by_metric(system, metric):
    return [e for e in stated(system).values() if e.get("metric") == metric]


@pytest.mark.unit
@pytest.mark.parametrize("path", sorted(REFERENCE_DIR.glob("*.yaml")), ids=lambda p: p.stem)
def test_every_reference_file_loads(path):
    assert references.load(path)["provenance"]["system"] == path.stem


@pytest.mark.unit
def test_every_paper_file_says_where_its_paper_states_each_value():
    paper_files = {p.stem for p in REFERENCE_DIR.glob("*.yaml")
                   if references.load(p)["provenance"]["source"] == "paper"}
    assert paper_files == {s for systems in PAPERS.values() for s in systems}
    for title, systems in PAPERS.items():
        for system in systems:
            doc = references.load(REFERENCE_DIR / f"{system}.yaml")
            assert doc["provenance"]["title"].startswith(title)
            entries = references.stated(doc)
            assert entries, f"{system}.yaml states nothing"
            assert all(e["where"] and ".txt" not in e["where"] for e in entries), system


@pytest.mark.process
def test_no_file_cites_a_paper_by_its_file_name():
    """The project cites a paper by its authors, title and year: the names of the files its text
    was read from (NNN_<hash>.txt) mean nothing at a site."""
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout.split(b"\0")
    named = re.compile(rb"\b\d{3}_[0-9a-f]{16}\.txt")
    assert named.search(b"where: 003_" + b"1fe4774c09b49939.txt, Table 1")  # the rule sees one (split: not one here)
    citing = [name.decode() for name in tracked if name and (REPO / name.decode()).is_file()
              and named.search((REPO / name.decode()).read_bytes())]
    assert citing == []


@pytest.mark.unit
@pytest.mark.skipif(not PAPER_DIR.is_dir(), reason=f"the papers are not at {PAPER_DIR}")
def test_every_stated_value_is_in_its_paper():
    """Copied, not invented: each number appears in the text its entry names, as digits
    (thousands separators and the slides' doubled glyphs allowed) or as a number word."""
    for title, systems in PAPERS.items():
        text = re.sub(r"(?<=\d),(?=\d{3})", "", paper_text(title))
        for system in systems:
            for entry in stated(system).values():
                value = entry["value"]
                if value is None:
                    continue
                if isinstance(value, float) and not value.is_integer():
                    forms = [rf"(?<![\d.])(?:{re.escape(repr(value))})+0*(?!\d)"]
                else:
                    forms = [rf"(?<![\d.]){int(value)}(?!\d)"] + [rf"\b{w}\b" for w in WORDS.get(int(value), ())]
                assert any(re.search(f, text, re.IGNORECASE) for f in forms), (system, entry["id"], value)


@pytest.mark.unit
def test_key_values_are_the_papers():
    throughput = {e["at"]["tasks"]: e["value"] for e in by_metric("sp2", "alltoall_throughput")}
    assert throughput == {2: 40.991, 4: 40.928, 8: 40.533, 16: 39.436, 32: 38.970}
    assert {e["at"]["msg_size"] for e in by_metric("sp2", "alltoall_throughput")} == {1048576}
    sp2 = stated("sp2")
    assert (sp2["exchange-mean"]["value"], sp2["exchange-sd"]["value"], sp2["exchange-cv"]["value"]) == (173, 58, 0.34)
    assert sp2["exchange-mean"]["at"] == {"msg_size": 1024}

    hpcx = stated("hpcx")
    assert [e["value"] for e in by_metric("hpcx", "pingpong_peak_speed")] == [300]
    assert hpcx["eager-limit-max"]["value"] == 65536 and hpcx["eager-limit-max"]["unit"] == "bytes"

    lanl = stated("lanl-ib")
    assert (lanl["mvapich-latency"]["value"], lanl["mvapich-latency"]["unit"]) == (4, "us")
    assert (lanl["mvapich-bandwidth"]["value"], lanl["mvapich-bandwidth"]["unit"]) == (945, "MB/s")

    for system in ("bgp", "xt3"):
        assert [e["value"] for e in by_metric(system, "contention_max_slowdown")] == [8]
    for system in ("hpce", "c1a"):
        off_node = {e["at"]["placement"]: e["value"] for e in by_metric(system, "halo_off_node_per_node")}
        assert off_node == {"row": 32, "bunched": 16}


@pytest.mark.unit
def test_values_the_text_gives_only_in_figures_are_null_and_say_so():
    for system in ("hpce", "c1a"):
        figures = [e for e in stated(system).values() if e["value"] is None]
        assert figures and all("figure" in e["note"] for e in figures)
    assert stated("hpce")["p5-4k-max-avg"]["value"] is None
    assert stated("c1a")["p6-40k-max-avg"]["value"] is None


@pytest.mark.unit
def test_sp2_reframe_references_are_table_1():
    doc = references.load(REFERENCE_DIR / "sp2.yaml")
    entry = doc["AlltoallCheck"]
    assert entry["$index"] == ["$partition", "nodes", "tasks_per_node"]
    refs = {nodes: leaf[1]["throughput_pairwise_1048576"] for nodes, leaf in entry["sp2:hps"].items()}
    assert refs == {e["at"]["tasks"]: [e["value"], None, None, "MB/s"]
                    for e in by_metric("sp2", "alltoall_throughput")}


@pytest.fixture(scope="module")
def site_configuration(tmp_path_factory):
    """systems/config.py as ReFrame reads it, its output folder a temporary one.  The
    environment is restored afterwards: system modules set variables (SLURM_CONF)."""
    saved = dict(os.environ)
    os.environ["JB_OUTPUT"] = str(tmp_path_factory.mktemp("out"))
    try:
        spec = importlib.util.spec_from_file_location("jitterbench_config", REPO / "systems" / "config.py")
        config = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(config)
    finally:
        os.environ.clear()
        os.environ.update(saved)
    return config.site_configuration


@pytest.mark.unit
@pytest.mark.parametrize("name", SYSTEMS)
def test_each_paper_system_is_configured_as_the_paper_states(site_configuration, name):
    cores, launcher, network, eager_var = SYSTEMS[name]
    system = next(s for s in site_configuration["systems"] if s["name"] == name)
    assert system["hostnames"] == ["^never-selected-by-hostname$"]  # only with --system
    (partition,) = system["partitions"]
    extras = partition["extras"]
    assert (extras["max_tasks_per_node"], partition["launcher"]) == (cores, launcher)
    if name in STATED_CORES:
        assert stated(name)[STATED_CORES[name]]["value"] == cores
    assert network in extras["transports"] and ("shm" in extras["transports"]) == (cores > 1)
    (environ,) = [e for e in site_configuration["environments"] if e["target_systems"] == [name]]
    assert environ["name"] in partition["environs"]
    assert environ["extras"]["eager_vars"][network] == eager_var
    if "topology" in extras:  # ContentionCheck runs on every node of the topology file
        assert "topology" in partition["features"]
        assert extras["max_nodes"] == math.prod(read_shape(extras["topology"]).dims)


@pytest.mark.unit
def test_node_counts_are_the_papers_and_local_stays_last(site_configuration):
    assert site_configuration["systems"][-1]["name"] == "local"  # it matches any host
    nodes = {s["name"]: s["partitions"][0]["extras"]["max_nodes"] for s in site_configuration["systems"]}
    assert nodes["sp2"] == stated("sp2")["processors"]["value"] == 32
    hpcx = stated("hpcx")
    assert nodes["hpcx"] == hpcx["frames"]["value"] * hpcx["lpars-per-frame"]["value"] == 160
    assert (nodes["bgp"], nodes["xt3"]) == (512, 192)


def launch(name, tasks, per_node):
    from reframe.core.backends import getlauncher

    import jitterbench.harness.configuration  # noqa: F401  registers the launchers
    return getlauncher(name)().command(SimpleNamespace(num_tasks=tasks, num_tasks_per_node=per_node))


@pytest.mark.unit
def test_launchers_put_the_jobs_shape_where_each_launcher_takes_it():
    assert launch("poe", 32, 16) == ["MP_PROCS=32", "MP_NODES=2", "MP_TASKS_PER_NODE=16", "poe"]
    assert launch("bgp-mpirun", 2048, 4) == ["mpirun", "-np", "2048", "-mode", "VN", "-env_all"]
    assert launch("bgp-mpirun", 512, 1)[4] == "SMP" and launch("bgp-mpirun", 1024, 2)[4] == "DUAL"
    with pytest.raises(Exception, match="1, 2 or 4 tasks per node, not 3"):
        launch("bgp-mpirun", 6, 3)
    assert launch("yod", 192, 1) == ["yod", "-np", "192"]
    assert launch("yod", 384, 2) == ["yod", "-VN", "-np", "384"]


def dry_run(tmp_path, system, *args, references_dir=REFERENCE_DIR):
    """A ReFrame --dry-run (job scripts written, nothing run) on a paper's system: its
    job scripts (the launch line last) and the run report's test cases."""
    env = dict(os.environ, JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX=str(folder(tmp_path / "prefix") / "{environ}"),
               JB_REFERENCE_DIR=str(references_dir))
    proc = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", system, *args, "--dry-run"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    scripts = [p.read_text().splitlines() for p in (tmp_path / "out" / "stage" / system).rglob("rfm_job.sh")]
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    cases = [c for run in report["runs"] for c in run["testcases"] if not c.get("fixture")]
    return scripts, cases


@pytest.mark.reframe
def test_hpcx_job_sets_mp_eager_limit_and_launches_with_poe(tmp_path):
    scripts, cases = dry_run(
        tmp_path, "hpcx", "-c", "reframe_checks/halo.py", "-c", "reframe_checks/eager.py", "-n", "HaloCheck|EagerCheck",
        "-P", "nodes=2", "-P", "tasks_per_node=4", "-P", "eager_limit=65536", "-P", "placement=row",
        "-S", "HaloCheck.patterns=sendrecv", "-S", "HaloCheck.msg_sizes=4096",
        references_dir=folder(tmp_path / "none"))
    (halo,) = [lines for lines in scripts if "jb-halo " in lines[-1]]
    assert "export MP_EAGER_LIMIT=65536" in halo
    assert halo[-1].startswith(f"sh launches.sh 1 3 - MP_PROCS=8 MP_NODES=2 MP_TASKS_PER_NODE=4 poe {tmp_path}/prefix/ibm-pe/bin/jb-halo "
                               "--placement row --pattern sendrecv --size 4096")
    assert {c["display_name"].split()[0]: c["eager_var"] for c in cases} == {
        "HaloCheck": "MP_EAGER_LIMIT", "EagerCheck": "MP_EAGER_LIMIT"}
    # across nodes the eager check probes both transports, the switch off-node
    (eager,) = [c for c in cases if c["display_name"].startswith("EagerCheck")]
    assert set(eager["perfvalues"]) == {"hpcx:switch2:eager_limit_shm", "hpcx:switch2:eager_limit_switch"}


@pytest.mark.reframe
def test_an_eager_limit_is_set_on_the_fabrics_the_job_crosses_only(tmp_path):
    """The XT3's MPT declares no shared-memory eager variable: one task a node crosses only the
    torus, so the case runs and sets the torus's variable; two a node would cross shared memory too,
    so that case is not taken."""
    scripts, cases = dry_run(
        tmp_path, "xt3", "-c", "reframe_checks/pingpong.py", "-n", "PingPongCheck", "-P", "nodes=2",
        "-P", "tasks_per_node=1,2", "-P", "eager_limit=65536", "-P", "distribution=block", "-P", "sweep=sizes",
        references_dir=folder(tmp_path / "none"))
    assert [(c["tasks_per_node"], c["eager_var"]) for c in cases] == [(1, "MPICH_MAX_SHORT_MSG_SIZE")]
    (script,) = scripts
    assert "export MPICH_MAX_SHORT_MSG_SIZE=65536" in script and script[-1].startswith("sh launches.sh 1 3 - yod -np 2 ")


@pytest.mark.reframe
def test_sp2_references_reach_reframe_as_table_1(tmp_path):
    """Its quick mode: Table 1's pairwise all-to-all of 1 MB on 2 to 32 processors, one a node."""
    scripts, cases = dry_run(tmp_path, "sp2", "--mode", "quick")
    launches = [lines[-1] for lines in scripts if "jb-alltoall " in lines[-1]]
    assert {line.split(" poe ")[0] for line in launches} == {
        f"sh launches.sh 1 3 - MP_PROCS={n} MP_NODES={n} MP_TASKS_PER_NODE=1" for n in (2, 4, 8, 16, 32)}
    assert all(" --method pairwise --size 1048576 " in line for line in launches), launches
    references_used = {c["nodes"]: c["perfvalues"]["sp2:hps:throughput_pairwise_1048576"][1] for c in cases}
    assert references_used == {2: 40.991, 4: 40.928, 8: 40.533, 16: 39.436, 32: 38.970}

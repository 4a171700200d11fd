"""`jitterbench site new`: a site's ReFrame system and Spack files written in one step, and the
folders every system is loaded from (jitterbench/harness/systems.py)."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import checkout_copy, command
from jitterbench import site
from jitterbench.harness import systems
from jitterbench import transports as T

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
ACME = ["--hostname", r"^acme-login\d+$", "--scheduler", "slurm", "--launcher", "srun", "--mpi", "openmpi",
        "--mpi", "intelmpi", "--network", "ib", "--partition", "compute:256:128", "--partition", "debug:4:64:--qos=debug"]


def jitterbench(*args, cwd=REPO):
    return subprocess.run([sys.executable, "-m", "jitterbench", *args], cwd=cwd, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.unit
def test_a_site_is_its_module_and_its_spack_files_as_the_configuration_and_spack_read_them(tmp_path):
    sites = tmp_path / "sites"
    sites.mkdir()
    written = site.new("acme", [r"^acme-login\d+$"], "slurm", "srun", ["openmpi", "intelmpi"], "ib",
                       ["compute:256:128", "debug:4:64:--qos=debug"], sites)
    assert written == [sites / "acme" / "packages.yaml", sites / "acme" / "definitions.yaml", sites / "acme.py"]
    assert sorted(p.name for p in sites.rglob("*")) == ["acme", "acme.py", "definitions.yaml", "packages.yaml"]
    (module,) = systems.load_systems([sites])
    system = module.SYSTEM
    assert (system["name"], system["hostnames"]) == ("acme", [r"^acme-login\d+$"])
    assert [(p["name"], p["scheduler"], p["launcher"], p["access"], p["extras"]["max_nodes"],
             p["extras"]["max_tasks_per_node"]) for p in system["partitions"]] == [
        ("compute", "slurm", "srun", ["-p compute"], 256, 128), ("debug", "slurm", "srun", ["--qos=debug"], 4, 64)]
    # the site contract (README): features and extras every check reads
    for partition in system["partitions"]:
        assert partition["features"] == ["mpi"] and partition["extras"]["transports"] == ["shm", "ib"]
        assert partition["environs"] == ["openmpi", "intelmpi"]
    # each environment's transports are known ones of its MPI, on the fabric they serve, with
    # their own eager-limit and device variables
    for environ in module.ENVIRONMENTS:
        extras = environ["extras"]
        assert environ["target_systems"] == ["acme"] and environ["cc"] == "mpicc" and environ["modules"] == []
        assert set(extras["transports"]) == {"shm", "ib"} and extras["family"] in T.ACCOUNT_VARS
        for fabric, name in extras["transports"].items():
            t = T.by_name(name)
            assert (t.fabric, t.mpi) == (fabric, extras["family"])
            assert extras["eager_vars"].get(fabric, t.eager_var) == t.eager_var
        # none of this machine's paths (the PyPI MPIs of .deps) reach a site
        assert not any(".deps" in str(v) for _, v in environ["env_vars"]), environ["env_vars"]
    # Spack: the MPIs as externals, never built, a compiler stated, and the matrix's MPIs
    packages = yaml.safe_load((sites / "acme" / "packages.yaml").read_text())["packages"]
    assert packages["mpi"] == {"buildable": False}
    for name in ("openmpi", "intel-oneapi-mpi", "gcc", "rdma-core", "autoconf", "libtool"):
        assert packages[name]["buildable"] is False and len(packages[name]["externals"]) == 1, name
    assert "mpich" not in packages
    assert packages["gcc"]["externals"][0]["spec"].startswith("gcc@") and "languages=" in packages["gcc"]["externals"][0]["spec"]
    assert set(packages["gcc"]["externals"][0]["extra_attributes"]["compilers"]) == {"c", "cxx"}
    assert "# SITE" in (sites / "acme" / "packages.yaml").read_text() and "# SITE" in (sites / "acme.py").read_text()
    assert yaml.safe_load((sites / "acme" / "definitions.yaml").read_text()) == {
        "definitions": [{"mpis": ["openmpi", "intel-oneapi-mpi"]}, {"imb": [site.IMB_SPEC]}, {"verbs": ["perftest"]}]}


@pytest.mark.unit
def test_a_tcp_site_builds_no_perftest_and_lists_no_rdma_libraries(tmp_path):
    site.new("plain", [], "local", "mpirun", ["mpich"], "tcp", ["one:1:8"], tmp_path)
    assert yaml.safe_load((tmp_path / "plain" / "definitions.yaml").read_text()) == {
        "definitions": [{"mpis": ["mpich"]}, {"imb": [site.IMB_SPEC]}, {"verbs": []}]}
    packages = yaml.safe_load((tmp_path / "plain" / "packages.yaml").read_text())["packages"]
    assert "rdma-core" not in packages and "perftest" not in packages
    (module,) = systems.load_systems([tmp_path])
    assert module.SYSTEM["hostnames"] == ["^never-selected-by-hostname$"]  # --system only
    assert module.SYSTEM["partitions"][0]["access"] == []  # the local scheduler takes no queue


@pytest.mark.unit
def test_a_slurm_without_accounting_gets_the_squeue_scheduler_that_waits_for_an_answer(tmp_path):
    """ReFrame's squeue takes every job for ended when squeue cannot reach the controller; a site
    that names it gets jb-squeue (jitterbench/harness/schedulers.py), which the configuration knows."""
    site.new("plain", [], "squeue", "srun", ["mpich"], "tcp", ["batch:4:8"], tmp_path)
    (module,) = systems.load_systems([tmp_path])
    (partition,) = module.SYSTEM["partitions"]
    assert (partition["scheduler"], partition["access"]) == ("jb-squeue", ["-p batch"])
    assert site._configuration().known_backend("scheduler", "jb-squeue")


@pytest.mark.parametrize("args, message", [
    (["Acme", *ACME], "site name 'Acme' must be a lower-case letter"),
    (["local", *ACME], "a system named 'local' exists already"),
    (["hpce", *ACME], "a system named 'hpce' exists already"),
    (["acme", *ACME, "--mpi", "mvapich"], "unknown MPI 'mvapich' (known: openmpi, mpich, intelmpi)"),
    (["acme", *ACME, "--mpi", "openmpi"], "an MPI is named twice"),
    (["acme", *ACME, "--partition", "big:many:4"], "partition 'big:many:4' is not NAME:MAX_NODES:MAX_TASKS_PER_NODE"),
    (["acme", *ACME, "--partition", "zero:0:4"], "nodes must be 1 to 10000000 and tasks per node 1 to 100000"),
    (["acme", *ACME, "--partition", "compute:2:2"], "a partition is named twice"),
    (["acme", *ACME, "--hostname", "(["], "hostname pattern '([' is not a regular expression"),
    (["acme", *ACME, "--scheduler", "cron"], "unknown scheduler 'cron'"),
    (["acme", *ACME, "--launcher", "ssh-loop"], "unknown launcher 'ssh-loop'"),
    (["acme", *ACME, "--network", "carrier-pigeon"], "unknown network 'carrier-pigeon' (known: tcp, ib)"),
])
@pytest.mark.unit
def test_bad_input_is_one_line_and_writes_nothing(args, message):
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in site.sites_folder().rglob("*") if p.is_file()}
    proc = command("site", "new", *args)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("jitterbench: error: "), proc.stderr
    assert message in proc.stderr, proc.stderr
    after = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in site.sites_folder().rglob("*") if p.is_file()}
    assert after == before


@pytest.mark.unit
def test_a_site_is_never_overwritten(tmp_path):
    (tmp_path / "acme.py").write_text("# the site's own\n")
    with pytest.raises(site.SiteError, match="a system named 'acme' exists already"):
        site.new("acme", [], "slurm", "srun", ["openmpi"], "tcp", ["p:1:1"], tmp_path)
    (tmp_path / "other").mkdir()  # a folder of that name, the site's Spack files'
    with pytest.raises(site.SiteError, match="a system named 'other' exists already"):
        site.new("other", [], "slurm", "srun", ["openmpi"], "tcp", ["p:1:1"], tmp_path)
    assert (tmp_path / "acme.py").read_text() == "# the site's own\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["acme.py", "other"]


@pytest.mark.unit
def test_a_write_that_fails_leaves_nothing_behind(tmp_path, monkeypatch):
    """The module is written last, and on a failure every file this call made goes (and its
    folder), temporary files included: ReFrame and Spack see a site whole or not at all."""
    real = site._write_new

    def failing(path, text):
        if path.suffix == ".py":
            raise site.SiteError(f"{path}: cannot write: No space left on device")
        real(path, text)
    monkeypatch.setattr(site, "_write_new", failing)
    with pytest.raises(site.SiteError, match="No space left"):
        site.new("acme", [], "slurm", "srun", ["openmpi"], "tcp", ["p:1:1"], tmp_path)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.unit
def test_the_systems_load_from_both_folders_with_local_last():
    modules = systems.load_systems()
    names = [m.SYSTEM["name"] for m in modules]
    assert names[-1] == "local" and set(names) == {p.stem for f in (site.sites_folder(), site.papers_folder()) for p in f.glob("*.py")}
    assert sorted(p.stem for p in site.papers_folder().glob("*.py")) == ["bgp", "c1a", "hpce", "hpcx", "sp2", "xt3"]
    # local is chosen by no hostname of its own: only as the fallback, and says so
    note = systems.fallback_note(modules, argv=["reframe"], environ={}, hostname="some-host")
    assert note.startswith("jitterbench: no site of systems/sites/ names host 'some-host'") and "'local'" in note
    assert systems.fallback_note(modules, argv=["/venv/bin/reframe", "--system", "local"], environ={}, hostname="h") is None
    assert systems.fallback_note(modules, argv=["/venv/bin/jitterbench", "plan"], environ={}, hostname="h") is None
    assert systems.fallback_note(modules, argv=["reframe"], environ={"RFM_SYSTEM": "vcluster"}, hostname="h") is None


@pytest.mark.unit
def test_a_site_whose_hostnames_match_comes_before_local_and_silences_the_note(tmp_path):
    site.new("acme", [r"^acme-login\d+$"], "slurm", "srun", ["openmpi"], "tcp", ["p:2:2"], tmp_path)
    modules = systems.load_systems([tmp_path, site.sites_folder()])
    assert [m.SYSTEM["name"] for m in modules][0] == "acme"
    assert systems.fallback_note(modules, argv=["reframe"], environ={}, hostname="acme-login3") is None


@pytest.mark.reframe
def test_reframe_lists_the_checks_of_a_site_written_by_the_command(tmp_path):
    """The README's one step in a copy of the checkout: the command, then ReFrame's listing,
    and `git status` shows the site's files and nothing else."""
    copy = checkout_copy(tmp_path / "checkout")
    made = jitterbench("site", "new", "acme", *ACME, cwd=copy)
    assert made.returncode == 0, made.stderr
    assert made.stdout.splitlines()[:4] == [f"jitterbench site new: checkout {copy}",
                                            f"wrote {copy}/systems/sites/acme/packages.yaml",
                                            f"wrote {copy}/systems/sites/acme/definitions.yaml",
                                            f"wrote {copy}/systems/sites/acme.py"]
    status = subprocess.run(["git", "status", "--porcelain"], cwd=copy, capture_output=True, text=True).stdout
    assert status.splitlines() == ["?? systems/sites/acme.py", "?? systems/sites/acme/"]
    listed = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "acme", "-l"], cwd=copy,
                            env={**os.environ, "JB_OUTPUT": str(tmp_path / "out")},
                            capture_output=True, text=True, timeout=600)
    assert listed.returncode == 0, listed.stdout[-2000:] + listed.stderr[-2000:]
    assert "selected system:   'acme'" in listed.stdout
    found = int(listed.stdout.split("Found ")[1].split()[0])
    assert found > 100, listed.stdout[-2000:]
    for check in ("PingPongCheck", "HaloCheck", "OsuCheck", "PerftestCheck"):
        assert f"- {check} " in listed.stdout, check
    assert "@acme:compute+openmpi" in listed.stdout or "~acme:compute+openmpi" in listed.stdout


@pytest.mark.process
def test_the_local_partition_runs_no_more_tasks_a_node_than_cpus_it_may_use():
    """Under an affinity of one CPU (a container's or a batch job's cpuset), the local partition
    takes one task a node, however many CPUs the machine has: the checks never oversubscribe."""
    probe = ("import importlib.util, sys; spec = importlib.util.spec_from_file_location('local', sys.argv[1]); "
             "local = importlib.util.module_from_spec(spec); spec.loader.exec_module(local); "
             "print(local.SYSTEM['partitions'][0]['extras']['max_tasks_per_node'])")
    done = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", probe, str(REPO / "systems" / "sites" / "local.py")],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"


@pytest.mark.reframe
def test_quick_stays_within_its_cap_at_any_site_size(tmp_path):
    """jitterbench plan for a site of 4096 and 64 nodes: the quick mode's cases are the same few at
    any size (two nodes; pairs and congestion at eight), within 15 minutes of each partition.
    (What the acceptance references cost: tests/test_first_day.py.)"""
    copy = checkout_copy(tmp_path / "checkout")
    made = jitterbench("site", "new", "huge", "--hostname", "^huge-login$", "--scheduler", "slurm", "--launcher",
                       "srun", "--mpi", "openmpi", "--mpi", "mpich", "--mpi", "intelmpi", "--network", "ib",
                       "--partition", "cpu:4096:128", "--partition", "small:64:64", cwd=copy)
    assert made.returncode == 0, made.stderr
    env = {**os.environ, "JB_OUTPUT": str(tmp_path / "out")}
    quick = subprocess.run([sys.executable, "-m", "jitterbench", "plan", "--system", "huge", "--mode", "quick"],
                           cwd=copy, env=env, capture_output=True, text=True, timeout=900)
    assert quick.returncode == 0, quick.stderr
    caps = [line for line in quick.stdout.splitlines() if line.startswith("quick cap 15 min a partition: ")]
    assert [line.split()[6] for line in caps] == ["huge:cpu", "huge:small"] and "OVER" not in quick.stdout, caps
    nodes = {int(n) for line in quick.stdout.splitlines()[2:] if line.endswith(tuple("0123456789"))
             for n in line.split()[2].split("-") if line.split()[0].endswith("Check")}
    assert max(nodes) <= 8, quick.stdout

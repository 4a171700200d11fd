"""Plan and list anywhere (issue 42): `jitterbench plan` shows ReFrame's own error, selects as
`reframe` does (SYSTEM:PARTITION, -n, -p, -S) and takes the system from the host name; a site
whose modules system this host lacks is listed and planned without modules, said once; the
quick mode leaves no check's variable unset."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from jitterbench import plan, site
from jitterbench.harness import systems

REPO = Path(__file__).resolve().parent.parent
REFRAME = Path(sys.executable).parent / "reframe"


def lmod_site(tmp_path, modules=()):
    """A site of `site new` under tmp_path/sites, its modules system Lmod, its Open MPI loaded by
    modules (systems/config.py would load it from systems/sites/)."""
    sites = tmp_path / "sites"
    sites.mkdir(parents=True)
    site.new("acme", [r"^acme-login\d+$"], "slurm", "srun", ["openmpi", "mpich"], "ib",
             ["compute:4:8", "debug:2:8"], sites)
    module = sites / "acme.py"
    text = module.read_text().replace('"modules_system": "nomod"', '"modules_system": "lmod"')
    module.write_text(text.replace('"openmpi": {"modules": []', f'"openmpi": {{"modules": {list(modules)!r}', 1))
    return sites


@pytest.mark.process
def test_plan_shows_reframe_s_own_error_in_one_line(tmp_path):
    fake = tmp_path / "reframe"
    fake.write_text("#!/bin/sh\necho '[ReFrame Setup]'\n"
                    "printf '\\033[31mERROR: failed to load configuration: could not find a sane Lmod installation: "
                    "environment variable LMOD_CMD is not defined\\033[0m\\n' >&2\necho 'Log file(s) saved' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(RuntimeError) as e:
        plan.describe(REPO / "systems" / "config.py", "acme", "quick", reframe=str(fake))
    assert str(e.value) == ("ReFrame could not list the checks: ERROR: failed to load configuration: could not find "
                            "a sane Lmod installation: environment variable LMOD_CMD is not defined")


@pytest.mark.unit
def test_plan_takes_the_system_reframe_would_choose_here():
    config = {"systems": [{"name": "acme", "hostnames": [r"^acme-login\d+$"]}, {"name": "local", "hostnames": [".*"]}]}
    assert plan.host_system(config, "acme-login2") == "acme"
    assert plan.host_system(config, "laptop") == "local"
    with pytest.raises(plan.PlanError, match="no system's hostnames match host 'laptop': name one with --system"):
        plan.host_system({"systems": config["systems"][:1]}, "laptop")


@pytest.mark.unit
def test_plan_keeps_the_partition_and_environments_selected():
    config = {"systems": [{"name": "s", "partitions": [
        {"name": "a", "environs": ["openmpi", "mpich"], "features": ["mpi"]},
        {"name": "b", "environs": ["openmpi"], "features": ["mpi"]}]}],
        "environments": [{"name": "openmpi", "features": ["mpi"]}, {"name": "mpich", "features": ["mpi"]}]}
    variant = {"@class": "HaloCheck", "display_name": "HaloCheck %nodes=1", "valid_systems": ["+mpi"],
               "valid_prog_environs": ["+mpi"], "nodes": 1}
    every = plan.cases(config, "s", [variant], {})
    assert [(c.partition, c.environ) for c in every] == [("s:a", "openmpi"), ("s:a", "mpich"), ("s:b", "openmpi")]
    chosen = plan.cases(config, "s", [variant], {}, partition="a", prgenvs=["mpi"])
    assert [(c.partition, c.environ) for c in chosen] == [("s:a", "mpich")]


@pytest.mark.unit
def test_a_site_without_its_modules_system_here_is_read_without_modules_and_said_once(tmp_path, monkeypatch):
    monkeypatch.delenv("LMOD_CMD", raising=False)  # ReFrame's test of a sane Lmod (reframe/core/modules.py)
    sites = lmod_site(tmp_path, ["openmpi/4.1.6"])
    said = []
    (acme,) = systems.load_systems([sites], argv=["reframe", "--system", "acme", "-l"], say=said.append)
    assert acme.SYSTEM["modules_system"] == "nomod"
    assert said == ["jitterbench: could not find a sane Lmod installation: environment variable LMOD_CMD is not "
                    "defined: system(s) acme read without modules here (a run there that loads modules needs them)"]
    said.clear()  # a run that loads modules keeps the site's modules system: ReFrame refuses it in its own words
    (acme,) = systems.load_systems([sites], argv=["reframe", "--system", "acme", "-r"], say=said.append)
    assert acme.SYSTEM["modules_system"] == "lmod" and said == []
    # a run that loads none needs no modules system: the same site without modules, in a folder of its own
    (acme,) = systems.load_systems([lmod_site(tmp_path / "no-modules")], argv=["reframe", "--system", "acme", "-r"],
                                say=said.append)
    assert acme.SYSTEM["modules_system"] == "nomod" and len(said) == 1


@pytest.mark.reframe
def test_a_site_with_lmod_lists_and_plans_off_cluster_and_quick_sets_no_variable_a_check_lacks(tmp_path):
    """reframe -l and jitterbench plan on a copy of the checkout holding a two-partition Lmod site,
    without Lmod; the quick listing warns of no variable left unset."""
    copy = tmp_path / "checkout"  # what a checkout is (jitterbench/checkout.py) and the configuration reads
    copy.mkdir()
    for folder in ("systems", "reframe_checks", "reference_data", "src"):
        shutil.copytree(REPO / folder, copy / folder, ignore=shutil.ignore_patterns("__pycache__"))
    sites = lmod_site(tmp_path)
    for entry in sites.iterdir():
        subprocess.run(["cp", "-r", str(entry), str(copy / "systems" / "sites" / entry.name)], check=True)
    env = {k: v for k, v in os.environ.items() if k != "LMOD_CMD"} | {"JB_OUTPUT": str(tmp_path / "out")}
    listing = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "acme", "-l"], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=600)
    assert listing.returncode == 0, listing.stderr
    assert listing.stderr.count("LMOD_CMD is not defined") == 1 and "- HaloCheck" in listing.stdout
    planned = subprocess.run([sys.executable, "-m", "jitterbench", "plan", "-C", str(copy / "systems" / "config.py"),
                              "--system", "acme:debug", "--mode", "quick", "-n", "HaloCheck", "-p", "openmpi", "--cases"],
                             env=env, capture_output=True, text=True, timeout=600)
    assert planned.returncode == 0, planned.stderr
    assert "system acme:debug, mode quick" in planned.stdout and "HaloCheck" in planned.stdout
    assert "@acme:compute" not in planned.stdout and "mpich" not in planned.stdout
    quick = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "local", "--mode", "quick", "-l"],
                           cwd=copy, env=env, capture_output=True, text=True, timeout=600)
    assert quick.returncode == 0 and "were not set" not in quick.stdout + quick.stderr, quick.stdout[-2000:]
    # a site file that does not load: named in one line, the others list; a host no site names: a stop
    (copy / "systems" / "sites" / "broken.py").write_text("SYSTEM = {\n")
    listed = subprocess.run([str(REFRAME), "-C", "systems/config.py", "--system", "local", "-l"], cwd=copy, env=env,
                            capture_output=True, text=True, timeout=600)
    assert listed.returncode == 0 and "- HaloCheck" in listed.stdout, listed.stderr
    assert [line for line in listed.stderr.splitlines() if "broken.py" in line] == [
        line for line in listed.stderr.splitlines() if line.startswith("jitterbench: ") and "Lmod" not in line]
    assert "Traceback" not in listed.stderr and listed.stderr.count("broken.py: SyntaxError") == 1
    stopped = subprocess.run([str(REFRAME), "-C", "systems/config.py", "-l"], cwd=copy, env=env,
                             capture_output=True, text=True, timeout=600)
    assert stopped.returncode != 0 and "Traceback" not in stopped.stderr
    assert "no site of systems/sites/ (acme) names host" in stopped.stderr and "--system local" in stopped.stderr

"""The Spack environment (spack.yaml), the project package and the ReFrame switch to its views.

Everywhere: the YAML's shape, the package file's syntax, and the checks taking
their binaries from a view folder.  Where Spack is (SPACK_ROOT set): a copy of
the environment concretizes with the `local` externals, installs jitterbench
for Open MPI, and one benchmark runs from its view.  CI has no Spack (it is on
no package registry), so that test skips and says so.
"""
from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from conftest import install_prefix
from jitterbench import mpi as mpis

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
PACKAGE = REPO / "spack-repo" / "spack_repo" / "jitterbench" / "packages" / "jitterbench" / "package.py"


@pytest.fixture(scope="module")
def env():
    return yaml.safe_load((REPO / "spack.yaml").read_text())["spack"]


def definitions(env, system):
    """The definitions Spack takes for JB_SPACK_SYSTEM=system: same-named lists concatenate,
    a `when` is evaluated with `env`, as Spack evaluates it."""
    taken = {}
    for d in env["definitions"]:
        when = d.get("when")
        if when is None or eval(when, {}, {"env": {"JB_SPACK_SYSTEM": system}}):
            for name, specs in d.items():
                if name != "when":
                    taken.setdefault(name, []).extend(specs)
    return taken


@pytest.mark.unit
def test_the_matrix_builds_every_benchmark_for_every_mpi_provider_a_system_has(env):
    local, site = definitions(env, "local"), definitions(env, "mysite")
    assert [s.split("@")[0] for s in local["benchmarks"]] == ["jitterbench", "osu-micro-benchmarks"]
    # Intel MPI and perftest are a site's: the PyPI Intel MPI lacks the oneAPI layout, and
    # local takes Debian's perftest from PATH
    assert local["mpis"] == ["openmpi", "mpich"] and local["verbs"] == []
    assert definitions(env, "vcluster") == local
    assert site["mpis"] == ["openmpi", "mpich", "intel-oneapi-mpi"] and site["verbs"] == ["perftest"]
    assert env["specs"] == [{"matrix": [["$benchmarks"], ["$^mpis"]]}, "$verbs"]
    assert env["concretizer"]["unify"] is False


@pytest.mark.unit
def test_the_project_repo_and_the_develop_path_are_this_checkout(env):
    repo = REPO / env["repos"]["jitterbench"]
    assert yaml.safe_load((repo / "repo.yaml").read_text())["repo"] == {"namespace": "jitterbench", "api": "v2.2"}
    assert (repo / "packages" / "jitterbench" / "package.py") == PACKAGE
    develop = env["develop"]["jitterbench"]
    assert develop["spec"] == "jitterbench@=main"
    assert (REPO / develop["path"] / "CMakeLists.txt").exists()


def included(env, system):
    """The include paths Spack takes for JB_SPACK_SYSTEM=system (None: the variable unset)."""
    variables = {} if system is None else {"JB_SPACK_SYSTEM": system}
    return [i["path"].replace("$JB_SPACK_SYSTEM", system or "") for i in env["include"]
            if eval(i["when"], {}, {"env": variables})]


@pytest.mark.unit
def test_each_system_includes_its_own_folder_and_local_s_mpich_as_setup_wrote_it(env):
    assert included(env, None) == ["systems/local/packages.yaml", ".deps/packages.yaml"]
    assert included(env, "local") == ["systems/local/packages.yaml", ".deps/packages.yaml"]
    assert included(env, "vcluster") == ["systems/local/packages.yaml", "systems/vcluster/packages.yaml",
                                         ".deps/packages.yaml"]
    # any other name is its own folder: a misspelt one is a missing file, Spack's one-line error
    assert included(env, "site-template") == ["systems/site-template/packages.yaml"]
    assert included(env, "nosuch") == ["systems/nosuch/packages.yaml"]
    local = yaml.safe_load((REPO / "systems" / "local" / "packages.yaml").read_text())["packages"]
    assert local["mpi"]["buildable"] is False and local["openmpi"]["externals"][0]["prefix"] == "/usr"
    # no external's prefix holds a variable: Spack 1.1 leaves $env in a prefix as it is
    for path in (REPO / "systems").glob("*/packages.yaml"):
        for name, entry in (yaml.safe_load(path.read_text())["packages"] or {}).items():
            for external in entry.get("externals", []):
                assert "$" not in external.get("prefix", ""), (path, name)


@pytest.mark.unit
@pytest.mark.skipif(not (REPO / ".deps" / "packages.yaml").exists(), reason="ci/setup.sh has not run here")
def test_setup_wrote_mpich_s_external_with_its_concrete_path():
    written = yaml.safe_load((REPO / ".deps" / "packages.yaml").read_text())["packages"]["mpich"]
    (external,) = written["externals"]
    assert written["buildable"] is False and external["spec"].startswith("mpich@")
    mpich = (REPO / ".deps" / "mpich").resolve()
    assert external["prefix"] == str(mpich) and (mpich / "bin" / "mpicc").exists()


@pytest.mark.unit
def test_one_view_per_mpi_named_as_the_reframe_environments_and_one_for_perftest(env):
    assert set(env["view"]) == {m.name for m in mpis.ALL} | {"rdma"}
    for name, view in env["view"].items():
        assert view["root"] == f".spack-env/views/{name}" and len(view["select"]) == 1
    assert env["view"]["rdma"]["select"] == ["perftest"]


@pytest.mark.unit
def test_the_lock_file_and_spacks_leftovers_are_ignored_by_git():
    ignored = subprocess.run(["git", "check-ignore", "spack.lock", ".spack-env/views/openmpi",
                              "src/build-linux-x86_64_v3-abcdefg"], cwd=REPO, capture_output=True, text=True)
    assert len(ignored.stdout.split()) == 3, ignored.stdout


def package_class(path):
    """A package file's class: its name, bases, (call, first argument) pairs, assigned names."""
    cls = next(n for n in ast.parse(path.read_text()).body if isinstance(n, ast.ClassDef))
    calls = {(c.func.id, ast.literal_eval(c.args[0])) for c in ast.walk(cls)
             if isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.args
             and isinstance(c.args[0], ast.Constant)}
    assigned = {t.id for n in cls.body if isinstance(n, ast.Assign) for t in n.targets}
    return cls.name, [b.id for b in cls.bases], calls, assigned


@pytest.mark.unit
def test_the_package_files_parse_and_declare_what_spack_needs():
    name, bases, calls, assigned = package_class(PACKAGE)
    assert name == "Jitterbench" and bases == ["CMakePackage"]
    assert {("version", "main"), ("depends_on", "mpi"), ("depends_on", "c"), ("depends_on", "cmake@3.16:")} <= calls
    assert {"homepage", "git"} <= assigned  # a branch version needs git, or `spack audit packages` fails
    # perftest, which Spack's builtin repository lacks: release tags pinned to commits, on rdma-core
    name, bases, calls, assigned = package_class(PACKAGE.parents[1] / "perftest" / "package.py")
    assert name == "Perftest" and bases == ["AutotoolsPackage"] and {"homepage", "git"} <= assigned
    assert {("depends_on", "rdma-core"), ("depends_on", "pciutils"), ("version", "4.5-0.17")} <= calls


@pytest.mark.reframe
@pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")
def test_the_checks_take_their_binaries_from_a_spack_view(tmp_path):
    """JB_SPACK_VIEWS: the view of each programming environment, here one holding Open MPI's build."""
    view = install_prefix(tmp_path / "views") / "openmpi" / "bin"
    out = tmp_path / "out"
    env = dict(os.environ, JB_OUTPUT=str(out), JB_REFERENCE_DIR=str(tmp_path / "refs"),
               JB_SPACK_VIEWS=str(tmp_path / "views"))
    env.pop("JB_PREFIX", None)
    env.pop("JB_OSU_PREFIX", None)
    cmd = [str(REFRAME), "-C", "systems/config.py", "-c", "reframe_checks/halo.py", "-c", "reframe_checks/osu.py",
           "-p", "openmpi", "-P", "nodes=1", "-P", "tasks_per_node=2", "-P", "distribution=block",
           "-P", "eager_limit=default", "-S", "HaloCheck.msg_sizes=4096", "-S", "HaloCheck.patterns=sendrecv",
           "-P", "HaloCheck.placement=row", "-P", "OsuCheck.benchmark=osu_latency", "-S", "calls=20", "-r"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:]
    cases = {c["name"].split()[0]: c for run in json.loads((out / "report.json").read_text())["runs"]
             for c in run["testcases"]}
    assert cases["HaloCheck"]["result"] == "pass"
    assert cases["HaloCheck"]["executable"] == str(view / "jb-halo")
    # OSU is looked for in the same view, and the skip names it
    assert cases["OsuCheck"]["result"] == "skip"
    assert f"no osu_latency under {tmp_path / 'views' / 'openmpi'}" in proc.stdout


SPACK = Path(os.environ["SPACK_ROOT"]) / "bin" / "spack" if os.environ.get("SPACK_ROOT") else None


@pytest.mark.skipif(SPACK is None, reason="Spack is not available (SPACK_ROOT is not set): it is on no "
                                          "package registry, so CI cannot install it; see the README's Spack recipe")
@pytest.mark.spack
def test_spack_concretizes_installs_and_the_view_runs(tmp_path):
    """On a copy: concretize writes spack.lock and .spack-env/ beside spack.yaml."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    for name in ("spack.yaml", "VERSION"):  # VERSION: src/CMakeLists.txt reads the release there
        shutil.copy(REPO / name, copy / name)
    for path in ("spack-repo", "src", "systems/local", "systems/vcluster", "systems/site-template"):
        shutil.copytree(REPO / path, copy / path, ignore=shutil.ignore_patterns("build-*"))
    (copy / ".deps").symlink_to(REPO / ".deps")  # the PyPI MPIs the local externals name
    env = dict(os.environ, JB_SPACK_SYSTEM="local")
    spack = [str(SPACK), "-e", str(copy)]
    concretize = subprocess.run([*spack, "concretize"], env=env, capture_output=True, text=True, timeout=1200)
    assert concretize.returncode == 0, concretize.stderr[-3000:]
    install = subprocess.run([*spack, "install", "jitterbench ^openmpi"], env=env, capture_output=True, text=True,
                             timeout=1200)
    assert install.returncode == 0, install.stderr[-3000:]
    halo = copy / ".spack-env" / "views" / "openmpi" / "bin" / "jb-halo"
    cmd, run_env = mpis.OPENMPI.launch(2, [str(halo), "--calls", "10", "--validate"])
    run = subprocess.run(cmd, env=run_env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0 and "every payload arrived intact" in run.stdout, run.stderr


@pytest.mark.skipif(SPACK is None, reason="Spack is not available (SPACK_ROOT is not set): it is on no "
                                          "package registry, so CI cannot install it; see the README's Spack recipe")
@pytest.mark.spack
def test_an_unknown_system_stops_spack_in_one_line_before_concretizing(tmp_path):
    shutil.copy(REPO / "spack.yaml", tmp_path / "spack.yaml")
    shutil.copytree(REPO / "spack-repo", tmp_path / "spack-repo")
    proc = subprocess.run([str(SPACK), "-e", str(tmp_path), "concretize"], env=dict(os.environ, JB_SPACK_SYSTEM="nosuch"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and not (tmp_path / "spack.lock").exists()
    assert proc.stderr.strip().count("\n") == 0 and "systems/nosuch/packages.yaml" in proc.stderr, proc.stderr

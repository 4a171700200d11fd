"""The Spack environment (spack.yaml), the project package and the ReFrame switch to its views.

Everywhere: the YAML's shape, the package file's syntax, and the checks taking
their binaries from a view folder (or skipping an MPI the views lack).  Where
Spack is (on PATH, or SPACK_ROOT set): a copy of the environment concretizes
with the `local` externals, installs jitterbench for Open MPI, and one benchmark
runs from its view; a site with Open MPI and MPICH only concretizes.  CI has no
Spack (it is on no package registry), so those tests skip and say so.
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

from conftest import folder, install_prefix, openmpi_with
from jitterbench import mpi as mpis
from jitterbench import site

REPO = Path(__file__).resolve().parents[1]
REFRAME = Path(sys.executable).with_name("reframe")
PACKAGE = REPO / "spack-repo" / "spack_repo" / "jitterbench" / "packages" / "jitterbench" / "package.py"


@pytest.fixture(scope="module")
def env():
    return yaml.safe_load((REPO / "spack.yaml").read_text())["spack"]


def included(env, system):
    """The include paths Spack takes for JB_SPACK_SYSTEM=system (None: the variable unset)."""
    variables = {} if system is None else {"JB_SPACK_SYSTEM": system}
    return [i["path"].replace("$JB_SPACK_SYSTEM", system or "") for i in env["include"]
            if eval(i["when"], {}, {"env": variables})]


def definitions(env, system, root=REPO):
    """The definitions Spack takes for JB_SPACK_SYSTEM=system: spack.yaml's and those of the
    files it includes (Spack merges the section across them), same-named lists concatenated."""
    docs = [env, *(yaml.safe_load((root / path).read_text()) for path in included(env, system)
                   if path.endswith("definitions.yaml"))]
    taken = {}
    for entry in (d for doc in docs for d in doc.get("definitions", [])):
        for name, specs in entry.items():
            taken.setdefault(name, []).extend(specs)
    return taken


@pytest.mark.unit
def test_the_system_s_definitions_decide_the_mpi_matrix(env, tmp_path):
    local = definitions(env, None)
    assert [s.split("@")[0] for s in local["benchmarks"]] == ["jitterbench", "osu-micro-benchmarks"]
    # Intel MPI and perftest are a site's: the PyPI Intel MPI lacks the oneAPI layout, and
    # local takes Debian's perftest from PATH
    assert local["mpis"] == ["openmpi", "mpich"] and local["verbs"] == []
    assert definitions(env, "local") == definitions(env, "vcluster") == local
    # a site's are what `jitterbench site new` wrote for its MPIs: no Intel MPI unless it has one
    sites = tmp_path / "systems" / "sites"
    sites.mkdir(parents=True)
    site.new("twompi", [], "slurm", "srun", ["openmpi", "mpich"], "tcp", ["batch:4:2"], sites)
    site.new("ibsite", [], "slurm", "srun", ["intelmpi", "openmpi"], "ib", ["batch:4:2"], sites)
    twompi, ibsite = definitions(env, "twompi", tmp_path), definitions(env, "ibsite", tmp_path)
    assert (twompi["mpis"], twompi["verbs"]) == (["openmpi", "mpich"], [])
    assert (ibsite["mpis"], ibsite["verbs"]) == (["intel-oneapi-mpi", "openmpi"], ["perftest"])
    assert env["specs"] == [{"matrix": [["$benchmarks"], ["$^mpis"]]}, "$verbs"]
    assert env["concretizer"]["unify"] is False
    # every MPI a site may name has its view, named as its programming environment
    assert {name: f"^{package}" for name, package in site.SPACK_PACKAGES.items()} == {
        name: env["view"][name]["select"][0] for name in site.SPACK_PACKAGES}


@pytest.mark.unit
def test_the_project_repo_and_the_develop_path_are_this_checkout(env):
    repo = REPO / env["repos"]["jitterbench"]
    assert yaml.safe_load((repo / "repo.yaml").read_text())["repo"] == {"namespace": "jitterbench", "api": "v2.2"}
    assert (repo / "packages" / "jitterbench" / "package.py") == PACKAGE
    develop = env["develop"]["jitterbench"]
    assert develop["spec"] == "jitterbench@=main"
    assert (REPO / develop["path"] / "CMakeLists.txt").exists()


@pytest.mark.unit
def test_each_system_includes_its_own_folder_and_local_s_mpich_as_setup_wrote_it(env):
    local = ["systems/sites/local/packages.yaml", "systems/sites/local/definitions.yaml", ".deps/packages.yaml"]
    assert included(env, None) == included(env, "local") == local
    assert included(env, "vcluster") == ["systems/sites/local/packages.yaml", "systems/sites/vcluster/packages.yaml",
                                         "systems/sites/vcluster/definitions.yaml", ".deps/packages.yaml"]
    # any other name is its own folder: a misspelt one is a missing file, Spack's one-line error
    assert included(env, "nosuch") == ["systems/sites/nosuch/packages.yaml", "systems/sites/nosuch/definitions.yaml"]
    for path in {p for system in (None, "local", "vcluster") for p in included(env, system)} - {".deps/packages.yaml"}:
        assert (REPO / path).exists(), path
    local = yaml.safe_load((REPO / "systems" / "sites" / "local" / "packages.yaml").read_text())["packages"]
    assert local["mpi"]["buildable"] is False and local["openmpi"]["externals"][0]["prefix"] == "/usr"
    # no external's prefix holds a variable: Spack 1.1 leaves $env in a prefix as it is
    for path in (REPO / "systems" / "sites").glob("*/packages.yaml"):
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


@pytest.mark.process
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
    # its build dependencies stated (a tag holds no configure script), and one release taken
    # unless a spec names another, not the newest tag
    assert {("depends_on", tool) for tool in ("autoconf", "automake", "libtool", "m4", "gmake")} <= calls
    cls = ast.parse((PACKAGE.parents[1] / "perftest" / "package.py").read_text())
    preferred = [c.args[0].value for c in ast.walk(cls) if isinstance(c, ast.Call) and getattr(c.func, "id", "") ==
                 "version" and any(k.arg == "preferred" and k.value.value is True for k in c.keywords)]
    assert preferred == ["4.5-0.17"]


def run_from_views(tmp_path):
    """Halo and OSU's latency, one node, Open MPI, from the views of tmp_path/views: the process
    and its cases by check."""
    out = tmp_path / "out"
    env = dict(os.environ, JB_OUTPUT=str(out), JB_REFERENCE_DIR=str(folder(tmp_path / "refs")),
               JB_SPACK_VIEWS=str(folder(tmp_path / "views")))
    env.pop("JB_PREFIX", None)
    env.pop("JB_OSU_PREFIX", None)
    cmd = [str(REFRAME), "-C", "systems/config.py", "-c", "reframe_checks/halo.py", "-c", "reframe_checks/osu.py",
           "-p", "openmpi", "-P", "nodes=1", "-P", "tasks_per_node=2", "-P", "distribution=block",
           "-P", "eager_limit=default", "-S", "HaloCheck.msg_sizes=4096", "-S", "HaloCheck.patterns=sendrecv",
           "-P", "HaloCheck.placement=row", "-P", "OsuCheck.benchmark=osu_latency", "-S", "calls=20",
           "-S", "HaloCheck.judge_load=0", "-r"]
    proc = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True, timeout=600)
    cases = {c["name"].split()[0]: c for run in json.loads((out / "report.json").read_text())["runs"]
             for c in run["testcases"]}
    return proc, cases


@pytest.mark.reframe
def test_the_checks_take_their_binaries_from_a_spack_view(tmp_path):
    """JB_SPACK_VIEWS: the view of each programming environment, here one holding Open MPI's build."""
    openmpi_with("halo")  # else skipped, naming what is missing: this checkout's build
    view = install_prefix(tmp_path / "views") / "openmpi" / "bin"
    proc, cases = run_from_views(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert cases["HaloCheck"]["result"] == "pass"
    assert cases["HaloCheck"]["executable"] == str(view / "jb-halo")
    # OSU is looked for in the same view, and the skip names it
    assert cases["OsuCheck"]["result"] == "skip"
    assert f"no osu_latency under {tmp_path / 'views' / 'openmpi'}" in proc.stdout


@pytest.mark.skipif(not mpis.OPENMPI.available(), reason="Open MPI is not installed")
@pytest.mark.reframe
def test_an_mpi_the_views_lack_is_skipped_and_named_not_failed(tmp_path):
    """A system's Spack environment builds for the MPIs its definitions.yaml names: the
    environment of any other has an empty view, and its checks skip, naming the view."""
    (tmp_path / "views").mkdir()
    proc, cases = run_from_views(tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:]
    assert {name: c["result"] for name, c in cases.items()} == {
        "JitterbenchBuild": "skip", "HaloCheck": "skip", "OsuCheck": "skip"}
    assert f"no jitterbench in the Spack view {tmp_path / 'views' / 'openmpi'}: spack.yaml built none for openmpi" \
        in proc.stdout, proc.stdout[-3000:]


SPACK = shutil.which("spack") or (str(Path(os.environ["SPACK_ROOT"]) / "bin" / "spack")
                                  if os.environ.get("SPACK_ROOT") else None)
NO_SPACK = ("Spack is not available (no spack on PATH, SPACK_ROOT not set): it is on no package registry, so "
            "CI cannot install it; see docs/spack.md")


@pytest.mark.skipif(SPACK is None, reason=NO_SPACK)
@pytest.mark.spack
def test_spack_concretizes_installs_and_the_view_runs(tmp_path):
    """On a copy: concretize writes spack.lock and .spack-env/ beside spack.yaml."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    for name in ("spack.yaml", "VERSION"):  # VERSION: src/CMakeLists.txt reads the release there
        shutil.copy(REPO / name, copy / name)
    for path in ("spack-repo", "src", "systems/sites/local", "systems/sites/vcluster"):
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


@pytest.mark.skipif(SPACK is None, reason=NO_SPACK)
@pytest.mark.spack
def test_an_unknown_system_stops_spack_in_one_line_before_concretizing(tmp_path):
    shutil.copy(REPO / "spack.yaml", tmp_path / "spack.yaml")
    shutil.copytree(REPO / "spack-repo", tmp_path / "spack-repo")
    proc = subprocess.run([str(SPACK), "-e", str(tmp_path), "concretize"], env=dict(os.environ, JB_SPACK_SYSTEM="nosuch"),
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and not (tmp_path / "spack.lock").exists()
    assert proc.stderr.strip().count("\n") == 0 and "systems/sites/nosuch/packages.yaml" in proc.stderr, proc.stderr


@pytest.mark.skipif(SPACK is None, reason=NO_SPACK)
@pytest.mark.spack
def test_a_site_with_open_mpi_and_mpich_only_concretizes_for_those_two(tmp_path):
    """The site's definitions.yaml decides the matrix: a site `jitterbench site new` wrote with
    Open MPI and MPICH concretizes (its placeholders as written), for those two MPIs only, and
    Spack writes nothing into spack.yaml (the site's packages.yaml states its compiler)."""
    copy = tmp_path / "checkout"
    copy.mkdir()
    shutil.copy(REPO / "spack.yaml", copy / "spack.yaml")
    for path in ("spack-repo", "src"):
        shutil.copytree(REPO / path, copy / path, ignore=shutil.ignore_patterns("build-*"))
    (copy / "systems" / "sites").mkdir(parents=True)
    site.new("twompi", [], "slurm", "srun", ["openmpi", "mpich"], "tcp", ["batch:4:2"], copy / "systems" / "sites")
    proc = subprocess.run([SPACK, "-e", str(copy), "concretize"], env=dict(os.environ, JB_SPACK_SYSTEM="twompi"),
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stderr[-3000:]
    lock = json.loads((copy / "spack.lock").read_text())
    roots = sorted(r["spec"] for r in lock["roots"])
    assert roots == ["jitterbench@main ^mpich", "jitterbench@main ^openmpi", "osu-micro-benchmarks@7.4 ^mpich",
                     "osu-micro-benchmarks@7.4 ^openmpi"], roots
    assert not any(s["name"] == "intel-oneapi-mpi" for s in lock["concrete_specs"].values())
    assert (copy / "spack.yaml").read_text() == (REPO / "spack.yaml").read_text()

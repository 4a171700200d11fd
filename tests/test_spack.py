"""The Spack environment (spack.yaml), the project package and the ReFrame switch to its views.

Everywhere: the YAML's shape, the package files' syntax, and the checks taking
their binaries from a view folder (or skipping an MPI the views lack).  The spack
tier, where ../shared/vendor holds Spack (CI): the README's recipe run as written
with CI's Spack (tests/support/vendored_spack.py) on a copy of the checkout, which
concretizes spack.yaml for `local`, installs jitterbench, OSU and IMB for Open MPI
and MPICH, and runs OsuCheck and HaloCheck from the views; benchmarks/fidelity.py
finds OSU and IMB there; ../shared is unchanged after it.  Without ../shared/vendor
those tests skip in one line naming what is missing.
"""
from __future__ import annotations

import ast
import gzip
import json
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from conftest import folder, install_prefix, openmpi_with
from jitterbench import mpi as mpis
from jitterbench import site
from support import vendored_spack
from support.reframe_runs import params

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
    # IMB beside OSU, IMB-MPI1 only, as `jitterbench site new` writes it for a site
    assert local["imb"] == [site.IMB_SPEC]
    assert definitions(env, "local") == definitions(env, "vcluster") == local
    # a site's are what `jitterbench site new` wrote for its MPIs: no Intel MPI unless it has one
    sites = tmp_path / "systems" / "sites"
    sites.mkdir(parents=True)
    site.new("twompi", [], "slurm", "srun", ["openmpi", "mpich"], "tcp", ["batch:4:2"], sites)
    site.new("ibsite", [], "slurm", "srun", ["intelmpi", "openmpi"], "ib", ["batch:4:2"], sites)
    twompi, ibsite = definitions(env, "twompi", tmp_path), definitions(env, "ibsite", tmp_path)
    assert (twompi["mpis"], twompi["imb"], twompi["verbs"]) == (["openmpi", "mpich"], [site.IMB_SPEC], [])
    assert (ibsite["mpis"], ibsite["verbs"]) == (["intel-oneapi-mpi", "openmpi"], ["perftest"])
    # a site turns IMB off in its definitions.yaml (spack.yaml's own list is empty)
    assert {"imb": []} in env["definitions"]
    written = sites / "twompi" / "definitions.yaml"
    written.write_text(written.read_text().replace(f"- imb: [{site.IMB_SPEC}]", "- imb: []"))
    assert definitions(env, "twompi", tmp_path)["imb"] == []
    assert env["specs"] == [{"matrix": [["$benchmarks", "$imb"], ["$^mpis"]]}, "$verbs"]
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
    # intel-mpi-benchmarks: the builtin package, its Makefile asked for the variants' programs only
    # (the spack tier reads the build's log: IMB-MPI1 alone was made)
    imb = PACKAGE.parents[1] / "intel_mpi_benchmarks" / "package.py"
    name, bases, _, _ = package_class(imb)
    assert name == "IntelMpiBenchmarks" and bases == ["BuiltinIntelMpiBenchmarks"]
    assert "from spack_repo.builtin.packages.intel_mpi_benchmarks.package import" in imb.read_text()


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


# ---------------------------------------------------------------------------------------------
# The spack tier: the CI's Spack, from ../shared/vendor (tests/support/vendored_spack.py), runs
# the README's recipe on a copy of this checkout: concretize spack.yaml for `local`, install it,
# and run OsuCheck and HaloCheck from the views under Open MPI and MPICH, judged as any run.
# Where ../shared/vendor is absent every test here skips, in one line naming what is missing.

MPIS = {"openmpi": "libmpi.so.40", "mpich": "libmpi.so.12"}  # the MPIs local builds for: the library each links
ROOTS = sorted((benchmark, mpi) for benchmark in ("jitterbench@main", "osu-micro-benchmarks@7.4",
                                                   "intel-mpi-benchmarks@2021.7") for mpi in MPIS)
QUICK_OSU = {"osu_latency", "osu_bw", "osu_alltoall"}  # OsuCheck's quick variant
# the phases of the recipe's run and of the tier, each line's seconds: what CI pays for the tier
TIMES = vendored_spack.WORK / "times.txt"


def recipe_block():
    """The README's "Building with Spack" commands: the first sh block of that section."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("### Building with Spack"):]
    return re.search(r"^```sh\n(.*?)^```", section, re.M | re.S)[1]


@pytest.fixture(scope="module")
def ci_spack():
    """The CI's Spack, set up (its command), and ../shared's checksum before it ran anything."""
    reason = vendored_spack.missing()
    if reason:
        pytest.skip(reason)
    before = vendored_spack.checksum(vendored_spack.SHARED)
    note(f"== {time.strftime('%Y-%m-%d %H:%M:%S')}: the spack tier")
    start = time.monotonic()
    spack = vendored_spack.setup()
    note(f"set-up (venv with clingo, mirror, scope): {time.monotonic() - start:.0f} s")
    return {"spack": spack, "shared_before": before}


def note(line):
    TIMES.parent.mkdir(parents=True, exist_ok=True)
    with open(TIMES, "a") as f:
        f.write(line + "\n")


def spack_env(spack):
    """This process's environment for the recipe: the CI's Spack first on PATH, then ReFrame's
    venv; no JB_* of the caller but the tests' rounds and launches (conftest: one each), nor a
    Spack of the caller's."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JB_", "SPACK_"))}
    env.update(JB_ROUNDS=os.environ["JB_ROUNDS"], JB_LAUNCHES=os.environ["JB_LAUNCHES"],
               PATH=os.pathsep.join([str(spack.parent), str(REFRAME.parent), os.environ["PATH"]]))
    return env


@pytest.fixture(scope="module")
def recipe(ci_spack):
    """The README's recipe run as written on a copy of the checkout, the site's name being local's
    (`export JB_SPACK_SYSTEM=mysite` -> local): its process, the copy, the run's cases."""
    block = recipe_block()
    assert block.count("export JB_SPACK_SYSTEM=mysite") == 1, block
    copy = vendored_spack.copy_checkout(vendored_spack.WORK / "checkout")
    log = vendored_spack.WORK / "recipe.log"
    start = time.monotonic()
    # each command traced with the seconds since the start, so that the log says what each took (set
    # in the script: bash running as root takes no PS4 from its environment)
    script = "PS4='+ [$SECONDS s] '\nset -x\n" + block.replace("JB_SPACK_SYSTEM=mysite", "JB_SPACK_SYSTEM=local", 1)
    with open(log, "w") as out:
        proc = subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=copy, env=spack_env(ci_spack["spack"]),
                              stdout=out, stderr=subprocess.STDOUT, text=True, timeout=3600)
    note(f"recipe: {time.monotonic() - start:.0f} s; its commands' start times:")
    for line in log.read_text().splitlines():
        if line.startswith("+ ["):
            note("  " + line[:160])
    report = copy / "output" / "report.json"
    cases = [c for run in json.loads(report.read_text())["runs"] for c in run["testcases"]] if report.exists() else []
    return {"proc": proc, "log": log.read_text(), "copy": copy, "cases": cases}


def inconclusive(case):
    """A case whose launch something else on the node disturbed through every try: the node's
    finding, not the build's nor the check's (the pipeline's tests take it so too)."""
    return case["result"] == "fail" and "inconclusive: " in (case.get("fail_reason") or "")


@pytest.mark.spack
def test_the_readme_recipe_runs_as_written_with_the_ci_s_spack(recipe):
    """Every command succeeds; the run's exit status too, unless its only failures are cases the
    machine disturbed (judged as any run: a node busy beside the test is inconclusive)."""
    failed = [c["name"] for c in recipe["cases"] if c["result"] == "fail" and not inconclusive(c)]
    assert recipe["proc"].returncode == 0 or (recipe["cases"] and not failed), (failed, recipe["log"][-5000:])
    assert "+ [" in recipe["log"] and "spack -e . install" in recipe["log"]


@pytest.mark.spack
def test_the_lock_holds_each_benchmark_for_each_mpi_and_builds_no_mpi(recipe):
    lock = json.loads((recipe["copy"] / "spack.lock").read_text())
    # each root `<package>@<version>[variants] ^<mpi>`
    roots = [re.fullmatch(r"([\w-]+@[\w.]+)\S*\s+\^(\w+)", r["spec"]) for r in lock["roots"]]
    assert all(roots) and sorted(r.groups() for r in roots) == ROOTS, [r["spec"] for r in lock["roots"]]
    specs = lock["concrete_specs"].values()
    # IMB-MPI1 alone (local's definitions.yaml)
    imb = [s["parameters"] for s in specs if s["name"] == "intel-mpi-benchmarks"]
    assert len(imb) == 2 and all(p["mpi1"] and not any(p[v] for v in ("ext", "io", "nbc", "p2p", "rma", "mt"))
                                 for p in imb), imb
    for name in (*MPIS, "gcc", "cmake", "gmake"):  # the externals of local's packages.yaml
        assert [s for s in specs if s["name"] == name] and all(s.get("external") for s in specs if s["name"] == name), name
    assert not [s for s in specs if s["name"] == "intel-oneapi-mpi"]
    # a lock that runs on any x86-64 of the last decade (local's packages.yaml)
    assert {s["arch"]["target"] if isinstance(s["arch"]["target"], str) else s["arch"]["target"]["name"]
            for s in specs if "arch" in s and not s.get("external")} == {"x86_64_v3"}


def linked_mpi(program):
    return [line for line in subprocess.run(["ldd", str(program)], capture_output=True, text=True).stdout.splitlines()
            if "libmpi.so" in line]


@pytest.mark.spack
def test_each_view_holds_jitterbench_osu_and_imb_built_against_its_own_mpi(recipe):
    views = recipe["copy"] / ".spack-env" / "views"
    # local builds for Open MPI and MPICH: Intel MPI's view is empty
    assert not (views / "intelmpi" / "bin").exists()
    for mpi, library in MPIS.items():
        view = views / mpi
        programs = [view / "bin" / "jb-halo", view / "bin" / "jb-pingpong", view / "bin" / "IMB-MPI1",
                    *(view / "libexec" / "osu-micro-benchmarks" / "mpi" / folder / name for folder, name in (
                        ("pt2pt", "osu_latency"), ("pt2pt", "osu_bw"), ("collective", "osu_alltoall")))]
        for program in programs:
            assert os.access(program, os.X_OK), program
            (line,) = linked_mpi(program)
            assert library in line, (program, line)
            if mpi == "mpich":  # this checkout's MPICH from PyPI, not a system one
                assert str((REPO / ".deps" / "mpich").resolve()) in line, (program, line)
        # IMB-MPI1 alone, built alone: spack-repo's intel-mpi-benchmarks asks the top Makefile for
        # that program, where the builtin's `make TARGET=MPI1` made all seven
        assert sorted(p.name for p in (view / "bin").glob("IMB-*")) == ["IMB-MPI1"]
        build_log = (view / "bin" / "IMB-MPI1").resolve().parents[1] / ".spack" / "spack-build-out.txt.gz"
        made = re.findall(r"TARGET=(\w+)", gzip.decompress(build_log.read_bytes()).decode(errors="replace"))
        assert made and set(made) == {"MPI1"}, made


@pytest.mark.spack
def test_osu_and_halo_ran_from_the_views_and_passed_under_each_mpi(recipe):
    views = recipe["copy"] / ".spack-env" / "views"
    ran = {}
    for case in recipe["cases"]:
        if case.get("fixture"):
            continue
        ran.setdefault((case["environ"], case["name"].split()[0]), []).append(case)
    for mpi in MPIS:
        osu = ran[(mpi, "OsuCheck")]
        assert {params(c["name"])["benchmark"] for c in osu} == QUICK_OSU, [c["name"] for c in osu]
        halo = ran[(mpi, "HaloCheck")]
        # each case passed, or the machine disturbed it through every try (inconclusive, naming the
        # load); each check passed in one case at least, from the view's binary
        for case in osu + halo:
            assert case["result"] == "pass" or inconclusive(case), (case["name"], case.get("fail_reason"))
            assert case["executable"].startswith(str(views / mpi) + "/"), case["executable"]
        assert {c["executable"] for c in halo} == {str(views / mpi / "bin" / "jb-halo")}
        assert [c for c in osu if c["result"] == "pass"] and [c for c in halo if c["result"] == "pass"], mpi
    # Intel MPI, which local does not build with Spack: its view is absent, its checks skip and say so
    intel = [c for (environ, _), cases in ran.items() if environ == "intelmpi" for c in cases]
    assert intel and {c["result"] for c in intel} == {"skip"}
    assert f"no jitterbench in the Spack view {views / 'intelmpi'}" in recipe["log"]


@pytest.mark.spack
def test_fidelity_finds_osu_and_imb_in_the_views(ci_spack, recipe, tmp_path):
    """benchmarks/fidelity.py, one round of its latency (OSU) and halo (IMB) rows from the views."""
    views = recipe["copy"] / ".spack-env" / "views"
    start = time.monotonic()
    done = subprocess.run([sys.executable, str(REPO / "benchmarks" / "fidelity.py"), "--rounds", "1",
                           "--only", "latency,halo", "--mpi", ",".join(MPIS), "--json", str(tmp_path / "f.json")],
                          env={**spack_env(ci_spack["spack"]), "JB_SPACK_VIEWS": str(views)}, cwd=tmp_path,
                          capture_output=True, text=True, timeout=900)
    note(f"fidelity.py, one round of latency and halo, two MPIs: {time.monotonic() - start:.0f} s")
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    doc = json.loads((tmp_path / "f.json").read_text())
    for mpi in MPIS:
        rows = doc["mpis"][mpi]
        assert {r["kind"] for r in rows} == {"latency", "halo"}
        for row in rows:
            assert all(math.isfinite(x) and x > 0 for x in row["ratios"]), row
            anchor = "bin/IMB-MPI1" if row["kind"] == "halo" else "libexec/osu-micro-benchmarks/mpi/pt2pt/osu_latency"
            assert row["anchor_command"].startswith(shlex.quote(str(views / mpi / anchor))), row["anchor_command"]
            assert row["jitterbench_command"].startswith(shlex.quote(str(views / mpi / "bin"))), row["jitterbench_command"]


@pytest.mark.spack
def test_an_unknown_system_stops_spack_in_one_line_before_concretizing(ci_spack, tmp_path):
    shutil.copy(REPO / "spack.yaml", tmp_path / "spack.yaml")
    shutil.copytree(REPO / "spack-repo", tmp_path / "spack-repo")
    proc = subprocess.run([str(ci_spack["spack"]), "-e", str(tmp_path), "concretize"],
                          env={**spack_env(ci_spack["spack"]), "JB_SPACK_SYSTEM": "nosuch"},
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and not (tmp_path / "spack.lock").exists()
    assert proc.stderr.strip().count("\n") == 0 and "systems/sites/nosuch/packages.yaml" in proc.stderr, proc.stderr


@pytest.mark.spack
def test_shared_is_byte_identical_after_the_tier(ci_spack):
    """Last: nothing of the tier wrote into ../shared (CI's copy of it is read-only to all but root)."""
    assert vendored_spack.checksum(vendored_spack.SHARED) == ci_spack["shared_before"]


@pytest.mark.unit
def test_without_the_vendored_spack_the_tier_says_in_one_line_what_is_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(vendored_spack, "VENDOR", tmp_path / "vendor")
    said = vendored_spack.missing()
    assert "\n" not in said and f"{tmp_path / 'vendor'} is absent" in said
    (tmp_path / "vendor" / "spack" / "bin").mkdir(parents=True)
    (tmp_path / "vendor" / "spack" / "bin" / "spack").write_text("")
    said = vendored_spack.missing()
    assert "\n" not in said and "Spack v1.1.0" not in said
    assert all(what in said for _, what in vendored_spack.NEEDS[1:]), said


@pytest.mark.unit
def test_the_checksum_sees_a_new_file_a_changed_byte_and_a_mode(tmp_path):
    (tmp_path / "a").write_text("x")
    first = vendored_spack.checksum(tmp_path)
    assert vendored_spack.checksum(tmp_path) == first
    (tmp_path / "__pycache__").mkdir()
    second = vendored_spack.checksum(tmp_path)
    (tmp_path / "__pycache__").rmdir()
    (tmp_path / "a").write_text("y")
    third = vendored_spack.checksum(tmp_path)
    (tmp_path / "a").write_text("x")
    (tmp_path / "a").chmod(0o600)
    assert len({first, second, third, vendored_spack.checksum(tmp_path)}) == 4

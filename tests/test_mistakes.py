"""A user's mistakes, caught before anything runs: each one is one line that names the mistake and
says what to do, with a non-zero exit; none is a traceback, none is silently ignored (issue 42's
known answer).  A mistake is a misspelt name where jitterbench or ReFrame reads one (a system,
partition, mode, option, subcommand, check, $index name, environment, variable, unit, JB_ name, a
site file's key), a site file that does not load, a host no site names, a command given the wrong
input (one run to compare, a listing's output to report on)."""
import json
import re
from pathlib import Path

import pytest

from jitterbench import cli, site
from jitterbench.harness import systems

REPO = Path(__file__).resolve().parent.parent
VCLUSTER = REPO / "reference_data" / "vcluster.yaml"


def reference_with(tmp_path, old, new):
    """reference_data/vcluster.yaml with one mistake: the first `old` written `new`; of its checks'
    entries only the first that holds `old` (6,000 lines whole, the file takes a second and more to read)."""
    sections = re.split(r"^(?=\S[^\n]*:)", VCLUSTER.read_text(), flags=re.M)  # a top-level key begins each
    head = [s for s in sections if s.startswith(("#", "provenance:", "fingerprint:"))]
    text = "".join([*head, next(s for s in sections[len(head):] if old in "\n" + s)])
    assert old in text
    path = tmp_path / "vcluster.yaml"
    path.write_text(text.replace(old, new, 1))
    return [str(path)]


def site_file(tmp_path, old, new):
    """A site written by `site new` into a scratch sites/ folder, with one mistake in its module."""
    sites = tmp_path / "sites"
    sites.mkdir()
    site.new("acme", [r"^acme-login\d+$"], "slurm", "srun", ["openmpi"], "ib", ["compute:4:8"], sites)
    module = sites / "acme.py"
    text = module.read_text()
    assert old in text
    module.write_text(text.replace(old, new, 1))
    return sites


def listing_output(tmp_path):
    """A folder after `reframe -l`: ReFrame's own log, no run report, no perflog."""
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "reframe.log").write_text("[2026-11-26T10:00:00] info: reframe: [ReFrame Setup]\n")
    return str(tmp_path / "out")


def one_run(tmp_path):
    report = tmp_path / "report.json"
    report.write_text(json.dumps({"session_info": {"uuid": "u", "time_start_unix": 1}, "runs": [{"testcases": [
        {"display_name": "HaloCheck %nodes=1", "nodes": 1, "system": "local", "partition": "default",
         "environ": "openmpi", "result": "pass", "perfvalues": {"local:default:max": [1.0, 0, None, None, "us", "pass"]}}]}]}))
    return str(report)


# (what the user did wrong, how to do it: argv of jitterbench (a function of tmp_path where it
# needs files) or a function that runs the mistake and returns the lines said, the environment,
# what the line must say: the mistaken name and the way out)
MISTAKES = [
    ("a misspelt system", ["plan", "--system", "locl"], {}, ["'locl'", "did you mean 'local'"]),
    ("a misspelt partition", ["plan", "--system", "local:defualt"], {}, ["'defualt'", "did you mean 'default'"]),
    ("a misspelt mode", ["plan", "--system", "local", "--mode", "quik"], {}, ["'quik'", "did you mean 'quick'"]),
    ("a misspelt option", ["plan", "--sytem", "local"], {}, ["--sytem", "jitterbench plan --help"]),
    ("a misspelt subcommand", ["tabel", "report.json"], {}, ["'tabel'", "jitterbench --help"]),
    ("a misspelt option of a subcommand", ["reference", "--chek", "x.yaml"], {}, ["--chek", "--help"]),
    ("a -S that sets nothing", ["plan", "--system", "local", "-S", "calls"], {}, ["'calls'", "[TEST.]VAR=VAL"]),
    ("a -p that selects no environment", ["plan", "--system", "local", "-p", "quick"], {},
     ["no test case of mode acceptance", "-p quick"]),
    ("a misspelt check in a reference file",
     lambda t: ["reference", "--lint", *reference_with(t, "\nHaloCheck:", "\nHaloChek:")], {},
     ["HaloChek", "did you mean 'HaloCheck'"]),
    ("a misspelt $index name in a reference file",
     lambda t: ["reference", "--check", *reference_with(t, "[$partition, $environ,", "[$partition, $enviorn,")], {},
     ["$enviorn", "did you mean '$environ'"]),
    ("a misspelt partition in a reference file",
     lambda t: ["reference", "--lint", *reference_with(t, "  vcluster:vc:", "  vcluster:cv:")], {},
     ["vcluster:cv", "did you mean 'vcluster:vc'"]),
    ("a misspelt environment in a reference file",
     lambda t: ["reference", "--lint", *reference_with(t, "\n    intelmpi:\n      1:", "\n    intelmpy:\n      1:")],
     {}, ["intelmpy", "did you mean 'intelmpi'"]),
    ("a misspelt variable in a reference file",
     lambda t: ["reference", "--lint", *reference_with(t, "avg_pairwise_1024:", "avg_pairwse_1024:")], {},
     ["pairwse", "did you mean 'pairwise'"]),
    ("a variable no check reports in a reference file",
     lambda t: ["reference", "--lint", *reference_with(t, "avg_pairwise_1024:", "mean_pairwise_1024:")], {},
     ["mean_pairwise_1024", "its quantities: "]),
    ("a unit misspelt in a reference file",
     lambda t: ["reference", "--lint", *reference_with(t, "null, null, us]", "null, null, usec]")], {},
     ["'usec'", "in 'us'"]),
    ("a misspelt JB_ name", ["table", "report.json"], {"JB_OUPUT": "runs/1"}, ["JB_OUPUT", "did you mean JB_OUTPUT"]),
    ("a JB_ value that cannot be right", ["table", "report.json"], {"JB_LAUNCHES": "five"},
     ["JB_LAUNCHES='five'", "a whole number of launches from 1"]),
    ("compare given one run", lambda t: ["compare", one_run(t), "-o", str(t / "cmp")], {},
     ["compare needs two runs or more", "jitterbench report"]),
    ("report on a listing's output", lambda t: ["report", listing_output(t)], {},
     ["no perflog", "run the checks"]),
    ("a site file that does not load",
     lambda t: systems.load_systems([site_file(t, "MPIS = {", "MPIS = {(")], say=SAID.append), {},
     ["acme.py", "SyntaxError", "left out until the file is fixed"]),
    ("a misspelt key in a site file",
     lambda t: systems.load_systems([site_file(t, '"modules": []', '"module": []')], say=SAID.append), {},
     ["'module'", "did you mean 'modules'"]),
    ("a misspelt partition key in a site file",
     lambda t: systems.load_systems([site_file(t, '"max_jobs": 1', '"max_job": 1')], say=SAID.append), {},
     ["'max_job'", "did you mean 'max_jobs'"]),
    ("a partition value of the wrong kind in a site file",
     lambda t: systems.load_systems([site_file(t, '"max_jobs": 1', '"max_jobs": "one"')], say=SAID.append), {},
     ["SYSTEM/partitions/0/max_jobs", "'one' is not of type 'number'", "left out until the file is fixed"]),
    ("a misspelt mode option name in a site file",
     lambda t: systems.load_systems([site_file(t, "ENVIRONMENTS = ", 'QUIK = ["-S", "HaloCheck.calls=10"]\nENVIRONMENTS = ')],
                                 say=SAID.append), {},
     ["QUIK", "did you mean QUICK"]),
    ("a misspelt MPI for a new site",
     ["site", "new", "acme", "--scheduler", "slurm", "--launcher", "srun", "--mpi", "openmpii", "--network", "ib",
      "--partition", "compute:4:8"], {}, ["'openmpii'", "known: openmpi"]),
    ("a host no site names, without --system",
     lambda t: systems.fallback_note(systems.load_systems([site_file(t, "", ""), site.sites_folder()], say=SAID.append),
                                  argv=["reframe", "-r"], environ={}, hostname="laptop"), {},
     ["(acme)", "'laptop'", "--system local"]),
]
SAID = []  # what systems.load_systems says, one line each
# the mistakes only ReFrame itself finds, which `plan` starts to ask: a process test each
FOUND_BY_REFRAME = {"a -p that selects no environment"}


@pytest.mark.parametrize("mistake,run,environ,says", [
    pytest.param(*m, id=m[0], marks=pytest.mark.process if m[0] in FOUND_BY_REFRAME else pytest.mark.unit)
    for m in MISTAKES])
def test_a_mistake_is_one_line_naming_it_and_what_to_do(mistake, run, environ, says, tmp_path, monkeypatch,
                                                        capsys):
    monkeypatch.chdir(tmp_path)  # nothing is written anywhere else
    monkeypatch.setenv("JB_OUTPUT", str(tmp_path / "output"))
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    SAID.clear()
    try:  # a jitterbench command line, or the mistake met where ReFrame's configuration loads the systems
        argv = run(tmp_path) if callable(run) else run
    except site.SiteError as e:  # systems/config.py stops with it, in one line
        argv = SAID.append(str(e))
    if isinstance(argv, list) and argv and all(isinstance(a, str) for a in argv):
        try:
            status = cli.main(argv)
        except SystemExit as e:  # argparse's refusal
            status = e.code
        assert status not in (0, None), f"{mistake}: exit 0"
    captured = capsys.readouterr()
    lines = [line for line in (captured.out + captured.err).splitlines() if line.strip()] + SAID
    assert "Traceback" not in captured.out + captured.err
    assert len(lines) == 1, f"{mistake}: {lines}"
    for needle in says:
        assert needle in lines[0], f"{mistake}: {needle!r} not in {lines[0]!r}"


@pytest.mark.unit
def test_the_table_holds_twenty_mistakes_or_more():
    assert len(MISTAKES) >= 20 and len({m[0] for m in MISTAKES}) == len(MISTAKES)


@pytest.mark.unit
def test_a_site_file_that_does_not_load_leaves_the_other_systems_loaded(tmp_path):
    sites = site_file(tmp_path, "MPIS = {", "MPIS = {(")
    said = []
    names = [m.SYSTEM["name"] for m in systems.load_systems([sites, site.sites_folder()], say=said.append)]
    assert "acme" not in names and {"local", "vcluster"} <= set(names) and len(said) == 1

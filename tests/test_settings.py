"""Every JB_* variable (jitterbench/settings.py) against values that would be commands or
break a line: each is refused in one line naming the variable, or taken as the path it is;
nothing in it ever runs."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from jitterbench import settings

REPO = Path(__file__).resolve().parents[1]

HOSTILE = ["$(touch X)", "`touch X`", "a; touch X", "a b", "a\ntouch X", "a\rb", "{environ", "{x}/{environ}"]
# folders that must be there, plain paths too (issue 44: a hostile or missing one was found out late or never)
PATHS = {"JB_REFERENCE_DIR", "JB_PREFIX", "JB_OSU_PREFIX", "JB_IMB_PREFIX", "JB_PERFTEST_PREFIX", "JB_SPACK_VIEWS"}
TEMPLATES = {"JB_PREFIX", "JB_OSU_PREFIX", "JB_IMB_PREFIX"}
# paths ReFrame holds in its configuration or job scripts, expanding $ and running $(...) there
PLAIN_PATHS = {"JB_OUTPUT", "JB_RESULTS_DB", "JB_BUILD_ROOT", "JB_MPICH_ROOT", "JB_INTEL_MPI_ROOT", "JB_VCLUSTER_DIR"}
EVERY = settings.RULES


def verdict(name, value):
    try:
        settings.check(environ={name: value})
    except settings.SettingError as e:
        return str(e)
    return None


@pytest.mark.unit
@pytest.mark.parametrize("name", sorted(EVERY))
def test_each_variable_refuses_a_line_break_and_names_itself(name):
    for value in HOSTILE:
        said = verdict(name, value)
        if "\n" in value or "\r" in value:
            assert said and said.startswith(f"{name}=") and "\n" not in said, (name, value, said)
        elif said:
            assert said.startswith(f"{name}={value!r}: must be ") and "\n" not in said
    if name in PATHS:  # $( ), backticks, ; and spaces refused as in JB_OUTPUT; a folder that is there taken
        assert all("ReFrame expands $" in verdict(name, v) for v in HOSTILE[:4])
        assert "ReFrame expands $" in verdict(name, f"{REPO}/p $(touch X);`touch Y`; touch Z")
        there = f"{REPO}/{{environ}}" if name in TEMPLATES else str(REPO)
        assert verdict(name, there) is None
        missing = verdict(name, f"{REPO}/no-such-folder" + ("/{environ}" if name in TEMPLATES else ""))
        assert missing.startswith(f"{name}=") and "nothing is there" in missing and "\n" not in missing
    elif name in PLAIN_PATHS:
        assert verdict(name, "/tmp/a-plain_path/v1.2+x@y:z,w=~%") is None
        assert all("ReFrame expands $" in verdict(name, v) for v in HOSTILE[:4])
    elif name == "JB_RFM_OPTIONS":  # words of ReFrame's command line, never a shell's
        assert not any(verdict(name, v) for v in HOSTILE[:4])
    else:  # a name, modules, a number, a URL, a mode: none of these is one
        assert all(verdict(name, v) for v in HOSTILE[:3])


@pytest.mark.unit
def test_templates_take_environ_and_no_other_field():
    assert verdict("JB_PREFIX", f"{REPO}/{{environ}}") is None
    assert verdict("JB_OSU_PREFIX", f"{REPO}/jb-{{environ}}/bin") is None
    for bad in ("/opt/{env}", "/opt/{environ", "/opt/{0}", "/opt/{environ.__class__}"):
        assert "JB_PREFIX" in verdict("JB_PREFIX", bad)


@pytest.mark.unit
def test_the_pipeline_s_own_values_pass():
    good = {"JB_SYSTEM": "daint", "JB_PARTITION": "normal", "JB_ACCOUNT": "s1234", "JB_MODE": "acceptance",
            "JB_MODULES": "cray-mpich/8.1.28 openmpi@4.1.4", "JB_RFM_OPTIONS": "--max-retries=1 -S calls=100",
            "JB_RESULTS_URL": "https://elastic.example.org:9200/jb/_doc", "JB_RESULTS_EXTRAS": "site=cscs,cluster=daint",
            "JB_PERFTEST_SERVER_WAIT": "300", "JB_SPACK_SYSTEM": "local"}
    settings.check(environ=good)
    for name, bad in (("JB_MODE", "papers"), ("JB_PERFTEST_SERVER_WAIT", "nan"), ("JB_RESULTS_URL", "file:///etc"),
                      ("JB_RESULTS_EXTRAS", "site"), ("JB_MODULES", "a*")):
        assert verdict(name, bad).startswith(f"{name}=")


@pytest.mark.unit
def test_a_folder_variable_naming_a_file_is_refused(tmp_path):
    file = tmp_path / "f"
    file.write_text("mine")
    assert verdict("JB_OUTPUT", str(file)) == f"JB_OUTPUT={str(file)!r}: must be a folder, not a file"
    assert file.read_text() == "mine"


@pytest.mark.process
@pytest.mark.parametrize("argv", [["jitterbench", "table", "--help"], ["bash", "ci/pipeline.sh", "acceptance"]])
def test_the_command_and_the_pipeline_stop_at_a_bad_variable_in_one_line(tmp_path, argv):
    bin_dir = Path(sys.executable).parent
    cmd = [str(bin_dir / argv[0]) if argv[0] == "jitterbench" else argv[0], *argv[1:]]
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", JB_SYSTEM="local", JB_MODE="quick",
               JB_OUTPUT=str(tmp_path / "out"), JB_PREFIX="$(touch X)\n{environ}")
    if argv[0] == "bash":
        env.update(JB_PREFIX="", JB_ACCOUNT="acct\ntouch X")
    proc = subprocess.run(cmd, cwd=tmp_path if argv[0] == "jitterbench" else REPO, env=env, capture_output=True,
                          text=True, timeout=60)
    name = "JB_ACCOUNT" if argv[0] == "bash" else "JB_PREFIX"
    assert proc.returncode == 2 and proc.stdout == "" and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("jitterbench: ") and f"{name}=" in proc.stderr
    assert not (tmp_path / "X").exists() and not (REPO / "X").exists() and not (tmp_path / "out").exists()


@pytest.mark.unit
def test_launches_are_a_whole_number_from_1_to_1000_and_default_to_1_in_each_of_10_rounds():
    assert verdict("JB_LAUNCHES", "3") is None and verdict("JB_LAUNCHES", "1000") is None
    for bad in ("0", "1001", "-1", "2.5", "five", "1e3", " 5"):
        assert verdict("JB_LAUNCHES", bad) == f"JB_LAUNCHES={bad!r}: must be a whole number of launches from 1 to 1000"
    assert settings.launches({}) == settings.LAUNCHES == 1 and settings.launches({"JB_LAUNCHES": "7"}) == 7
    assert settings.launches({"JB_LAUNCHES": ""}) == 1  # empty counts as unset, as every variable's
    assert verdict("JB_ROUNDS", "1") is None and verdict("JB_ROUNDS", "100") is None
    for bad in ("0", "101", "-1", "2.5", "five", " 5"):
        assert verdict("JB_ROUNDS", bad) == f"JB_ROUNDS={bad!r}: must be a whole number of rounds from 1 to 100"
    assert settings.rounds({}) == settings.ROUNDS == 10 and settings.rounds({"JB_ROUNDS": "3"}) == 3


@pytest.mark.unit
def test_every_jb_name_the_repository_reads_is_known():
    """An unknown JB_* name stops every command (settings.check): a name read somewhere but not
    registered in settings.py would stop a site that sets it."""
    import re  # noqa: PLC0415
    read = re.compile(r"""(?:environ(?:\.get)?\(|environ\[|getenv\()["'](JB_[A-Z0-9_]+)|\$\{?(JB_[A-Z0-9_]+)""")
    names = {m[1] or m[2] for folder in ("jitterbench", "systems", "reframe_checks", "ci", "benchmarks", "src", "tests")
             for path in (REPO / folder).rglob("*") if path.suffix in (".py", ".sh", ".yml", ".c") and path.is_file()
             for m in read.finditer(path.read_text(errors="replace"))}
    assert len(names) > 20 and "JB_OUTPUT" in names  # the reader finds them
    assert names - settings.KNOWN == set()
    assert settings.unknown({"JB_OUPUT": "x", "JB_OUTPUT": "y", "PATH": "/bin"}) == [("JB_OUPUT", "JB_OUTPUT")]

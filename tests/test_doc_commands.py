"""The shell commands of the README and docs/ are the code's: every `jitterbench` subcommand and
option they name exists, every repository path they name is there, and the `--help` of every
subcommand they use runs here.  The rest need a site, a build, root or a run's output: each is
listed with what it needs (`python tests/test_doc_commands.py` prints the list).

Commands are read from the ```sh (and bare ```) blocks, their `\\` continuations joined, split at
`;`, `&&`, `||`, `|` and a loop's `do`, and from the inline code spans that start with
`jitterbench ` (docs/cli.md's synopses), where `[...]` marks what is optional."""
import argparse
import functools
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from jitterbench import cli  # noqa: E402

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
BLOCK = re.compile(r"^( *)```(sh|bash|)\n(.*?)^\1```", re.M | re.S)
SPAN = re.compile(r"(?<!`)`(jitterbench [^`]+)`(?!`)")
PATH_SPAN = re.compile(r"(?<!`)`([^`\s]+/[^`\s]*)`(?!`)")  # `src/core/jb_core.h`, `tests/test_x.py::test_y`
# the names the docs give to what a site chooses, and paths a command writes (never in a clone)
PLACEHOLDER = re.compile(r"mysite|twompi|ibsite|[$*<>{}]|\bNAME\b|\bDIR\b")
# what each program the docs run needs, where the unit tier cannot give it
NEEDS = {
    "reframe": "ReFrame runs or lists the checks: the reframe tier (a site's system for --system mysite)",
    "bash": "root and the network: set-up, builds and the virtual cluster (ci/test.sh's tiers)",
    "spack": "Spack 1.1 and a site's externals (the spack tier)",
    "git": "a Spack mirror (docs/spack.md)",
    "gitlab-ci-local": "gitlab-ci-local and a runner (the pipeline tier)",
    "cd": "a copy of the checkout",
}


def tracked_tops():
    out = subprocess.run(["git", "-C", str(REPO), "ls-files"], capture_output=True, text=True, check=True).stdout
    return {line.split("/")[0] for line in out.splitlines() if "/" in line}


def commands():
    """(doc, command words) of every command the docs name, in the docs' order."""
    out = []
    for doc in DOCS:
        text = doc.read_text()
        for block in BLOCK.finditer(text):
            joined = re.sub(r"\\\n\s*", " ", block[3])
            for line in joined.splitlines():
                words = shlex.split(line, comments=True)
                command = []
                for word in [*words, ";"]:
                    if word in (";", "&&", "||", "|", "do", "done") or word.endswith(";"):
                        if word.endswith(";") and word != ";":
                            command.append(word[:-1])
                        if command and command[0] not in ("for", "export"):
                            out.append((doc.name, command))
                        command = []
                    elif command or "=" not in word or word.startswith("-"):
                        command.append(word)  # a leading VAR=value is the command's environment
        for span in SPAN.finditer(text):
            words = [w for w in re.split(r"[\s\[\]|]+", span[1]) if w]
            if not any(w.endswith(":") for w in words[:3]):  # `jitterbench plan: checkout ...` is what it prints
                out.append((doc.name, words))
    return out


def program(words):
    """The program a command runs: jitterbench for `python -m jitterbench` too."""
    if words[:3] == ["python", "-m", "jitterbench"]:
        return "jitterbench", words[3:]
    return Path(words[0]).name, words[1:]


def subparsers(parser):
    return next((a.choices for a in parser._actions if isinstance(a, argparse._SubParsersAction)), {})


@functools.cache  # built once for the hundred commands the docs name: only read here
def command_parser():
    return cli.parser()


def jitterbench_problem(args):
    """What a jitterbench command line names that the command lacks, or None; and the
    subcommand path it used."""
    parser, path = command_parser(), []
    while args and subparsers(parser):
        if args[0] not in subparsers(parser):
            return f"no subcommand '{args[0]}' of jitterbench {' '.join(path)}".replace("  ", " "), path
        path.append(args.pop(0))
        parser = subparsers(parser)[path[-1]]
    known = parser._option_string_actions
    for word in args:
        option = word.split("=")[0]
        if re.fullmatch(r"--?[A-Za-z][\w-]*", option) and option not in known:
            return f"no option {option} of jitterbench {' '.join(path)}", path
    return None, path


def path_problems(words, tops):
    """The repository paths of a command (or of a doc's inline code) that do not exist; a test's
    node id (file::name) names a test function of that file."""
    out = []
    for before, word in zip(["", *words], words):
        word, _, test = word.rstrip(",.:").partition("::")
        if before in ("-o", "--output") or PLACEHOLDER.search(word) or word.split("/")[0] not in tops:
            continue
        if "/" in word and not (REPO / word).exists():
            out.append(f"no path {word} in the repository")
        elif test and not re.search(rf"^def {re.escape(test)}\(", (REPO / word).read_text(), re.M):
            out.append(f"no test {test} in {word}")
    return out


@pytest.mark.process
def test_the_docs_name_only_subcommands_options_and_paths_that_exist():
    tops, problems = tracked_tops(), []
    found = commands()
    assert len([c for c in found if program(c[1])[0] == "jitterbench"]) > 20  # the reader finds the docs' commands
    for doc, words in found:
        name, args = program(words)
        if name == "jitterbench":
            problem, _ = jitterbench_problem(list(args))
            if problem:
                problems.append(f"{doc}: {' '.join(words)}: {problem}")
        problems += [f"{doc}: {' '.join(words)}: {p}" for p in path_problems(words, tops)]
    for doc in DOCS:
        spans = [m[1] for m in PATH_SPAN.finditer(doc.read_text())]
        problems += [f"{doc.name}: {p}" for p in path_problems(spans, tops)]
    assert not problems, "\n".join(problems)


@pytest.mark.unit
def test_the_reader_finds_a_missing_subcommand_option_and_path():
    assert jitterbench_problem(["tabel", "r.json"])[0] == "no subcommand 'tabel' of jitterbench "
    assert jitterbench_problem(["plan", "--sytem", "x"])[0] == "no option --sytem of jitterbench plan"
    assert jitterbench_problem(["site", "new", "x", "--partition=a:1:1"])[0] is None
    assert path_problems(["reframe", "-C", "systems/confg.py"], {"systems"}) == \
        ["no path systems/confg.py in the repository"]
    assert path_problems(["x", "-o", "reference_data/new.yaml", "systems/sites/mysite.py"], {"reference_data"}) == []
    assert path_problems(["tests/test_docs.py::test_nothing_here"], {"tests"}) == \
        ["no test test_nothing_here in tests/test_docs.py"]


def need(words):
    """What a documented command needs that this tier lacks: for a jitterbench command, what its
    inputs are (its subcommand and options are checked, and its --help runs, here)."""
    name, args = program(words)
    if name == "jitterbench":
        what = args[0] if args else ""
        return {"plan": "ReFrame's listing of a system (the reframe tier; tests/test_site_new.py for a site)",
                "site": "writes a site into systems/sites/ (tests/test_site_new.py, in a scratch folder)",
                "simulate": "measured samples or documents (tests/test_simulate*.py)"}.get(
            what, "a run's output: reports, perflogs, a results store (the mpi and reframe tiers)")
    if name == ".":
        return "the shell's own: activates the virtual environment"
    return NEEDS.get(name, f"{name}: not run here")


@pytest.mark.unit
def test_every_documented_subcommand_s_help_runs_and_the_rest_say_what_they_need(capsys):
    used = set()
    for _, words in commands():
        name, args = program(words)
        if name == "jitterbench":
            used.add(tuple(jitterbench_problem(list(args))[1]))
        assert need(words), words
    assert {("plan",), ("site", "new"), ("reference",), ("history",), ("table",)} <= used
    for path in sorted(used):
        with pytest.raises(SystemExit) as exit_:
            cli.main([*path, "--help"])
        out = capsys.readouterr().out
        assert exit_.value.code == 0 and out.startswith("usage: jitterbench") and "details: " in out, path


if __name__ == "__main__":
    for doc, words in commands():
        print(f"{doc}: {' '.join(words)}\n    needs {need(words)}")

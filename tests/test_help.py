"""The jitterbench command's help texts share one style: every subcommand has a description and
a pointer to its manual, every argument that takes a value shows an upper-case name (metavar), and
every default is written "(default: X)" (docs/cli.md)."""
import argparse
import re
from pathlib import Path

import pytest

from jitterbench import cli

REPO = Path(__file__).resolve().parent.parent
METAVAR = re.compile(r"[A-Z][A-Z0-9_]*(?:[:=.,|\[\] -]*[A-Z0-9_]*)*(?:\.\.\.)?\Z|\[[A-Z]+=\][A-Z]+\Z|\[TEST\.\]VAR=VAL\Z")


def parsers():
    """(command, parser) of the command and each subcommand at every level."""
    out, todo = [], [("jitterbench", cli.parser())]
    while todo:
        name, p = todo.pop()
        out.append((name, p))
        for action in p._actions:
            if isinstance(action, argparse._SubParsersAction):
                todo += [(f"{name} {sub}", sp) for sub, sp in action.choices.items()]
    return out


def shown_name(action):
    if action.choices is not None and action.metavar is None:
        return None  # argparse shows the choices themselves: {a,b}
    if action.metavar is not None:
        return " ".join(action.metavar) if isinstance(action.metavar, tuple) else action.metavar
    return action.dest.upper() if action.option_strings else action.dest


@pytest.mark.unit
@pytest.mark.parametrize("name,parser", parsers(), ids=lambda x: x if isinstance(x, str) else "")
def test_a_subcommand_s_help_is_in_the_one_style(name, parser):
    if name != "jitterbench":
        assert parser.description, f"{name}: no description"
        docs = re.fullmatch(r"details: (\S+)( \([^)]*\))?", parser.epilog or "")
        assert docs, f"{name}: its epilog is not the manual's pointer: {parser.epilog!r}"
        assert (REPO / docs[1].split("#")[0]).is_file(), f"{name}: its manual {docs[1]} is no file"
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction, argparse._SubParsersAction)):
            continue
        what = f"{name} {'/'.join(action.option_strings) or action.dest}"
        assert action.help, f"{what}: no help"
        if action.nargs != 0:
            shown = shown_name(action)
            assert shown is None or METAVAR.match(shown), f"{what}: its value is named {shown!r}, not in capitals"
        assert not re.search(r"\(default [^:]|\[[\w,.\s]+\]\s*$|default: \[", action.help), \
            f"{what}: a default written another way than (default: X): {action.help!r}"
        if action.default not in (None, False, [], argparse.SUPPRESS) and action.nargs != 0:
            assert "(default: " in action.help or "default" in action.help, f"{what}: default {action.default!r} unsaid"

"""The terminal: what every command prints through.  Refusals in one line on standard error
(one_line, say, OneLineParser), the one style of the help texts (subcommand, DOCS) and text
tables (format_table).  Imports nothing of the package
but settings, so that any command module may use it without a circle."""
from __future__ import annotations

import argparse
import sys

from .settings import CONTROL


def one_line(text) -> str:
    """text with its line breaks and other control characters written as escapes: an error
    that quotes a value of the user's stays one line."""
    return CONTROL.sub(lambda m: repr(m.group())[1:-1], str(text))


def say(message) -> None:
    """One line on standard error."""
    print(one_line(message), file=sys.stderr)


class OneLineParser(argparse.ArgumentParser):
    """argparse's refusals in one line, naming the command and where its usage is (--help):
    its subcommands' parsers are of the same class (add_subparsers takes the parent's)."""

    def error(self, message):
        if message.startswith("the following arguments are required"):
            # argparse says what is missing before what it does not know: `site new -rf` would be
            # told to give NAME, when -rf is the mistake
            unknown = self._unknown_options()
            if unknown:
                message = f"unrecognized arguments: {' '.join(unknown)}"
        self.exit(2, one_line(f"{self.prog}: error: {message} (usage: {self.prog} --help)") + "\n")

    def _unknown_options(self) -> list:
        """The words of the command line being parsed that look like options this parser lacks
        (stopping at --; a negative number is a value, as argparse takes it)."""
        unknown = []
        for word in getattr(self, "_parsing", []):
            if word == "--":
                break
            name = word.split("=", 1)[0]
            if (word.startswith("-") and word != "-" and not self._negative_number_matcher.match(word)
                    and name not in self._option_string_actions
                    and not (name.startswith("--") and any(o.startswith(name) for o in self._option_string_actions))):
                unknown.append(word)
        return unknown

    def parse_known_args(self, args=None, namespace=None):
        """A subcommand's parser refuses what it does not know itself (argparse leaves that to the
        top parser, whose line would name `jitterbench`, not the subcommand whose --help helps)."""
        self._parsing = list(sys.argv[1:] if args is None else args)
        namespace, extras = super().parse_known_args(args, namespace)
        is_subcommand = " " in self.prog
        has_subcommands = any(isinstance(a, argparse._SubParsersAction) for a in self._actions)
        if extras and is_subcommand and not has_subcommands:
            self.error(f"unrecognized arguments: {' '.join(extras)}")
        return namespace, extras


# The help texts' one style (tests/test_help.py holds every parser to it): a subcommand's line in
# its parent's --help is its description too, and its --help ends with where its manual is; a
# value an argument takes is named in capitals (metavar); a default is written "(default: X)".
DOCS = "details: {}"


def subcommand(sub, name, what, docs, **kwargs):
    """The parser of subcommand name under sub (argparse's add_subparsers): what it does, and
    docs, the manual that says more (a path in the repository, with an optional "(section)")."""
    return sub.add_parser(name, help=what, description=what[0].upper() + what[1:] + ".",
                          epilog=DOCS.format(docs), **kwargs)


def format_table(header, rows) -> str:
    """header and rows (sequences of strings) as left-aligned columns two blanks apart."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(header, widths))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)

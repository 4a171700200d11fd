"""The one style of the jitterbench command's help texts (tests/test_help.py holds every parser to
it): a subcommand's line in its parent's --help is its description too, and its --help ends with
where its manual is; a value an argument takes is named in capitals (metavar); a default is
written "(default: X)"."""

DOCS = "details: {}"


def subcommand(sub, name, what, docs, **kwargs):
    """The parser of subcommand name under sub (argparse's add_subparsers): what it does, and
    docs, the manual that says more (a path in the repository, with an optional "(section)")."""
    return sub.add_parser(name, help=what, description=what[0].upper() + what[1:] + ".",
                          epilog=DOCS.format(docs), **kwargs)

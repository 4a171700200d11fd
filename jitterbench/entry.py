"""The `jitterbench` command's entry point.  SIGTERM and SIGHUP (a job's time limit, a closed
terminal) end it as Ctrl-C does: every file it was writing is left whole or as it was (files.py)
and it says so in one line.  Ctrl-C while its modules are still loading (NumPy, ReFrame's
support; most of a second) ends it the same way."""
import sys

from . import signals


def main() -> int:
    signals.install()  # first: the one path of SIGINT, SIGTERM and SIGHUP (jitterbench/signals.py)
    try:
        from .cli import main as command  # noqa: PLC0415
    except KeyboardInterrupt:
        signals.quiet()
        print("jitterbench: interrupted", file=sys.stderr)
        return 130
    try:
        return command()
    except KeyboardInterrupt:  # a second signal, while the first was being said: already said
        return 130
    finally:
        signals.quiet()

"""The `jitterbench` command's entry point.  SIGTERM and SIGHUP (a job's time limit, a closed
terminal) end it as Ctrl-C does: every file it was writing is left whole or as it was (files.py)
and it says so in one line.  Ctrl-C while its modules are still loading (NumPy, ReFrame's
support; most of a second) ends it the same way."""

from . import signals


def main() -> int:
    signals.install()  # first: the one path of SIGINT, SIGTERM and SIGHUP (jitterbench/signals.py)
    status = None
    try:
        from .cli import main as command  # noqa: PLC0415
        status = command()
        # inside the try: a signal that came as the command ended is raised on entering quiet (Python
        # acts on it at the next call), and outside it would end the process by SIGINT with no line
        signals.quiet()
        return status
    except KeyboardInterrupt:  # while the modules loaded, or as the command ended (130: its line said)
        return 130 if status == 130 else signals.interrupted()

"""The `jitterbench` command's entry point.  SIGTERM and SIGHUP (a job's time limit, a closed
terminal) end it as Ctrl-C does: every file it was writing is left whole or as it was (files.py)
and it says so in one line.  Ctrl-C while its modules are still loading (NumPy, ReFrame's
support; most of a second) ends it the same way, once they have loaded."""

from . import signals


def main() -> int:
    """The command's status; an interrupted command ends the process here (signals.end)."""
    signals.install()  # first: the one path of SIGINT, SIGTERM and SIGHUP (jitterbench/signals.py)
    status = None
    try:
        # a signal while the modules load is acted on once they have: an extension module cut short
        # in its own initialisation may crash the process (orjson's assumes the standard modules it
        # imports load, ijl/orjson#310: a SIGINT 0.38-0.42 s into `simulate halo` ended 2 of 300
        # trials by SIGSEGV, inside history.py's `import orjson`)
        with signals.held():
            from .cli import main as command  # noqa: PLC0415
        status = command()
        # inside the try: a signal that came as the command ended is raised on entering quiet (Python
        # acts on it at the next call), and outside it would end the process by SIGINT with no line
        signals.quiet()
    except KeyboardInterrupt:  # while the modules loaded, or as the command ended (130: its line said)
        status = 130 if status == 130 else signals.interrupted()
    except Exception:
        # a signal inside a module's import comes out in the module's words (NumPy's import turns the
        # KeyboardInterrupt into "ImportError: numpy._core.multiarray failed to import"): where a
        # signal came, any error is the interrupt; else it is the code's own, and raised
        if not signals.received():
            raise
        status = 130 if status == 130 else signals.interrupted()
    if status != 130 and signals.received():
        # the signal's KeyboardInterrupt swallowed on the way (a library's `except ImportError` around an
        # optional import) and the command went on: it was still asked to stop
        status = signals.interrupted()
    if status == 130:
        signals.end(status)
    return status

"""The one path of Ctrl-C, SIGTERM and SIGHUP (a job's time limit, a closed terminal): each
becomes KeyboardInterrupt in the main thread, which the command ends in one line (exit 130),
every file it was writing left whole or as it was (files.py).

A handler of Python's runs between any two bytecodes, a garbage-collection callback's (a
__del__, a weakref's) too; Python reports what such a callback raises as "Exception ignored"
and goes on as if nothing came (the command then ended 0).  So the one handler raises, and the
hook of unraisable exceptions, which is where such a swallowed KeyboardInterrupt ends, neither
prints nor raises: it sets an alarm a millisecond on, whose handler raises it again once the hook
and the callback are done (a thread's _thread.interrupt_main would not do: the hook waits for the
thread to start, and the handler would run inside the wait).  Inside held() the handler only
notes the signal; the block raises it when it ends.  Standard library only: installed before the
command's modules load.
"""
from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import warnings

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
_noted: list = []      # signals that came inside held(), acted on when it ends
_holding = [0]         # depth of held() blocks
_redeliver = [False]   # a signal a callback swallowed, to be raised again by the alarm
_received = [False]    # whether any came: a library may turn the KeyboardInterrupt into its own error
_installed = [False]   # install() called: the process is the command's (not a library caller's)
REDELIVER_S = 0.001    # after the hook has returned: never inside it (the handler would raise there)


def _on_signal(signum, frame):
    _received[0] = True
    if _installed[0]:
        # the command is ending: a library's warning about the interrupt is not a second line (a
        # Cython module whose import it cut short warns "failed to patch module with custom type"
        # after passing it to sys.unraisablehook: Cython's Coroutine.c, __Pyx_Coroutine_patch_module)
        warnings.simplefilter("ignore")
    if _holding[0]:
        _noted.append(signum)
        return
    raise KeyboardInterrupt


def _unraisable(info, _default=sys.unraisablehook):
    if isinstance(info.exc_value, KeyboardInterrupt):  # a signal that landed in a callback: again, outside it
        _redeliver[0] = True
        signal.setitimer(signal.ITIMER_REAL, REDELIVER_S)
        return
    _default(info)


def _on_alarm(signum, frame):
    if _redeliver[0]:
        _redeliver[0] = False
        _on_signal(signum, frame)


def _excepthook(kind, value, tb, _default=sys.excepthook):
    if issubclass(kind, KeyboardInterrupt) and _received[0]:  # the command says it in its one line
        return
    _default(kind, value, tb)


def install() -> None:
    """The handler for SIGINT, SIGTERM and SIGHUP, the hook that redelivers a signal a callback
    swallowed (by SIGALRM: nothing else of the command sets an alarm), and the hook that keeps a C
    extension from printing the signal's traceback: NumPy's import_array() prints the error that
    stopped NumPy's import (PyErr_Print, which calls sys.excepthook) before raising its ImportError."""
    for signum in SIGNALS:
        signal.signal(signum, _on_signal)
    signal.signal(signal.SIGALRM, _on_alarm)
    sys.unraisablehook = _unraisable
    sys.excepthook = _excepthook
    _installed[0] = True


def received() -> bool:
    """Whether Ctrl-C, SIGTERM or SIGHUP came: an error raised since may be the interrupt in a
    library's words (a C extension's import that a KeyboardInterrupt stopped is an ImportError)."""
    return _received[0]


def quiet() -> None:
    """The command is ending: a signal from now on is ignored, and no alarm is left to redeliver one,
    so that the one line said is the last.  The signals are ignored first, and a signal that lands
    while they are being ignored (its KeyboardInterrupt raised here) is the one being ended: it is
    caught and the ignoring done again, so that none can escape the command (a KeyboardInterrupt
    escaping the entry point ends the process by SIGINT, with no line: 1 of 60 random SIGTERMs
    during `report` did so, landing as the command ended)."""
    while True:
        try:
            if _installed[0] and threading.current_thread() is threading.main_thread():  # the command's own process
                for signum in SIGNALS:
                    signal.signal(signum, signal.SIG_IGN)
                signal.setitimer(signal.ITIMER_REAL, 0)
            _redeliver[0] = False
            return
        except KeyboardInterrupt:
            continue


def interrupted() -> int:
    """Ctrl-C, SIGTERM or SIGHUP ended the command: one line and the exit status 130."""
    quiet()
    print("jitterbench: interrupted", file=sys.stderr)
    return 130


def end(status: int):
    """The interrupted command's process ends here with status, its output flushed, without Python's
    own ending: a KeyboardInterrupt that once left code run by exec() (dataclasses make each __init__
    so) is noted by Python as unhandled for good, even once caught, and `python -m` then ended the
    process by SIGINT after the one line; and a module whose import the signal cut short is not
    finalised half-made."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a reader gone, a stream closed: nothing more to say
            pass
    os._exit(status)


@contextlib.contextmanager
def held():
    """Ctrl-C, SIGTERM and SIGHUP held back for the block: one that comes meanwhile is noted and
    acted on (KeyboardInterrupt) when the block ends.  The one handler is put in place for the
    block where it is not yet (a library caller's), and what was there put back after.  (Signal
    masks would not do: a signal goes to any thread that leaves it unblocked, such as tqdm's
    monitor, and Python acts on it in the main thread all the same.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old = {s: signal.signal(s, _on_signal) for s in SIGNALS}
    _holding[0] += 1
    try:
        yield
    finally:
        _holding[0] -= 1
        for signum, handler in old.items():
            signal.signal(signum, handler)
        if _noted and not _holding[0]:
            _noted.clear()
            raise KeyboardInterrupt

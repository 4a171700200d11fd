"""The Python package's layout: which commands load ReFrame.  Only a ReFrame run and `plan`
(which asks ReFrame what a mode selects) need it; a command that reads files does not pay for
it (`jitterbench summarize --help`: 0.54 s with ReFrame loaded, 0.28 s without, medians of 20)."""
from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = """
import sys
from jitterbench import cli
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
print(sorted({name.split(".")[0] for name in sys.modules} & {"reframe"}))
"""


@pytest.mark.process
@pytest.mark.parametrize("command", ["summarize", "table", "report", "compare", "reference", "history", "simulate",
                                     "site"])
def test_a_command_that_reads_files_does_not_load_reframe(command):
    out = subprocess.run([sys.executable, "-c", PROBE, command, "--help"], capture_output=True, text=True, timeout=60)
    assert out.stdout.splitlines()[-1] == "[]", out.stdout[-500:]

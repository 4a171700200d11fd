"""jb-local, the local scheduler that waits for the job (jitterbench/harness/schedulers.py)."""
from __future__ import annotations

import subprocess

import pytest

from jitterbench.harness.schedulers import wait_for_exit


@pytest.mark.process
def test_the_local_scheduler_waits_for_the_job_s_exit_or_its_time_left():
    """jb-local (jitterbench/harness/schedulers.py) blocks until the job's process exits, not a poll's
    sleep, and no longer than the time it is given; a process already reaped is not waited for."""
    short = subprocess.Popen(["sleep", "0.2"])
    assert wait_for_exit(short.pid, 60) and short.poll() == 0  # exited: a zombie until reaped here
    long = subprocess.Popen(["sleep", "60"])
    try:
        assert not wait_for_exit(long.pid, 0.1) and long.poll() is None  # the time is up, the job runs on
    finally:
        long.kill()
        long.wait()
    assert not wait_for_exit(long.pid, 60)  # reaped: nothing to wait for, so no wait

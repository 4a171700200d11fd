"""`jb-local`: ReFrame's local scheduler, waiting in the kernel for the job instead of polling it.

ReFrame's serial policy looks at a local job (waitpid, WNOHANG), sleeps 1/poll_rate_max and looks
again.  On `local` the job shares the CPUs with ReFrame, so each look wakes ReFrame beside the
benchmark's spinning ranks: at ReFrame's default first rate (10 a second) MPICH's JacobiCheck ran its
first launch of a case at 1.54x the median of the others.  Polling at most once a second removed that,
but then every case lasted at least a second, for launches of 0.2-0.4 s: about 25 s of each round of
the quick suite (docs/references.md, "What the harness added").  Here `poll` of one job blocks on the
job's pidfd (Linux >= 5.3, pidfd_open(2)) until the job's process exits or its time limit is due, then
does what ReFrame's does: no wake-up while the benchmark runs, and the case ends when its job does.
Importing this module registers it, as harness.launchers does its launchers.
"""
from __future__ import annotations

import os
import select
import time

from reframe.core.backends import register_scheduler
from reframe.core.schedulers.local import LocalJobScheduler


def wait_for_exit(pid, timeout):
    """Block until process `pid` exits (it stays a zombie for its parent to reap) or `timeout` seconds
    pass (None: no limit).  True if it exited; False on the timeout, or where pidfds are missing (not
    Linux, or a kernel before 5.3) or `pid` is gone already: the caller then looks as ReFrame does."""
    try:
        fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        return False
    try:
        return bool(select.select([fd], [], [], timeout)[0])
    finally:
        os.close(fd)


@register_scheduler("jb-local", local=True)
class WaitingLocalScheduler(LocalJobScheduler):
    def poll(self, *jobs):
        # Several jobs at once (the asynchronous policy with max_jobs > 1) are looked at in turn, as
        # ReFrame does: waiting for one would hold up the others.
        if len(jobs) == 1 and jobs[0] is not None and jobs[0].jobid is not None and not self.finished(jobs[0]):
            wait_for_exit(int(jobs[0].jobid), self._time_left(jobs[0]))
        super().poll(*jobs)

    def _time_left(self, job):
        """Until the next thing ReFrame's poll must do for a job still running: kill it once its
        grace period after a cancel is over, cancel it at its time limit."""
        now = time.time()
        if job.cancel_time:
            return max(0.0, self.CANCEL_GRACE_PERIOD - (now - job.cancel_time))
        if job.time_limit:
            return max(0.0, job.time_limit - (now - job.submit_time))
        return None

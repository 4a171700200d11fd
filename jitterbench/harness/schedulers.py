"""ReFrame's schedulers, mended where they misread a job's state.  Importing this module registers
them, as harness.launchers does its launchers.

`jb-local`: ReFrame's local scheduler, waiting in the kernel for the job instead of polling it.

ReFrame's serial policy looks at a local job (waitpid, WNOHANG), sleeps 1/poll_rate_max and looks
again.  On `local` the job shares the CPUs with ReFrame, so each look wakes ReFrame beside the
benchmark's spinning ranks: at ReFrame's default first rate (10 a second) MPICH's JacobiCheck ran its
first launch of a case at 1.54x the median of the others.  Polling at most once a second removed that,
but then every case lasted at least a second, for launches of 0.2-0.4 s: about 25 s of each round of
the quick suite (docs/references.md, "What the harness added").  Here `poll` of one job blocks on the
job's pidfd (Linux >= 5.3, pidfd_open(2)) until the job's process exits or its time limit is due, then
does what ReFrame's does: no wake-up while the benchmark runs, and the case ends when its job does.

`jb-squeue`: ReFrame's `squeue` scheduler (for a Slurm that keeps no accounting), believing that a job
ended only where squeue answered without it.  ReFrame's takes every job squeue does not list for
COMPLETED, and squeue that cannot reach the controller lists none: it prints "slurm_load_jobs error:
Unable to contact slurm controller" (or "Socket timed out" when the controller is busy) and exits 1,
where a job that ended is left out with exit 0 (Slurm 22.05, both tried on the virtual cluster).  The
check then read the output of a job still running: on the virtual cluster, a two-node EagerCheck read an
empty rfm_job.out and failed with "openmpi gave no account of its transport", its first launch's
stdout holding the on-node pair only.
"""
from __future__ import annotations

import os
import select
import time

import reframe.utility.osext as osext
from reframe.core.backends import register_scheduler
from reframe.core.logging import getlogger
from reframe.core.schedulers.local import LocalJobScheduler
from reframe.core.schedulers.slurm import SqueueJobScheduler, slurm_state_completed


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


@register_scheduler("jb-squeue")
class ConfirmingSqueueScheduler(SqueueJobScheduler):
    def poll(self, *jobs):
        jobs = [job for job in jobs if job is not None]
        before = {job.jobid: job.state for job in jobs}
        super().poll(*jobs)
        ended = [job for job in jobs if self.finished(job) and not slurm_state_completed(before[job.jobid])]
        if not ended:
            return
        # asked again: a job squeue lists has its listed state; one it leaves out, answering, has ended
        answer = osext.run_command(f"{self._squeue} -h -j {','.join(job.jobid for job in ended)} -o %i|%T")
        listed = dict(line.split("|", 1) for line in answer.stdout.split() if "|" in line)
        for job in ended:
            if answer.returncode != 0:
                job._state = before[job.jobid]  # no news: as it was
            elif job.jobid in listed:
                job._state = listed[job.jobid]
        if answer.returncode != 0:
            getlogger().debug(f"jb-squeue: squeue did not answer ({answer.stderr.strip()}): "
                              f"job(s) {', '.join(job.jobid for job in ended)} asked after again")

"""The suite in rounds (docs/references.md, "Launches"): a case run once in each of several rounds of
one ReFrame session, its figure the median over every launch of every round, judged in its last
round (Rounds); and the median over the launches kept that a case's figures are.
"""
from __future__ import annotations

import json
import statistics

import reframe as rfm
import reframe.utility.osext as osext
import reframe.utility.sanity as sn
from reframe.core.builtins import run_after, run_before, variable

from .. import reframe_report


# the cases a session ran so far of the case each round belongs to (Rounds.pool_the_rounds):
# {(case, partition, environ): {round: {variable: [values]}}}.  A ReFrame session runs every test's
# hooks in its one process, so the rounds of a case meet here.
_ROUNDS_RUN = {}


class Rounds(rfm.RegressionTestPlugin):
    """The suite in rounds (docs/references.md, "Launches"): the modes run every case several times
    in one session (ReFrame's --repeat, settings.ROUNDS), in a random order, so a case's launches
    lie apart in time, not within one slow episode of the machine.  Each round is a test case of
    its own; the last of a case's rounds to run holds the case's figure (rounds_pooled = rounds):
    each performance variable the median over every launch of every round (over the rounds' own
    values where a variable is no launch's: a ratio of medians, OSU's one launch a round), judged
    against the references, and launch_values holds them all in round order.  An earlier round
    logs its own values, judged by no reference: readers take the last round's
    (reframe_report.last_attempts, runs.read_perflog).  A check whose verdict one launch decides
    (over_launches False) runs in the first round only."""

    rounds = variable(int, value=1, loggable=True)
    # the rounds this case's values are the median over: its own, or all where it is the case's last
    rounds_pooled = variable(int, value=1, loggable=True)

    @run_after("init")
    def count_the_rounds(self):
        space = type(self).param_space
        self.rounds = len(space[reframe_report.ROUND]) if reframe_report.ROUND in space.params else 1
        if not getattr(self, "over_launches", True) and self.rounds > 1:
            self.skip_if(getattr(self, reframe_report.ROUND) > 0, "one launch decides this check: it runs in the first round only")
            self.rounds = 1

    @run_before("performance", always_last=True)  # after the references are chosen (SystemReferences)
    def pool_the_rounds(self):
        if self.is_dry_run():
            return
        if self.rounds == 1:
            self.before_the_verdict()
            return
        with osext.change_dir(self.stagedir):  # where ReFrame evaluates them: the output's names are relative
            own = {name: sn.evaluate(function) for name, function in self.perf_variables.items()}
        launches = json.loads(getattr(self, "launch_values", "") or "{}")
        case = (reframe_report.case_name(self.display_name), self.current_partition.fullname, self.current_environ.name)
        run = _ROUNDS_RUN.setdefault(case, {})
        run[getattr(self, reframe_report.ROUND)] = ({name: launches.get(name, [value]) for name, value in own.items()},
                                                    json.loads(getattr(self, "launch_pair_ns", "") or "[]"))
        if len(run) < self.rounds:
            self.reference = {}  # an earlier round: its own values are logged, never judged
            return
        del _ROUNDS_RUN[case]
        every = {name: [v for r in sorted(run) for v in run[r][0][name]] for name in own}
        if hasattr(self, "launch_values"):
            self.launch_values = json.dumps(every, separators=(",", ":"))
        pairs = [p for r in sorted(run) for p in run[r][1]]
        if hasattr(self, "launch_pair_ns"):
            self.launch_pair_ns = json.dumps(pairs)
        kept = self.near_launches(pairs) if hasattr(self, "near_launches") else []
        self.perf_variables = {name: sn.make_performance_function(sn.defer(median_of_near(self, values, kept)),
                                                                  self.perf_variables[name].unit)
                               for name, values in every.items()}
        self.rounds_pooled = self.rounds
        self.before_the_verdict()

    def before_the_verdict(self):
        """A check's last word on the case's figure, once its rounds are pooled, before ReFrame judges
        it: called here, after the pooling, as ReFrame orders no hook after another's always-last one
        (JitterbenchCheck judges its node first).  An earlier round, judged by nothing, has none."""


def median_of_near(test, values, kept):
    """The median over the launches kept (LaunchedCheck.near_launches, one per launch); a
    variable with one value a round rather than a launch (a ratio of medians) takes them all.
    test.launches_set_aside counts the launches left out."""
    if len(kept) != len(values):
        return statistics.median(values)
    test.launches_set_aside = kept.count(False)
    return statistics.median(v for v, k in zip(values, kept) if k)

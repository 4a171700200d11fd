"""GPCNeT's congestion impact (Chunduri et al., SC19): jb-congestion on all the partition's nodes,
one task per node, canaries on a fifth of them (two at least) and congestors on the rest, a kind
for every two congestor nodes at least (all-to-all, then incast, then broadcast): a group of one
node congests no link.  Its performance variables are each canary's impact factors, of the mean
and of the 99th percentile (impact_avg_latency, ...), asserted against the references.
"""
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, sanity_function, variable

from jitterbench import benchmarks
from jitterbench.harness.checks import JitterbenchCheck
from jitterbench.harness.partitions import machine_scale

RECORD = benchmarks.by_benchmark("congestion")
CANARIES = ("latency", "bandwidth", "allreduce")
CONGESTORS = ("alltoall", "incast", "bcast")
# four nodes at least (the record's min_nodes): two for the canaries, two for one kind of congestor
EVERY_NODE = machine_scale(RECORD.min_nodes)


def canary_nodes(nodes):
    """The benchmark's count (src/congestion/main.c): a fifth, two at least, one node left over."""
    return min(max(2, round(0.2 * nodes)), nodes - 1)


@rfm.simple_test
class CongestionCheck(JitterbenchCheck):
    descr = "GPCNeT: the congestion impact of all-to-all, incast and broadcast on latency, bandwidth and allreduce"
    benchmark = "congestion"
    nodes = parameter(EVERY_NODE, type=int, loggable=True)
    tasks_per_node = parameter([1], type=int, loggable=True)
    eager_limit = parameter(["default"], type=str, loggable=True)
    distribution = parameter(["block"], type=str, loggable=True)
    # the benchmark's --rounds (isolated and congested phases alternated); not `rounds`, the suite's
    # rounds of every check (harness.rounds.Rounds): one name for both kept ReFrame from loading this file
    phase_rounds = variable(int, value=RECORD.value("rounds"), loggable=True)
    congestors = variable(str, value="", loggable=True)  # the kinds the run had nodes for
    quick_variant = {**JitterbenchCheck.quick_variant, "tasks_per_node": [1],
                     "nodes": machine_scale(RECORD.min_nodes, quick=True)}
    # one launch: its figures are ratios of the congested to the isolated phase, which alternate
    # over rounds within the launch, so what one launch shares with the other cancels
    over_launches = False

    @run_after("setup")
    def options(self):
        kinds = (self.nodes - canary_nodes(self.nodes)) // 2
        self.congestors = ",".join(CONGESTORS[:min(kinds, len(CONGESTORS))])
        self.executable_opts = ["--congestors", self.congestors, "--rounds", str(self.phase_rounds), "--json",
                                "congestion.json"]
        self.keep_files = ["congestion.json"]
        self.perf_variables = self.sweep_variables(
            self.quantities("impact_avg", "impact_p99"), [(c, {}, {"canary": c, "phase": "congested"}) for c in CANARIES])
        self.perf_variables.update(self.sweep_variables(
            self.quantities("bandwidth"), [("bandwidth", {}, {"canary": "bandwidth", "phase": "congested"})]))

    @sanity_function
    def every_canary_in_both_phases(self):
        return sn.all([self.launched(),
                       sn.assert_eq(sn.count(sn.extractall(r"^JB_RESULT .*\sphase=(isolated|congested)\s",
                                                            self.stdout)), 2 * len(CANARIES),
                                    msg="{0} canary results, not {1}"),
                       self.undisturbed()])

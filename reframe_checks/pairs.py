"""Every node pair of the partition: jb-pairs's latency and bandwidth in the rounds of a
round-robin tournament, one task per node (JSC's LinkTest, NVIDIA's ClusterKit).

It runs on all the partition's nodes (its max_nodes: the node list is the partition's) and fails
naming the outlier nodes and their hosts; its performance variables are the median pair latency
and bandwidth (asserted against the references), the slowest pair's latency and bandwidth
(reported).  The document and the full matrix (pairs-matrix.csv, each node writing its rows) are
kept.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from jitterbench import benchmarks
from jitterbench.harness.checks import JitterbenchCheck
from jitterbench.harness.partitions import machine_scale

RECORD = benchmarks.by_benchmark("pairs")
EVERY_NODE = machine_scale(RECORD.min_nodes)


@rfm.simple_test
class PairsCheck(JitterbenchCheck):
    descr = "every node pair: latency, bandwidth, and the pairs and nodes that stand out"
    benchmark = "pairs"
    nodes = parameter(EVERY_NODE, type=int, loggable=True)
    tasks_per_node = parameter([1], type=int, loggable=True)  # one task a node: the pair is the nodes'
    eager_limit = parameter(["default"], type=str, loggable=True)
    distribution = parameter(["block"], type=str, loggable=True)
    windows = variable(int, value=RECORD.value("windows"), loggable=True)
    bandwidth_size = variable(int, value=RECORD.value("bandwidth_size"), loggable=True)
    # the nodes the run named outliers, 'node (host)', or 'none'
    named_nodes = variable(str, value="", loggable=True)
    quick_variant = {**JitterbenchCheck.quick_variant, "tasks_per_node": [1],
                     "nodes": machine_scale(RECORD.min_nodes, quick=True)}
    # one launch: the tournament already repeats every pair over passes with the nodes shuffled
    # afresh, and names a pair or node only where every pass agrees (src/pairs/README.md)
    over_launches = False

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--windows", str(self.windows), "--bandwidth-size", str(self.bandwidth_size), "--matrix", "pairs-matrix.csv", "--json", "pairs.json"]
        self.keep_files = ["pairs.json", "pairs-matrix.csv"]
        self.perf_variables = {name: sn.make_performance_function(sn.extractsingle(
                                   rf"^JB_RESULT .*\sscope=pairs\s.*\s{field}=(\S+)", self.stdout, 1, float), unit)
                               for name, (field, unit) in self.quantities().items()}

    @run_before("run")
    def give_shared_cores_back(self):
        # where nodes share their CPUs (extras binding other than 'cores': the virtual cluster), two
        # nodes' ranks spinning on one core make their pair 4 ms slow, an outlier of the sharing, not
        # of the network: the MPI yields there (the environment's yield_vars, jitterbench/mpi.py)
        if self.current_partition.extras.get("binding", "cores") != "cores":
            self.env_vars.update(self.current_environ.extras.get("yield_vars", {}))

    @run_before("sanity")
    def name_the_outliers(self):
        if self.is_dry_run():
            return
        stdout = os.path.join(self.stagedir, self.stdout.evaluate())
        named = sn.evaluate(sn.extractall(r"^JB_RESULT .*\sscope=node node=(\d+) host=(\S+) .*\soutlier=1", stdout,
                                          (1, 2)))
        self.named_nodes = ", ".join(f"{node} ({host})" for node, host in named) or "none"

    @sanity_function
    def no_outlier_node(self):
        return sn.all([self.launched(),
                       sn.assert_eq(sn.count(sn.extractall(r"^JB_RESULT .*\sscope=node ", self.stdout)), self.nodes,
                                    msg="{0} node summaries for {1} nodes"),
                       sn.assert_eq(self.named_nodes, "none",
                                    msg="outlier nodes (more than half their pairs outliers in one figure; the pairs "
                                        "and the rate in pairs.json): {0}"),
                       self.undisturbed()])

"""What the system takes from every core: jb-noise's selfish-detour probe on every core of
every node at once (Beckman et al.), the noise the halo and all-to-all studies blame for a
per-call MAX above the AVG.

One task per core (the partition's max_tasks_per_node), for `duration` seconds.  Its
performance variables are the worst node's, as a bulk-synchronous code waits for it:
noise_fraction (time lost to detours), rate (detours per second per core), length_p99 and
length_max (us).  The benchmark's document and rank 0's detour trace are kept: the trace
is what `jitterbench simulate alltoall|halo --interrupt-trace` replays.
"""
import os

import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, sanity_function, variable

from jitterbench import benchmarks
from jitterbench.harness.checks import JitterbenchCheck
from jitterbench.harness.partitions import partition_scale

RECORD = benchmarks.by_benchmark("noise")

@rfm.simple_test
class NoiseCheck(JitterbenchCheck):
    descr = "noise on every core: selfish detours, per node"
    benchmark = "noise"
    # every core of a node, as a code that fills the node uses them
    tasks_per_node = parameter(partition_scale("max_tasks_per_node", lambda cores: [cores]), type=int, loggable=True)
    # no message is sent: neither the eager limit nor how ranks are dealt changes what is measured
    eager_limit = parameter(["default"], type=str, loggable=True)
    distribution = parameter(["block"], type=str, loggable=True)
    duration = variable(float, value=RECORD.value("duration"), loggable=True)
    # the node whose cores lost the most time to detours: node number and host
    worst_node = variable(str, value="", loggable=True)
    quick_variant = {**JitterbenchCheck.quick_variant, "tasks_per_node": partition_scale(
        "max_tasks_per_node", lambda cores: [cores])}
    # one launch: the probe is a run of `duration` seconds per core whose node lines name the
    # noisiest node of that run, and its figures are the worst node's (sn.max over the lines);
    # a median over launches of worst nodes would name none of them
    over_launches = False

    def fits(self, partition):
        # one task alone is a fine probe: only its own core's noise is asked for
        return self.nodes <= partition.extras.get("max_nodes", 1) and \
            self.tasks_per_node == partition.extras.get("max_tasks_per_node", 1)

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--duration", str(self.duration), "--trace", "noise-trace.txt", "--json", "noise.json"]
        self.keep_files = ["noise.json", "noise-trace.txt"]
        self.perf_variables = {name: sn.make_performance_function(sn.max(sn.extractall(
                                   rf"^JB_RESULT .*\s{field}=(\S+)", self.stdout, 1, float)), unit)
                               for name, (field, unit) in self.quantities().items()}

    @run_before("performance")
    def name_the_worst_node(self):
        if self.is_dry_run():
            return
        stdout = os.path.join(self.stagedir, self.stdout.evaluate())
        nodes = sn.evaluate(sn.extractall(r"^JB_RESULT .*\snode=(\d+) host=(\S+) .*\snoise_fraction=(\S+)", stdout,
                                          (1, 2, 3), (str, str, float)))
        if nodes:
            node, host, _ = max(nodes, key=lambda n: n[2])
            self.worst_node = f"{node} ({host})"

    @sanity_function
    def every_node_summarised(self):
        return sn.all([self.launched(),
                       sn.assert_eq(sn.count(sn.extractall(r"^JB_RESULT .*\snode=(\d+)", self.stdout, 1)), self.nodes,
                                    msg="{0} node summaries for {1} nodes"), self.undisturbed()])

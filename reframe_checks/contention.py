"""Latency against hops and against contention for links on a torus or mesh
(../shared/papers/001_157511e0c39ad54e.txt: Bhatele and Kale, IPDPS 2009).

Runs on partitions with the `topology` feature, on every node of the
partition (one task each), at the coordinates of the file in the partition's
extras["topology"].  distance is h for `hops` (one pair, partner h hops
away), n for `pairs` (every node paired n hops away along one dimension) and
k for `link` (k pairs sharing one link); `random` has none.  Performance:
the latency (half round trip, mean and median over calls of the mean over
pairs), the per-call MAX over pairs of the round trip, and for pairs and link
the slow-down over the uncontended case measured in the same job.
"""
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before

from jitterbench.rfm import JitterbenchCheck
from jitterbench.topology import read_shape


@rfm.simple_test
class ContentionCheck(JitterbenchCheck):
    descr = "latency against hops and contention for links"
    benchmark = "contention"
    valid_systems = ["+topology"]
    # 0: every node of the partition, where the topology file places them
    nodes = parameter([0], type=int, loggable=True)
    tasks_per_node = parameter([1], type=int, loggable=True)
    distribution = parameter(["block"], type=str, loggable=True)
    eager_limit = parameter(["default"], type=str, loggable=True)
    pattern = parameter(["hops", "pairs", "link", "random"], type=str, loggable=True)
    msg_size = parameter([8, 1024, 65536, 1048576], type=int, loggable=True)
    distance = parameter([1, 2, 3, 4, 6, 8], type=int, loggable=True)
    calls = 100

    @run_after("setup")
    def fit_partition(self):
        """Every node, one task each: the pairs are chosen by position, so the job must hold them all."""
        most = self.current_partition.extras.get("max_nodes", 1)
        self.skip_if(self.nodes not in (0, most), f"runs on all {most} nodes of the topology")
        self.num_tasks_per_node = 1
        self.num_tasks = most

    @run_after("setup")
    def options(self):
        topology = self.current_partition.extras["topology"]
        shape = read_shape(topology)
        self.skip_if(self.pattern == "random" and self.distance != 1, "random pairing has no distance")
        most = shape.max_hops() if self.pattern == "hops" else shape.max_along(0)
        self.skip_if(self.distance > most, f"the topology ({'x'.join(map(str, shape.dims))}) reaches "
                                           f"{self.pattern} distance {most}")
        opts = {"hops": ["--pattern", "hops", "--hops", str(self.distance)],
                # the uncontended latency at the same distance, for the slow-down
                "pairs": ["--pattern", "hops,pairs", "--hops", str(self.distance)],
                "link": ["--pattern", "link", "--k", ",".join(sorted({"1", str(self.distance)}, key=int))],
                "random": ["--pattern", "random"]}[self.pattern]
        self.executable_opts = ["--topology", topology, *opts, "--size", str(self.msg_size), "--validate",
                                "--json", "contention.json"]
        self.keep_files = ["contention.json"]
        # the summary line of this case
        self.result_line = f"k={self.distance}" if self.pattern == "link" else f"pattern={self.pattern}"

    @run_before("performance")
    def set_perf_variables(self):
        values = {"latency": "latency_us", "latency_p50": "latency_p50_us", "max": "max_us"}
        if self.pattern == "pairs" or (self.pattern == "link" and self.distance > 1):
            values["slowdown"] = "slowdown"
        self.perf_variables = {
            name: sn.make_performance_function(self.result(key, where=self.result_line), "" if name == "slowdown" else "us")
            for name, key in values.items()}

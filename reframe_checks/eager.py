"""The MPI's effective eager limit, probed by jb-eager.

With eager_limit set, the probed limit must equal the value the environment's
variable was given, less at most the MPI's header: this is what shows that
the eager-limit parameter of every other check really takes effect.  Where a
declared variable does not move the probed limit, the check fails and says so.
"""
import reframe as rfm
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, sanity_function, variable

from jitterbench.harness.checks import JitterbenchCheck
from jitterbench.harness.partitions import TRANSPORT_VARIANTS


def pair_of(transport):
    """The jb-eager pair whose limit a transport sets: shared memory within a node,
    every other transport (tcp, a switch, a torus) between nodes."""
    return "on-node" if transport == "shm" else "off-node"


@rfm.simple_test
class EagerCheck(JitterbenchCheck):
    descr = "effective eager limit of MPI_Send, probed"
    valid_prog_environs = ["+mpi", *TRANSPORT_VARIANTS]
    benchmark = "eager"
    eager_limit = parameter(["default", "8192", "32768"], type=str, loggable=True)
    tasks_per_node = parameter([2], type=int, loggable=True)
    # the probe pairs a task with one on its own node and one on another by itself: any
    # distribution gives the same pairs
    distribution = parameter(["block"], type=str, loggable=True)
    # bytes the MPI may keep of the limit for its own header (Open MPI ob1: 56)
    header_allowance = variable(int, value=256, loggable=True)
    quick_variant = {**JitterbenchCheck.quick_variant, "tasks_per_node": [2], "eager_limit": ["default", "8192"]}
    # one launch: the limit is the same bytes in every launch (a protocol switch, not a time)
    over_launches = False

    @run_after("setup")
    def options(self):
        self.executable_opts = ["--json", "eager.json"]
        self.keep_files = ["eager.json"]
        # one task per node when the job spans nodes, so that the probe finds an off-node pair
        self.pairs = {t: pair_of(t) for t in self.fabrics_used(self.current_partition)}
        self.perf_variables = {f"eager_limit_{t}": sn.make_performance_function(self.probed(pair), "B")
                               for t, pair in self.pairs.items()}

    def probed(self, pair):
        return sn.extractsingle(rf"^JB_RESULT .*\bpair={pair} .*\beager_limit_bytes=(\d+)", self.stdout, 1, int)

    @sanity_function
    def limit_follows_the_variable(self):
        checks = [self.launched(), self.transport_as_declared(), self.undisturbed()]
        names = self.current_environ.extras.get("eager_vars", {})
        for transport, pair in self.pairs.items():
            checks.append(sn.assert_found(rf"^JB_RESULT .*\bpair={pair} ", self.stdout,
                                          msg=f"no {pair} pair was probed"))
            if self.eager_limit == "default":
                continue
            wanted = int(self.eager_limit)
            checks.append(sn.assert_bounded(
                self.probed(pair), wanted - self.header_allowance, wanted,
                msg=(f"{names[transport]}={wanted} did not move the probed eager limit: {{0}} bytes went "
                     f"eagerly ({pair}, {transport}), expected {wanted} less at most "
                     f"{self.header_allowance} bytes of header")))
        return sn.all(checks)

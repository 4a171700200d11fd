"""The base of every MPI check (MpiCheck): a job of `nodes` x `tasks_per_node` tasks fitted to the
partition, dealt, bound and confined to its rails as the partition allows, the MPI's own account
of the transport it used, its references (system_references.py) and its rounds (rounds.py).

Only ReFrame's loader imports this module: the node counts and tasks per node of every check are
read from the system ReFrame runs on when the classes are defined (partitions.py).
"""
from __future__ import annotations

import os
import re

import reframe as rfm
import reframe.core.runtime as rt
import reframe.utility.sanity as sn
from reframe.core.builtins import parameter, run_after, run_before, variable

from .. import transports
from .configuration import per_node_scale, scale
from .partitions import QUICK_NODES, QUICK_TASKS_PER_NODE, partition_distributions, partition_rails, partition_scale
from .rounds import Rounds
from .system_references import SystemReferences


class MpiCheck(rfm.RunOnlyRegressionTest, SystemReferences, Rounds):
    """What every MPI check here shares: a job of `nodes` x `tasks_per_node` tasks
    dealt by `distribution`, run only on the partitions it fits, and references
    from reference_data/<system>.yaml (SystemReferences)."""

    valid_systems = ["+mpi"]
    valid_prog_environs = ["+mpi"]
    # Node counts, tasks per node and distributions come from the partitions (extras
    # max_nodes and max_tasks_per_node, the launcher), read from the configuration when the
    # class is defined: ReFrame fixes a test's parameters then, and parameterises from the
    # system the same way in its own reframe.utility.find_modules.  So a 120-node partition
    # runs 1, 2, 4, ..., 64 and 120 nodes, and the listing names real counts; a symbolic
    # scale resolved in a setup hook instead would list cases named by index, some never
    # run.  -P nodes=N (or tasks_per_node=N) picks any other.
    nodes = parameter(partition_scale("max_nodes", scale), type=int, loggable=True)
    tasks_per_node = parameter(partition_scale("max_tasks_per_node", per_node_scale), type=int, loggable=True)
    # how the launcher deals ranks to nodes: block fills a node before the next,
    # cyclic deals them round-robin (which ranks share a node decides which pairs cross)
    distribution = parameter(partition_distributions(), type=str, loggable=True)
    # what the job asked of the launcher (bind_ranks) and what the benchmark found ('# binding:')
    binding_asked = variable(str, value="none", loggable=True)
    binding = variable(str, value="", loggable=True)
    cpu_sets = variable(str, value="", loggable=True)  # node:CPUs of the first 64 ranks ('# cpu_sets:')
    # the network devices a job may use: the first `rails` of the partition's (extras rails),
    # through the variable the environment's transport declares for them (a second switch
    # plane, as Hein's two, or today's second adapter)
    rails = parameter(partition_rails(), type=int, loggable=True)
    # what the MPI itself said it used, per node (transports.account), and the devices the
    # benchmark found on each node ('# network:')
    transport = variable(str, value="", loggable=True)
    network = variable(str, value="", loggable=True)
    # a hung MPI (a lost node, a finalize that never returns) fails its check, not the run
    time_limit = "10m"
    # more tasks on a node than it has cores, where the partition allows it (see overcommits)
    overcommit_ok = False
    # the variants the quick mode runs, {parameter: values}: the init hook tags them `quick`
    quick_variant = {"nodes": QUICK_NODES, "tasks_per_node": [QUICK_TASKS_PER_NODE], "distribution": ["block"],
                     "rails": [1]}

    def fits(self, partition):
        """Whether this variant's job can run on partition."""
        extras = partition.extras
        if self.nodes > extras.get("max_nodes", 1) or (self.tasks_per_node > extras.get("max_tasks_per_node", 1)
                                                       and not self.overcommits(partition)):
            return False
        if self.rails > 1 and (self.nodes < 2 or self.rails > len(extras.get("rails", []))):
            return False  # a second rail carries nothing within a node
        if self.nodes * self.tasks_per_node < 2:  # one task sends its messages to itself: no communication
            return False
        # on one node every distribution is block; launchers other than srun place ranks block-wise only
        return self.distribution == "block" or (self.nodes > 1 and partition.launcher_type.registered_name == "srun")

    def overcommits(self, partition):
        """Whether this check places more tasks on a node than it has cores: only a check that
        measures the links, not the cores (overcommit_ok), and only where the partition's
        rate-limited links decide the time (extras overcommit: the emulated torus)."""
        return (self.overcommit_ok and partition.extras.get("overcommit", False)
                and self.tasks_per_node > partition.extras.get("max_tasks_per_node", 1))

    def takes(self, partition, environ):
        """Whether this variant runs with environ on partition: with more than one rail,
        only where the environment can name that many devices of its network."""
        devices, most = environ.extras.get("devices_vars", {}), environ.extras.get("max_devices", {})
        return self.rails == 1 or all(f in devices and self.rails <= most.get(f, self.rails)
                                      for f in self.fabrics_used(partition) if f != "shm")

    def fabrics_used(self, partition):
        """The partition's fabrics (extras transports) this job's messages cross: shared memory
        where a node holds two tasks, the others where the job spans nodes."""
        return [f for f in partition.extras.get("transports", ["shm"])
                if (self.tasks_per_node > 1 if f == "shm" else self.nodes > 1)]

    @run_after("init")
    def only_where_it_fits(self):
        """The partitions (of those the class's specs admit, by ReFrame's own matching)
        that the job fits and the environments it takes there, by name: so a listing,
        `jitterbench plan` and a run hold the same cases.  Where partitions take different
        environments, a setup hook still skips the combinations they do not."""
        admitted = rt.valid_sysenv_comb(self.valid_systems, self.valid_prog_environs)
        fitting = {p: [e.name for e in environs if self.takes(p, e)]
                   for p, environs in admitted.items() if self.fits(p)}
        self.valid_systems = [p.fullname for p, environs in fitting.items() if environs]
        self.valid_prog_environs = sorted({name for environs in fitting.values() for name in environs})

    @run_after("init")
    def tag_the_quick_variant(self):
        if all(getattr(self, name) in values for name, values in self.quick_variant.items()):
            self.tags = {*self.tags, "quick"}

    @run_after("setup")
    def shape_the_job(self):
        self.num_tasks_per_node = self.tasks_per_node
        self.num_tasks = self.nodes * self.tasks_per_node
        if self.overcommits(self.current_partition):
            # sbatch(1), srun(1): more than one task per CPU.  Slurm refuses --ntasks-per-node above
            # the node's CPUs even so: the job asks for its nodes, and block distribution fills them
            self.num_tasks_per_node = None
            self.job.options += ["--overcommit", f"--nodes={self.nodes}"]
            if self.job.launcher.registered_name == "srun":
                self.job.launcher.options += ["--overcommit"]
        if self.job.launcher.registered_name == "srun":
            # a rank that dies ends the job step at once: its peers would wait on it until the time limit
            self.job.launcher.options += [f"--distribution={self.distribution}", "--kill-on-bad-exit=1"]

    @run_after("setup")
    def bind_ranks(self):
        """Each rank to a core of its own, as the halo study binds its tasks, by the
        launcher's own means: srun's --cpu-bind=cores (srun(1)), else the variables the
        environment's MPI declares (extras bind_vars).  Only where the partition's cores
        are its job's own (extras binding, default 'cores'; the virtual cluster's nodes
        share theirs) and its nodes hold as many cores as this job has tasks there."""
        extras = self.current_partition.extras
        if extras.get("binding", "cores") != "cores" or self.tasks_per_node > extras.get("max_tasks_per_node", 1):
            return
        if self.job.launcher.registered_name == "srun":
            self.job.launcher.options += ["--cpu-bind=cores"]
        elif self.current_environ.extras.get("bind_vars"):
            self.env_vars.update(self.current_environ.extras["bind_vars"])
        else:
            return
        self.binding_asked = "cores"

    @run_after("setup")
    def restrict_to_rails(self):
        rails = self.current_partition.extras.get("rails")
        if not rails or self.nodes < 2:
            return
        devices = ",".join(rails[:self.rails])
        names = self.current_environ.extras.get("devices_vars", {})
        for fabric in self.fabrics_used(self.current_partition):
            if fabric in names:
                self.env_vars[names[fabric]] = devices

    @run_after("setup")
    def ask_for_the_transport_account(self):
        self.env_vars.update(transports.ACCOUNT_VARS.get(self.current_environ.extras.get("family"), {}))

    @run_before("sanity")
    def read_the_transport_account(self):
        """The MPI's own account of its transport per node, and the fabrics whose declared
        transport (the environment's extras transports) it contradicts."""
        self.transport_problems = []
        family = self.current_environ.extras.get("family")
        if self.is_dry_run() or family not in transports.ACCOUNT_VARS:
            return
        text = ""
        for name in (self.stdout.evaluate(), self.stderr.evaluate()):
            path = os.path.join(self.stagedir, name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    text += f.read()
        first = re.search(r"^# node_list: ([^,\s]+)", text, re.M)
        first_node = first[1] if first else (self.job.nodelist or ["rank 0"])[0]
        accounts = transports.account(family, text, first_node)
        self.transport = transports.summary(accounts)
        declared = self.current_environ.extras.get("transports", {})
        for fabric in self.fabrics_used(self.current_partition):
            if fabric not in declared:
                continue
            wanted = transports.TRANSPORTS[declared[fabric]]
            if wanted.account and not accounts:
                self.transport_problems.append(f"{family} gave no account of its transport ({fabric})")
            for node, said in transports.mismatches(wanted, accounts).items():
                self.transport_problems.append(f"{node}: {family} used '{said}' for {fabric}, not the declared "
                                               f"{wanted.name} (/{wanted.account}/)")

    def transport_as_declared(self):
        return sn.assert_false(self.transport_problems, msg="; ".join(self.transport_problems[:3]))

    def launch_command(self):
        """The job's launcher line (srun ..., jb-mpirun -np N), for a second program run in the
        same job before the main one (prerun_cmds), on the same nodes and tasks; without the
        launch loop that the main program's line may have (launch_several_times)."""
        # ReFrame gives the job its tasks only as it writes the script: the launch needs them now
        self.job.num_tasks, self.job.num_tasks_per_node = self.num_tasks, self.num_tasks_per_node
        launcher = self.job.launcher
        modifier, launcher.modifier = launcher.modifier, ""
        try:
            return " ".join(launcher.run_command(self.job).split())
        finally:
            launcher.modifier = modifier

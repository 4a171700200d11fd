"""The ReFrame side of jitterbench, and the only package of it that imports ReFrame: the checks'
base classes (checks, built on mpi_check, launches, rounds, system_references, build and
partitions), the launchers ReFrame lacks (launchers), the mended schedulers (schedulers), the
system registry that systems/config.py loads (systems), what the configuration's systems and
environments are made of (configuration), and what a check reads of the nodes it ran on (load,
topology).
Everything else of jitterbench (the records, references, history, reports, the simulators,
the command) works without ReFrame, so that reading a run's files never loads it."""

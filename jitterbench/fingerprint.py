"""A machine's fingerprint: the facts that decide a reference file's numbers, so that a
file is used only on the machine that made it.

A measured reference file holds, in its top-level section `fingerprint`, what the runs it
was made from recorded (every benchmark prints them, the checks log them):

    fingerprint:
      system: local                   # the ReFrame system (the site's name for the machine)
      hosts: [vm]                     # where ReFrame ran (told, not matched: a login node may change)
      cpu: ['AMD EPYC; 2 CPUs']       # rank 0's node: model name and online CPUs ('# cpu:')
      nodes: [1]                      # the node counts measured (each entry is keyed by its own)
      mpi_library:                    # per environment, what MPI_Get_library_version said
        openmpi: ['Open MPI v4.1.4, package: Debian OpenMPI, ...']
      transport:                      # per environment, what the MPI said it used (transports.py)
        openmpi: ['vm: shm+self']
      launches:                       # per check, the launches each case's values are the median of
        HaloCheck: [5]

A run matches a file when its CPU is one of the file's, for its environment its MPI library
and transport are ones the file lists (an environment the file does not hold has no references
to mismatch), and its check made as many launches a case as the file's runs did: a median of
five launches is a steadier figure than one launch, and a bound made for the one is no bound for
the other.  A measured file from before launches were counted (no `launches`) was made of one
launch a case.  A file with no fingerprint (a paper's, or one made before fingerprints) matches
every run.

"""
from __future__ import annotations

import os

MATCHED = ("cpu", "mpi_library", "transport")  # and launches, per check
PER_ENVIRON = ("mpi_library", "transport")


def of_cases(system, cases, hosts=()) -> dict:
    """The fingerprint of the test cases (ReFrame report entries) of one system."""
    fp = {"system": system, "hosts": sorted(set(hosts)), "cpu": set(), "nodes": set(),
          "mpi_library": {}, "transport": {}, "launches": {}}
    for case in cases:
        fp["launches"].setdefault(case["display_name"].split()[0], set()).add(launches_of(case))
        if case.get("cpu"):
            fp["cpu"].add(str(case["cpu"]))
        if isinstance(case.get("nodes"), int):
            fp["nodes"].add(case["nodes"])
        for field in PER_ENVIRON:
            if case.get(field):
                fp[field].setdefault(case["environ"], set()).add(str(case[field]))
    fp["cpu"], fp["nodes"] = sorted(fp["cpu"]), sorted(fp["nodes"])
    for field in (*PER_ENVIRON, "launches"):
        fp[field] = {key: sorted(values) for key, values in sorted(fp[field].items())}
    return fp


def launches_of(case) -> int:
    """The launches a case's values are the median of: its loggable `launches` (a case from before
    launches were counted made one)."""
    launches = case.get("launches")
    return launches if isinstance(launches, int) and not isinstance(launches, bool) else 1


def differences(fp, facts, environ) -> list:
    """Why a run with facts ({cpu, mpi_library, transport}: what its benchmark said; with check
    and launches, how many launches that check's case made) under environ is not of the machine
    fp describes, or not judged as its references were made; [] when it is (or fp is None)."""
    if not fp:
        return []
    known = {"cpu": fp.get("cpu") or [],
             **{field: (fp.get(field) or {}).get(environ) or [] for field in PER_ENVIRON}}
    differ = [f"{field} '{facts[field]}' here, the references' {' or '.join(repr(v) for v in known[field])}"
              for field in MATCHED if facts.get(field) and known[field] and facts[field] not in known[field]]
    made = (fp.get("launches") or {}).get(facts.get("check")) if "launches" in fp else [1]
    if facts.get("launches") and made and facts["launches"] not in made:
        differ.append(f"{facts['launches']} launch(es) a case here, the references' {' or '.join(map(str, made))} "
                      f"(a median of other launches has another spread: make references with JB_LAUNCHES="
                      f"{facts['launches']}, or run with JB_LAUNCHES={made[0]})")
    return differ


def this_host() -> str:
    """This host's CPU as the benchmarks print it ('# cpu: MODEL; N CPUs'): /proc/cpuinfo's
    first model name, or 'unknown'."""
    model = "unknown"
    try:
        with open("/proc/cpuinfo", errors="replace") as f:
            for line in f:
                if line.startswith("model name") and ":" in line:
                    model = line.split(":", 1)[1].strip() or model
                    break
    except OSError:
        pass
    return f"{model[:127]}; {os.cpu_count() or 0} CPUs"

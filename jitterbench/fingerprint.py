"""A machine's fingerprint: the facts that decide a reference file's numbers, so that a
file is used only on the machine that made it.

A measured reference file holds, in its top-level section `fingerprint`, what the runs it
was made from recorded (every benchmark prints them, the checks log them):

    fingerprint:
      system: local                   # the ReFrame system (the site's name for the machine)
      hosts: [vm]                     # where ReFrame ran (told, not matched: a login node may change)
      cpu: ['AMD EPYC; 2 CPUs']       # rank 0's node: model name and online CPUs ('# cpu:')
      hardware:                       # rank 0's node as its OS tells it ('# hardware:', src/core/hardware.c)
      - vendor=AuthenticAMD family=25 model=1 stepping=1 l1d=32K l1i=32K l2=512K l3=32768K cpus=2 hypervisor=KVM
      nodes: [1]                      # the node counts measured (each entry is keyed by its own)
      mpi_library:                    # per environment, what MPI_Get_library_version said
        openmpi: ['Open MPI v4.1.4, package: Debian OpenMPI, ...']
      transport:                      # per environment, what the MPI said it used (transports.py)
        openmpi: ['vm: shm+self']
      launches:                       # per check, the launches each case's values are the median of:
        HaloCheck: [5x2]              # a count in one job, or RxL: L in each of R rounds (harness.rounds.Rounds)

A run matches a file when its CPU is one of the file's, its hardware one of the file's fact by fact
(a hypervisor shows every EPYC host as 'AMD EPYC': family, model, stepping and caches tell hosts
apart), for its environment its MPI library
and transport are ones the file lists (an environment the file does not hold has no references
to mismatch), and its check made its launches as the file's runs did: a median of five launches
is a steadier figure than one launch, and five launches in five rounds steadier than five in a row;
a bound made for the one is no bound for the other.  A measured file from before launches were
counted (no `launches`) was made of one launch a case.  A file with no fingerprint (a paper's,
or one made before fingerprints) matches every run; one made before the hardware was recorded
matches by the model name alone, and `lacks` says so in one line.

"""
from __future__ import annotations

import os
import re

MATCHED = ("cpu", "hardware", "mpi_library", "transport")  # and launches, per check
PER_ENVIRON = ("mpi_library", "transport")


def of_cases(system, cases, hosts=()) -> dict:
    """The fingerprint of the test cases (ReFrame report entries) of one system."""
    fp = {"system": system, "hosts": sorted(set(hosts)), "cpu": set(), "hardware": set(), "nodes": set(),
          "mpi_library": {}, "transport": {}, "launches": {}}
    for case in cases:
        fp["launches"].setdefault(case["display_name"].split()[0], set()).add(launches_of(case))
        for field in ("cpu", "hardware"):
            if case.get(field):
                fp[field].add(str(case[field]))
        if isinstance(case.get("nodes"), int):
            fp["nodes"].add(case["nodes"])
        for field in PER_ENVIRON:
            if case.get(field):
                fp[field].setdefault(case["environ"], set()).add(str(case[field]))
    fp["cpu"], fp["hardware"], fp["nodes"] = sorted(fp["cpu"]), sorted(fp["hardware"]), sorted(fp["nodes"])
    if not fp["hardware"]:  # runs of benchmarks that did not say it: the file says what it lacks (lacks)
        del fp["hardware"]
    for field in (*PER_ENVIRON, "launches"):
        fp[field] = {key: sorted(values, key=str) for key, values in sorted(fp[field].items())}
    return fp


def made_of(launches, rounds=1):
    """What a case's figure is the median of, as a fingerprint records it: its launches in one job,
    or 'RxL' where its launches were made in rounds (L in each of R rounds: harness.rounds.Rounds)."""
    return launches if rounds <= 1 else f"{rounds}x{launches}"


def made_problem(made):
    """None where made is a made_of value (a count, or 'RxL' of two), else what is wrong."""
    if isinstance(made, int) and not isinstance(made, bool) and made >= 1:
        return None
    if isinstance(made, str) and re.fullmatch(r"[1-9][0-9]{0,5}x[1-9][0-9]{0,5}", made):
        return None
    return f"{made!r} is neither a launch count nor rounds x launches"


def described(made) -> str:
    """made_of's value in words."""
    rounds, _, launches = str(made).rpartition("x")
    per_round = f"{launches} launch{'es' if launches != '1' else ''}"
    return f"{per_round} in each of {rounds} rounds" if rounds else f"{per_round} in one job"


def _count(value):
    return value if isinstance(value, int) and not isinstance(value, bool) else 1


def launches_of(case):
    """What a case's values are the median of (made_of): its loggable `launches` and `rounds` (a case
    from before launches were counted made one, before rounds, one round)."""
    return made_of(_count(case.get("launches")), _count(case.get("rounds")))


def hardware_facts(text) -> dict:
    """The '# hardware:' line's words as {fact: value}, in their order."""
    return dict(word.split("=", 1) for word in str(text).split() if "=" in word)


def hardware_differences(here, known) -> str:
    """Which facts of the hardware here (the '# hardware:' line) differ from the nearest of the
    known ones (those with the fewest facts apart), each named with both values: one line."""
    mine = hardware_facts(here)
    def apart(other):
        theirs = hardware_facts(other)
        return [f"{fact} {mine.get(fact, '(none)')} here, the references' {theirs.get(fact, '(none)')}"
                for fact in {**theirs, **mine} if mine.get(fact) != theirs.get(fact)]
    return "hardware: " + ", ".join(min((apart(k) for k in known), key=len))


def differences(fp, facts, environ) -> list:
    """Why a run with facts ({cpu, hardware, mpi_library, transport}: what its benchmark said; with
    check and launches, what that check's figures are the median of: made_of) under environ is not
    of the machine fp describes, or not judged as its references were made; [] when it is (or fp is
    None).  Hardware is matched fact by fact and each differing fact named."""
    if not fp:
        return []
    known = {"cpu": fp.get("cpu") or [], "hardware": fp.get("hardware") or [],
             **{field: (fp.get(field) or {}).get(environ) or [] for field in PER_ENVIRON}}
    differ = [hardware_differences(facts[field], known[field]) if field == "hardware" else
              f"{field} '{facts[field]}' here, the references' {' or '.join(repr(v) for v in known[field])}"
              for field in MATCHED if facts.get(field) and known[field] and (
                  hardware_facts(facts[field]) not in map(hardware_facts, known[field]) if field == "hardware"
                  else facts[field] not in known[field])]
    made = (fp.get("launches") or {}).get(facts.get("check")) if "launches" in fp else [1]
    if facts.get("launches") and made and facts["launches"] not in made:
        differ.append(f"a figure here is the median of {described(facts['launches'])}, the references' of "
                      f"{' or '.join(map(described, made))} (another spread: make references as this run was made, "
                      f"or run as they were, with JB_ROUNDS and JB_LAUNCHES)")
    return differ


def lacks(fp, doc=None) -> list:
    """What a measured file made before jitterbench recorded it lacks, each in a few words: the
    hardware (matched by the model name alone) and the node figures (its node not judged first)."""
    if not fp:
        return []
    missing = [] if fp.get("hardware") else ["the hardware (matched by the CPU's model name alone)"]
    if doc is not None and not node_figures_in(doc):
        missing.append("node figures (the node is not judged before the network)")
    return missing


def node_figures_in(doc) -> bool:
    """Whether a reference document bounds some node figure (NODE_FIGURES) anywhere."""
    def walk(node):
        return isinstance(node, dict) and any(k in NODE_FIGURES or walk(v) for k, v in node.items())
    return any(walk(entry) for name, entry in doc.items() if name not in ("provenance", "fingerprint"))


# The node's own figures, measured beside every launch ('# load:', src/core/load.c) and referenced like
# the network's: a case whose node figures are past their bounds is not judged (docs/references.md,
# "Node first").  {variable: (the load line's field, unit, what it says of the node)}
NODE_FIGURES = {
    "node_probe_us": ("probe_us", "us", "computes {ratio:.2f}x slower"),
    "node_pair_ns": ("pair_ns", "ns", "holds its CPUs {ratio:.2f}x farther apart"),
}


def node_finding(measured, refs, hosts) -> dict:
    """What the node figures say of a case: measured {figure: the case's value}, refs {figure: its
    reference tuple (value, lower, upper, unit)}, hosts {figure: the node that held it}.  Each
    bounded figure goes to past (above its bound) or within: {figure: {node, value, reference,
    ratio, bound}}; a figure without a bound to neither."""
    finding = {"past": {}, "within": {}}
    for name, value in measured.items():
        reference, upper = refs[name][0], refs[name][2]
        if not reference or reference <= 0 or upper is None:
            continue
        said = {"node": hosts.get(name, "?"), "value": value, "reference": reference, "ratio": value / reference,
                "bound": 1 + upper}
        finding["past" if said["ratio"] > said["bound"] else "within"][name] = said
    return finding


def _figure_said(name, f) -> str:
    return (f"{f['node']} {NODE_FIGURES[name][2].format(ratio=f['ratio'])} than in the references' runs "
            f"({name} {f['value']:.4g} {NODE_FIGURES[name][1]} against {f['reference']:.4g}, bound {f['bound']:.3g}x)")


def node_said(finding) -> str:
    """A case's node finding (node_finding) in one line: each figure past its bound, its node and
    ratio, then those within theirs."""
    within = "; ".join(_figure_said(n, f) for n, f in finding["within"].items())
    return (f"node first: {'; '.join(_figure_said(n, f) for n, f in finding['past'].items())}: the node moved, "
            f"not the network; nothing of this case was judged" + (f" (within their bounds: {within})" if within else ""))


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

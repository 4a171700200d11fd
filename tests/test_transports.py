"""Transports as data (jitterbench/transports.py): each MPI's own account of the transport
it used, read from real runs here; the eager-limit variables of the transports that run
on one node; a ReFrame check that fails when the MPI took another transport than the one
declared; compare naming two runs that used different transports."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from conftest import run_benchmark
from jitterbench import mpi as mpis
from jitterbench import site
from jitterbench import transports as T
from jitterbench.report import transport_differences
from jitterbench.runs import Case, Collection
from support.reframe_runs import reframe

REPO = Path(__file__).resolve().parents[1]


def account_of(mpi, env=None, np=2):
    """The MPI's account, per node, of a short jb-pingpong run with ACCOUNT_VARS set."""
    run = run_benchmark(mpi, np, ["--calls", "5", "--size", "8", "--messages", "1"], benchmark="pingpong",
                        env={**T.ACCOUNT_VARS[mpi.family], **(env or {})})
    assert run.returncode == 0, run.stderr
    (node,) = {line.split()[2].split(",")[0] for line in run.stdout.splitlines() if line.startswith("# node_list:")}
    accounts = T.account(mpi.family, run.stdout + run.stderr, node)
    assert accounts, f"{mpi.name} gave no account:\n{run.stdout[-3000:]}\n{run.stderr[-1500:]}"
    return accounts


@pytest.mark.unit
def test_every_transport_names_its_sources_and_only_readable_accounts():
    for t in T.TRANSPORTS.values():
        assert t.source and t.fabric in ("shm", "tcp", "ib", "slingshot"), t.name
        # a pattern is only useful where the family's account is read
        assert not t.account or t.mpi in T.ACCOUNT_VARS, t.name
        # every verified transport's eager variable is one jb-eager moved here
        assert not t.verified or t.eager_var, t.name
    for m in mpis.ALL:
        for fabric, name in m.transports.items():
            assert T.by_name(name).fabric == fabric and T.by_name(name).mpi == m.family
    with pytest.raises(KeyError, match="unknown transport 'nope'"):
        T.by_name("nope")


# The lines of each MPI's account as it printed them here (two ranks on one node), and another line
# of its output put inside each, as the launcher once interleaved MPICH's: the newline of a line came
# in a later write than its text, after the other rank's line, and the check failed for "no account"
# (1 of 150 runs, the CPUs busy).
UCX_SELF = ("[1795989055.817674] [vm:19052:0]      ucp_worker.c:1912 UCX  INFO    ucp_context_0 self cfg#0 "
            "tag(self/memory cma/memory)  rma(self/memory)  am(self/memory cma/memory)")
UCX_INTRA = ("[1795989055.829212] [vm:{pid}:0]      ucp_worker.c:1912 UCX  INFO    ucp_context_0 intra-node cfg#1 "
             "tag(sysv/memory cma/memory)  rma(sysv/memory posix/memory)  am(sysv/memory cma/memory)")
ACCOUNTS = {
    "mpich": (["==== UCX netmod Capability ====", "MPIDI_UCX_CONTEXT_ID_BITS: 16",
               UCX_INTRA.format(pid=19052), UCX_INTRA.format(pid=19051)], UCX_SELF,
              "netmod=ucx ucx=cma/memory,posix/memory,sysv/memory"),
    "openmpi": (["[vm:19044] select: init of component tcp returned success",
                 "[vm:19044] select: init of component vader returned success",
                 "[vm:19044] select: init of component self returned success",
                 "[vm:19044] select: component ob1 selected"], "[vm:19043] select: init of component tcp returned success",
                "pml=ob1 btl=self,tcp,vader"),
    "intelmpi": (['[0] MPI startup(): Load tuning file: "/work/main/.deps/impi/opt/mpi/etc/tuning_generic_shm.dat"'],
                 "[0] MPI startup(): Intel(R) MPI Library, Version 2021.18.1  Build 20260626 (id: b44796a)",
                 "fabrics=shm"),
}


@pytest.mark.unit
@pytest.mark.parametrize("family", ACCOUNTS)
def test_an_account_is_read_whole_where_another_rank_s_line_lands_inside_one_of_its_lines(family):
    lines, other, said = ACCOUNTS[family]
    assert T.account(family, "\n".join(lines) + "\n", "vm") == {"vm": said}
    for i, line in enumerate(lines):
        # the other rank's line before this one's newline, then before its text
        late_newline = [*lines[:i], line + other, "", *lines[i + 1:]]
        early_text = [*lines[:i], other[:20], other[20:] + line, *lines[i + 1:]]
        for interleaved in (late_newline, early_text):
            assert T.account(family, "\n".join(interleaved) + "\n", "vm") == {"vm": said}, interleaved


@pytest.mark.mpi
def test_the_account_of_each_mpi_on_one_node_matches_its_declared_shm_transport(mpi):
    accounts = account_of(mpi)
    declared = T.by_name(mpi.transports["shm"])
    assert T.mismatches(declared, accounts) == {}
    expected = {"openmpi": "pml=ob1 btl=self,tcp,vader", "intelmpi": "fabrics=shm"}
    if mpi.name in expected:
        assert list(accounts.values()) == [expected[mpi.name]]
    else:  # MPICH: its netmod, and UCX's own lanes (its shared-memory transports)
        (said,) = accounts.values()
        assert said.startswith("netmod=ucx ucx=") and "sysv/memory" in said


# Runs steered to another transport than the one each MPI declares (MPICH: for the network;
# its shared memory is its own and says nothing): the account says so, and the declared
# transport's pattern does not match it.
STEERED = {
    "openmpi": ({**T.by_name("ompi-ucx-shm").select}, "ompi-ucx-shm", r"^pml=ucx btl=\S+ ucx=\S*sysv/memory", "shm"),
    "mpich": ({**T.by_name("mpich-ofi-tcp").select, "MPIR_CVAR_NOLOCAL": "1"}, "mpich-ofi-tcp",
              r"^netmod=ofi provider=tcp$", "tcp"),
    "intelmpi": ({**T.by_name("impi-ofi-tcp").select, "FI_PROVIDER": "tcp", "I_MPI_FABRICS": "ofi"}, "impi-ofi-tcp",
                 r"^fabrics=ofi ofi=tcp$", "shm"),
}


@pytest.mark.mpi
def test_a_run_steered_to_another_transport_is_told_apart(mpi):
    env, now, said, fabric = STEERED[mpi.name]
    accounts = account_of(mpi, env)
    (text,) = accounts.values()
    assert re.search(said, text), text
    assert T.mismatches(T.by_name(now), accounts) == {}
    assert T.mismatches(T.by_name(mpi.transports[fabric]), accounts) == accounts


# The eager variables of transports that run on one node, each set to 8 KiB: the probed
# limit follows (less at most the MPI's header).  A netmod is reached on one node with
# MPICH's MPIR_CVAR_NOLOCAL, Open MPI's UCX over TCP with UCX_TLS=tcp,self.
ONE_NODE = {
    "ompi-ucx-shm": ("openmpi", {}),
    "ompi-ucx-tcp": ("openmpi", {"UCX_TLS": "tcp,self"}),
    "mpich-ucx-tcp": ("mpich", {"MPIR_CVAR_NOLOCAL": "1", "UCX_TLS": "tcp,self"}),
    "mpich-ofi-tcp": ("mpich", {"MPIR_CVAR_NOLOCAL": "1"}),
}


@pytest.mark.mpi
@pytest.mark.parametrize("name", ONE_NODE)
def test_the_eager_variable_of_a_transport_moves_the_probe(tmp_path, name):
    family, extra = ONE_NODE[name]
    m = mpis.by_name(family)
    if not m.available() or not m.binary("eager").exists():
        pytest.skip(f"{family} or its jb-eager is not built (run ci/setup.sh)")
    t = T.by_name(name)
    for limit in (8192, 32768):
        run = run_benchmark(m, 2, ["--max-size", "128K", "--delay", "20000", "--repeats", "2"],
                            json_path=tmp_path / "eager.json", benchmark="eager",
                            env={**t.select, **extra, t.eager_var: str(limit)})
        assert run.returncode == 0, run.stderr
        (probe,) = run.results()
        assert limit - 64 <= probe["eager_limit_bytes"] <= limit, (name, limit, probe["eager_limit_bytes"])


@pytest.mark.reframe
def test_a_check_fails_when_the_mpi_used_another_transport_than_declared(tmp_path):
    """Open MPI steered to its UCX PML inside the check: the local partition declares ob1's
    vader for shared memory, so the check fails and names both."""
    steer = ",".join(f"{k}:{v}" for k, v in T.by_name("ompi-ucx-shm").select.items())
    proc, cases = reframe(tmp_path, "-P", "eager_limit=default", "-S", f"HaloCheck.env_vars={steer}")
    (case,) = cases
    assert case["result"] == "fail", proc.stdout[-2000:]
    assert "used 'pml=ucx" in case["fail_reason"] and "not the declared ob1-vader" in case["fail_reason"]
    # unsteered, the same variant passes and logs its account and devices
    proc, cases = reframe(tmp_path / "plain", "-P", "eager_limit=default")
    (case,) = cases
    assert case["result"] == "pass", proc.stdout[-2000:]
    assert case["transport"].endswith(": pml=ob1 btl=self,tcp,vader")
    assert case["network"]


def _case(label, transport):
    return Case(label=label, system="s", partition="p", environ="openmpi", check="HaloCheck", params={"nodes": 2},
                perf={}, meta={"transport": transport})


@pytest.mark.unit
def test_compare_names_labels_whose_runs_used_another_transport():
    col = Collection(cases=[_case("a", "n1,n2: pml=ob1 btl=self,tcp,vader"),
                            _case("b", "n3,n4: pml=ob1 btl=self,tcp,vader"),   # other nodes, same transport
                            _case("c", "n1: pml=cm mtl=ofi; n2: pml=ob1 btl=self,tcp,vader")])
    assert transport_differences(col, "a") == {
        ("openmpi", "c"): (["pml=cm mtl=ofi", "pml=ob1 btl=self,tcp,vader"], ["pml=ob1 btl=self,tcp,vader"])}


@pytest.mark.mpi
def test_a_benchmark_document_records_every_node_s_network_devices(tmp_path):
    m = mpis.OPENMPI
    run = run_benchmark(m, 2, ["--calls", "5", "--size", "8", "--messages", "1"], json_path=tmp_path / "p.json",
                        benchmark="pingpong")
    assert run.returncode == 0, run.stderr
    doc = json.loads((tmp_path / "p.json").read_text())
    (group,) = doc["metadata"]["network"]
    assert group["nodes"] == doc["metadata"]["node_list"]
    assert "lo " not in group["devices"] and group["devices"] != ""
    line = next(x for x in run.stdout.splitlines() if x.startswith("# network: "))
    assert line == f"# network: {','.join(group['nodes'])}: {group['devices']}"


@pytest.mark.unit
@pytest.mark.parametrize("network", site.NETWORKS)
def test_a_site_s_environments_declare_known_transports_of_their_mpi_on_each_network(network):
    """What `jitterbench site new` writes (jitterbench/site.py): per MPI, one pair of transports
    that one set of variables selects, each of that MPI and serving its fabric."""
    environs = site.environments("acme", {name: {} for name in site.NETWORK_TRANSPORTS}, network)
    assert [e["name"] for e in environs] == ["openmpi", "mpich", "intelmpi"]
    for environ in environs:
        extras = environ["extras"]
        assert extras["family"] in T.ACCOUNT_VARS and set(extras["transports"]) == {"shm", network}
        selected = dict(environ["env_vars"])
        for fabric, name in extras["transports"].items():
            t = T.by_name(name)
            assert t.fabric == fabric and t.mpi == extras["family"]
            assert extras["eager_vars"].get(fabric, t.eager_var) == t.eager_var
            assert extras["devices_vars"].get(fabric, t.devices_var) == t.devices_var
            # the variables that select the network's transport select the other too
            assert all(selected[k] == v for k, v in T.by_name(extras["transports"][network]).select.items())

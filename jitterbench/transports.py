"""The transports MPI libraries move messages over, as data, and each MPI's own
account of the one a run used.

A transport serves one of a partition's fabrics (its extras' `transports`: shm
within a node; tcp, ib, slingshot, switch, torus between nodes).  For each: the
variables that select it, set its eager limit (the largest message sent without
waiting for the receiver) and restrict it to named network devices, with the
documentation each name comes from; `verified` says what jb-eager measured on
this machine (EagerCheck runs every one that runs here).  A programming
environment declares which transport serves each fabric (harness.configuration.environment).

The account: an environment variable set makes each MPI report what it selected
(Open MPI its PML and BTLs, UCX its transports and devices, MPICH and Intel MPI
their netmod and libfabric provider), and `account()` reads that report from a
job's output, per node.  Nothing else says it: on a machine whose Open MPI lost
its parameter file, Open MPI silently took `pml cm` + `mtl ofi` over TCP even on
one node (../shared/notes/mpi.md), and only its own report showed it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

UCX_DOCS = "UCX configuration (`ucx_info -f`), and Open MPI 5 docs, 'InfiniBand / RoCE support' (UCX_NET_DEVICES=mlx5_0:1)"
OMPI_DOCS = "Open MPI 4.1 `ompi_info --param {} all --level 9`, and the Open MPI FAQ, 'Tuning the run-time characteristics'"
RXM_DOCS = "libfabric fi_rxm(7), 'Runtime parameters'; fi_tcp(7) for FI_TCP_IFACE"


@dataclass(frozen=True)
class Transport:
    name: str
    mpi: str                       # the MPI family whose variables these are
    fabric: str                    # the fabric it serves: shm, tcp, ib, slingshot
    source: str                    # where its variables are documented
    select: dict = field(default_factory=dict)  # variables that choose it
    eager_var: str = ""            # sets the eager limit, bytes; "" = none known to work
    devices_var: str = ""          # restricts it to the devices listed, comma-separated
    max_devices: int = 0           # how many devices that variable may list; 0: any number
    account: str = ""              # regex the MPI's account of a node matches; "" = it reports nothing
    verified: str = ""             # measured here with jb-eager; "" = documentation only


TRANSPORTS = {t.name: t for t in [
    # ---- Open MPI: ob1 with its BTLs, UCX, or cm with an MTL ------------------------------
    Transport("ob1-vader", "openmpi", "shm", OMPI_DOCS.format("btl vader"),
              select={"OMPI_MCA_pml": "ob1"}, eager_var="OMPI_MCA_btl_vader_eager_limit",
              account=r"pml=ob1 btl=\S*\bvader\b",
              verified="8 KiB -> 8136 B eager, 2 ranks on one node (ob1 keeps a 56-byte header)"),
    Transport("ob1-tcp", "openmpi", "tcp", OMPI_DOCS.format("btl tcp"),
              select={"OMPI_MCA_pml": "ob1"}, eager_var="OMPI_MCA_btl_tcp_eager_limit",
              devices_var="OMPI_MCA_btl_tcp_if_include", account=r"pml=ob1 btl=\S*\btcp\b",
              verified="8 KiB and 32 KiB followed across the virtual cluster's nodes (EagerCheck)"),
    # Open MPI 4.1 before 5's removal of openib; sites on 4.x with verbs but no UCX
    Transport("ob1-openib", "openmpi", "ib", OMPI_DOCS.format("btl openib"),
              select={"OMPI_MCA_pml": "ob1", "OMPI_MCA_btl": "self,vader,openib"},
              eager_var="OMPI_MCA_btl_openib_eager_limit", devices_var="OMPI_MCA_btl_openib_if_include",
              account=r"pml=ob1 btl=\S*\bopenib\b"),
    # UCX serves both fabrics: shared memory (sysv, posix, cma) and the network (rc, dc, ud, tcp).
    # Open MPI 4.1 takes its UCX PML only on devices matching pml_ucx_devices (mlx*): "any" lets it
    # run over TCP too (`ompi_info --param pml ucx --level 9`).
    *[Transport(f"ompi-ucx-{fabric}", "openmpi", fabric, f"{UCX_DOCS}; {OMPI_DOCS.format('pml ucx')}",
                select={"OMPI_MCA_pml": "ucx", "OMPI_MCA_pml_ucx_tls": "any", "OMPI_MCA_pml_ucx_devices": "any"},
                # UCX_NET_DEVICES names network devices only; shared memory is not one
                eager_var="UCX_RNDV_THRESH", devices_var="" if fabric == "shm" else "UCX_NET_DEVICES",
                account=r"pml=ucx .*ucx=\S*\b" + tl,
                verified="8 KiB -> 8184 B, 32 KiB -> 32760 B eager, 2 ranks on one node (UCX 1.13.1)" if v else "")
      for fabric, tl, v in [("shm", r"(sysv|posix|cma|xpmem|knem)/", 1), ("tcp", r"tcp/", 1),
                            ("ib", r"(rc|rc_mlx5|rc_verbs|dc_mlx5|ud_mlx5|ud_verbs)/", 0)]],
    Transport("ompi-cm-ofi", "openmpi", "slingshot", f"{OMPI_DOCS.format('mtl ofi')}; libfabric fi_cxi(7)",
              select={"OMPI_MCA_pml": "cm", "OMPI_MCA_mtl": "ofi", "OMPI_MCA_mtl_ofi_provider_include": "cxi"},
              eager_var="FI_CXI_RDZV_THRESHOLD", account=r"pml=cm mtl=ofi"),
    # ---- MPICH (and Cray MPICH): CH4 with UCX or OFI netmods; its own POSIX shared memory ----
    # the shm eager limit is one queue cell (8112 B); MPIR_CVAR_CH4_SHM_POSIX_IQUEUE_CELL_SIZE
    # moves it down only (32 KiB cells abort at start): no variable declared
    Transport("mpich-posix", "mpich", "shm", "MPICH 5.0.2 `mpivars` (MPIR_CVAR_CH4_SHM_POSIX_*)"),
    *[Transport(f"mpich-ucx-{fabric}", "mpich", fabric, f"{UCX_DOCS}; MPICH `mpivars` (MPIR_CVAR_CH4_NETMOD)",
                select={"MPIR_CVAR_CH4_NETMOD": "ucx"}, eager_var="UCX_RNDV_THRESH", devices_var="UCX_NET_DEVICES",
                account=r"netmod=ucx .*ucx=\S*\b" + tl,
                verified=("8 KiB -> 8184 B, 32 KiB -> 32760 B eager across the virtual cluster (UCX 1.20.1)"
                          if v else ""))
      for fabric, tl, v in [("tcp", r"tcp/", 1), ("ib", r"(rc|rc_mlx5|rc_verbs|dc_mlx5|ud_mlx5|ud_verbs)/", 0)]],
    *[Transport(f"mpich-ofi-{fabric}", "mpich", fabric, f"MPICH 5.0.2 `mpivars`; {doc}",
                select={"MPIR_CVAR_CH4_NETMOD": "ofi", "FI_PROVIDER": provider},
                eager_var="MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD", devices_var=devices, max_devices=int(bool(devices)),
                account=rf"netmod=ofi provider={provider}\b",
                verified=("8 KiB -> 8192 B, 32 KiB -> 32768 B eager with MPIR_CVAR_NOLOCAL=1 on one node "
                          "(default: no rendezvous below the provider's largest message)" if v else ""))
      for fabric, provider, devices, doc, v in [
          ("tcp", "tcp", "FI_TCP_IFACE", RXM_DOCS, 1),  # FI_TCP_IFACE names one interface
          # Cray MPICH on Slingshot 11: libfabric's cxi provider
          ("slingshot", "cxi", "", "libfabric fi_cxi(7) (FI_CXI_RDZV_THRESHOLD: the provider's own)", 0)]],
    # ---- MVAPICH2 (OFA-IB-CH3): its own variables (MVAPICH2 2.3 User Guide, 'Run time parameters') --
    Transport("mvapich-shm", "mvapich", "shm", "MVAPICH2 2.3 User Guide (MV2_SMP_EAGERSIZE)",
              eager_var="MV2_SMP_EAGERSIZE"),
    Transport("mvapich-ib", "mvapich", "ib", "MVAPICH2 2.3 User Guide (MV2_IBA_EAGER_THRESHOLD, MV2_IBA_HCA)",
              eager_var="MV2_IBA_EAGER_THRESHOLD", devices_var="MV2_IBA_HCA"),
    # ---- Intel MPI: its shm, and OFI providers (Intel MPI Developer Reference 2021,
    # 'OFI-capable Network Fabrics Control': I_MPI_FABRICS, I_MPI_OFI_PROVIDER) -----------------
    # On shared memory 2021.18 sent 4 MiB without waiting for the receive, and
    # I_MPI_SHM_CELL_FWD_SIZE, I_MPI_EAGER_THRESHOLD, MPIR_CVAR_CH4_SHM_POSIX_EAGER_MAX_MSG_SIZE
    # did not move that; over OFI's tcp provider neither those nor MPIR_CVAR_CH4_OFI_EAGER_THRESHOLD
    # nor FI_OFI_RXM_BUFFER_SIZE moved it below 256 KiB (jb-eager, 2 ranks, I_MPI_FABRICS=ofi)
    Transport("impi-shm", "intelmpi", "shm", "Intel MPI Developer Reference 2021 (I_MPI_FABRICS)",
              select={"I_MPI_FABRICS": "shm"}, account=r"\bfabrics=shm\b"),
    *[Transport(f"impi-ofi-{fabric}", "intelmpi", fabric,
                f"Intel MPI Developer Reference 2021 (I_MPI_FABRICS, I_MPI_OFI_PROVIDER); {doc}",
                select={"I_MPI_FABRICS": "shm:ofi", "I_MPI_OFI_PROVIDER": provider},
                eager_var=eager, devices_var=devices, max_devices=int(provider == "tcp"),
                account=rf"\bfabrics=(shm-)?ofi ofi={provider}\b")
      for fabric, provider, eager, devices, doc in [
          ("tcp", "tcp", "", "FI_TCP_IFACE", RXM_DOCS),
          # mlx runs over UCX: UCX's variables apply (Intel MPI Developer Guide, 'OFI Providers Support')
          ("ib", "mlx", "UCX_RNDV_THRESH", "UCX_NET_DEVICES", UCX_DOCS)]],
]}


def by_name(name):
    try:
        return TRANSPORTS[name]
    except KeyError:
        raise KeyError(f"unknown transport '{name}' (known: {', '.join(TRANSPORTS)})") from None


# ---- the MPI's own account ---------------------------------------------------------------

# What makes each family report its selection, at start-up (and UCX when it connects a peer,
# during the warm-up): Open MPI's framework verbosity (`ompi_info --param pml base --level 9`),
# UCX's log level (its INFO lines name each endpoint's transports and devices), MPICH's
# MPIR_CVAR_DEBUG_SUMMARY (`mpivars`: "ch4-ofi may print its provider"), Intel MPI's
# I_MPI_DEBUG (Developer Reference: level 2 names the libfabric provider).
ACCOUNT_VARS = {
    "openmpi": {"OMPI_MCA_pml_base_verbose": "10", "OMPI_MCA_btl_base_verbose": "10",
                "OMPI_MCA_mtl_base_verbose": "10", "UCX_LOG_LEVEL": "info"},
    "mpich": {"MPIR_CVAR_DEBUG_SUMMARY": "1", "UCX_LOG_LEVEL": "info"},
    "intelmpi": {"I_MPI_DEBUG": "2"},
}

# The launcher forwards each process's writes as they come, so another process's output can land
# inside a line: MPICH once wrote its capability line and its newline apart, and the other rank's
# UCX line came between (1 of 150 runs of two ranks here, the CPUs busy; the check then failed for
# "no account").  So no pattern is tied to a line's start or end, and a name stops at the next '['.
_OMPI_HOST = r"\[(?P<host>[^\]:\s]+):\d+\] "
_OMPI_SELECTED = re.compile(_OMPI_HOST + r"select: component (?P<name>\w+) selected\b")
_OMPI_BTL = re.compile(_OMPI_HOST + r"select: init of component (?P<name>\w+) returned success\b")
# UCX 1.13: "ep_cfg[1]: tag(sysv/memory cma/memory) ..."; 1.20: "ucp_context_0 intra-node cfg#1 tag(...) ..."
# (UCX pads the pid: "[node1:2740 :0]")
_UCX_LANES = re.compile(r"\[[\d.]+\] \[(?P<host>[^\]:\s]+):\s*\d+\s*:\s*\d+\]\s+ucp_worker\.c:\d+\s+UCX\s+INFO\s+"
                        r"(?:ep_cfg\[\d+\]:|ucp_context_\d+ [^\[\n]*? cfg#\d+) (?P<lanes>[^\[\n]*)")
_UCX_TL = re.compile(r"\b([a-z0-9_]+)/([\w.:-]+)")
_MPICH_UCX = re.compile(r"==== UCX netmod Capability ====|MPIDI_UCX_CONTEXT_ID_BITS: ")
_MPICH_OFI = re.compile(r"libfabric provider: ([^\s\[]+)")
_IMPI_OFI = re.compile(r"\[0\] MPI startup\(\): libfabric provider: ([^\s\[]+)")
# the tuning file it loads is named for the fabrics it runs: ..._shm.dat, ..._shm-ofi.dat, ..._ofi.dat
_IMPI_FABRICS = re.compile(r'\[0\] MPI startup\(\): Load tuning file: "[^"]*?_(shm-ofi|shm|ofi)\.dat"')

# OB1's PMLs and the MTLs cm runs: the two sets of names Open MPI selects one of
_OMPI_PMLS = {"ob1", "cm", "ucx", "v", "monitoring"}


def _ucx_transports(text):
    """{host: {tl/device}} of UCX's INFO lines: every lane of every endpoint, not loopback."""
    found = {}
    for m in _UCX_LANES.finditer(text):
        for tl, device in _UCX_TL.findall(m["lanes"]):
            if tl != "self":
                found.setdefault(m["host"], set()).add(f"{tl}/{device}")
    return found


def account(family, text, first_node=""):
    """{node: account} from a job's output (stdout and stderr) with ACCOUNT_VARS[family]
    set; an account is the words the transports' `account` patterns match, e.g.
    'pml=ob1 btl=self,tcp,vader', 'netmod=ucx ucx=sysv/memory,tcp/eth0' or
    'fabrics=shm-ofi ofi=tcp'.  MPICH and Intel
    MPI report from rank 0 only: their account is first_node's.  {} when the MPI said nothing."""
    if family == "openmpi":
        nodes = {}
        for m in _OMPI_SELECTED.finditer(text):
            kind = "pml" if m["name"] in _OMPI_PMLS else "mtl"
            nodes.setdefault(m["host"], {}).setdefault(kind, set()).add(m["name"])
        for m in _OMPI_BTL.finditer(text):
            nodes.setdefault(m["host"], {}).setdefault("btl", set()).add(m["name"])
        for host, tls in _ucx_transports(text).items():
            nodes.setdefault(host, {})["ucx"] = tls
        return {host: " ".join(f"{kind}={','.join(sorted(parts[kind]))}"
                               for kind in ("pml", "btl", "mtl", "ucx") if kind in parts)
                for host, parts in nodes.items()}
    if family == "mpich":
        words = []
        if _MPICH_UCX.search(text):
            words.append("netmod=ucx")
        provider = _MPICH_OFI.search(text)
        if provider:
            words.append(f"netmod=ofi provider={provider[1]}")
        if not words:
            return {}
        ucx = _ucx_transports(text)  # UCX speaks per process: per node
        return ({host: f"{' '.join(words)} ucx={','.join(sorted(tls))}" for host, tls in ucx.items()}
                or {first_node: " ".join(words)})
    if family == "intelmpi":
        fabrics, provider = _IMPI_FABRICS.search(text), _IMPI_OFI.search(text)
        words = ([f"fabrics={fabrics[1]}"] if fabrics else []) + ([f"ofi={provider[1]}"] if provider else [])
        return {first_node: " ".join(words)} if words else {}
    return {}


def summary(accounts):
    """One line for a run: nodes with the same account grouped, 'n1,n2: pml=ob1 ...; n3: ...'."""
    groups = {}
    for node, text in accounts.items():
        groups.setdefault(text, []).append(node)
    return "; ".join(f"{','.join(sorted(nodes))}: {text}" for text, nodes in groups.items())


def accounts_of(line):
    """The distinct accounts of a summary line, nodes aside: summary's inverse, for
    comparing runs on different nodes."""
    return {part.split(": ", 1)[-1] for part in line.split("; ")} if line else set()


def mismatches(transport, accounts):
    """The nodes whose account does not match transport's pattern, {node: account}; {} when
    it matches everywhere or the transport declares no pattern."""
    if not transport.account:
        return {}
    pattern = re.compile(transport.account)
    return {node: text for node, text in accounts.items() if not pattern.search(text)}

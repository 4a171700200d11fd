#!/usr/bin/env bash
# A real Slurm cluster of network-namespace "nodes" on one machine, for tests
# and for trying the multi-node workflow on a workstation.
#
#   ci/vcluster/vcluster.sh up [N]    bring N nodes up (default 3); idempotent
#   ci/vcluster/vcluster.sh down      stop what "up" started (by pid), remove what it made
#   ci/vcluster/vcluster.sh status
#   ci/vcluster/vcluster.sh env       the variables a shell needs (eval "$(... env)")
#
# Each node is a network namespace with its own veth on a bridge, and slurmd
# runs in its own UTS (hostname), IPC and mount namespace with a private
# /dev/shm: MPI ranks on one node use shared memory, ranks on different nodes
# cross TCP.  See ../shared/notes/vcluster.md for the pitfalls this avoids.
set -euo pipefail

STATE=${JB_VCLUSTER_DIR:-/run/jitterbench-vcluster}
SUBNET=10.77.0
BRIDGE=jbvc0
CTLD_ADDR=$SUBNET.254
CTLD_NAME=$(hostname -s) # slurmctld runs only where its host name matches

die() { echo "vcluster: error: $*" >&2; exit 1; }
say() { echo "[vcluster] $*"; }

need_root_and_tools() {
    [ "$(id -u)" = 0 ] || die "must run as root (it creates network namespaces and starts Slurm daemons)"
    for tool in ip nsenter unshare; do
        command -v $tool >/dev/null || die "missing '$tool' (Debian packages iproute2, util-linux)"
    done
    unshare --net true 2>/dev/null || die "cannot create network namespaces here (unshare --net failed)"
}

install_packages() {
    local missing=()
    command -v slurmd >/dev/null || missing+=(slurmd)
    command -v slurmctld >/dev/null || missing+=(slurmctld)
    command -v sinfo >/dev/null || missing+=(slurm-client)
    command -v munged >/dev/null || missing+=(munge)
    if [ ${#missing[@]} -gt 0 ]; then
        say "installing ${missing[*]}"
        command -v apt-get >/dev/null || die "missing ${missing[*]} and no apt-get"
        apt-get update -qq >/dev/null
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    fi
}

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

write_config() {
    local n=$1 cpus
    cpus=$(nproc)
    {
        echo "127.0.0.1 localhost"
        echo "$CTLD_ADDR $CTLD_NAME"
        for i in $(seq 1 "$n"); do echo "$SUBNET.$i node$i"; done
    } > "$STATE/hosts"
    local addrs
    addrs=$(seq -s, -f "$SUBNET.%g" 1 "$n")
    cat > "$STATE/slurm.conf" <<CONF
# written by ci/vcluster/vcluster.sh
ClusterName=jbvc
SlurmctldHost=$CTLD_NAME($CTLD_ADDR)
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$STATE/munge.sock
CredType=cred/munge
StateSaveLocation=$STATE/ctld
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdSpoolDir=$STATE/slurmd.%n
SlurmdPidFile=$STATE/slurmd.%n.pid
SlurmdLogFile=$STATE/slurmd.%n.log
TmpFS=$STATE/tmp.%n
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=pmix
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
SlurmdTimeout=10
MessageTimeout=10
KillWait=2
NodeName=node[1-$n] NodeAddr=$addrs CPUs=$cpus State=UNKNOWN
PartitionName=vc Nodes=node[1-$n] Default=YES State=UP MaxTime=INFINITE OverSubscribe=YES
CONF
}

network_up() {
    local n=$1
    ip link show $BRIDGE >/dev/null 2>&1 || {
        ip link add $BRIDGE type bridge
        ip link set $BRIDGE alias "$STATE" # whose cluster this is
        ip addr add $CTLD_ADDR/24 dev $BRIDGE
        ip link set $BRIDGE up
    }
    for i in $(seq 1 "$n"); do
        ip netns list | grep -qw "jbnode$i" && continue
        ip netns add "jbnode$i"
        ip link add "jbv$i" type veth peer name eth0 netns "jbnode$i"
        ip link set "jbv$i" master $BRIDGE up
        ip -n "jbnode$i" addr add "$SUBNET.$i/24" dev eth0
        ip -n "jbnode$i" link set eth0 up
        ip -n "jbnode$i" link set lo up
    done
}

up() {
    local n=${1:-3}
    [[ $n =~ ^[1-9][0-9]?$ ]] || die "the node count must be 1 to 99, not '$n'"
    need_root_and_tools
    install_packages
    local owner
    owner=$(ip -o link show $BRIDGE 2>/dev/null | sed -n 's/.* alias //p' || true)
    if [ -n "$owner" ] && [ "$owner" != "$STATE" ]; then
        die "another virtual cluster is up (state in $owner); bring it down with JB_VCLUSTER_DIR=$owner $0 down"
    fi
    if [ -f "$STATE/nodes" ] && [ "$(cat "$STATE/nodes")" != "$n" ]; then
        die "a cluster of $(cat "$STATE/nodes") nodes is up; bring it down first"
    fi
    mkdir -p "$STATE/ctld"
    echo "$n" > "$STATE/nodes"
    write_config "$n"
    network_up "$n"

    [ -f "$STATE/munge.key" ] || { dd if=/dev/urandom of="$STATE/munge.key" bs=1024 count=1 2>/dev/null; chmod 400 "$STATE/munge.key"; }
    alive "$STATE/munged.pid" || munged --force --socket="$STATE/munge.sock" --key-file="$STATE/munge.key" \
        --pid-file="$STATE/munged.pid" --log-file="$STATE/munged.log" --seed-file="$STATE/munge.seed" ||
        die "munged did not start (log: $STATE/munged.log)"
    alive "$STATE/slurmctld.pid" || slurmctld -f "$STATE/slurm.conf" ||
        die "slurmctld did not start (log: $STATE/slurmctld.log)"
    for i in $(seq 1 "$n"); do
        mkdir -p "$STATE/tmp.node$i"
        alive "$STATE/slurmd.node$i.pid" && continue
        # own hostname (UTS), own System V IPC and /dev/shm (IPC, mount): a real node's boundaries
        nsenter --net="/run/netns/jbnode$i" unshare --uts --ipc --mount --propagation private sh -c "
            hostname node$i
            mount --bind '$STATE/hosts' /etc/hosts
            mount -t tmpfs -o mode=1777 shm-node$i /dev/shm
            exec slurmd -f '$STATE/slurm.conf' -N node$i" || die "slurmd of node$i did not start (log: $STATE/slurmd.node$i.log)"
    done
    export SLURM_CONF=$STATE/slurm.conf
    for _ in $(seq 1 60); do
        idle=$(sinfo -h -N -t idle -o %N 2>/dev/null | sort -u | wc -l)
        if [ "$idle" -ge "$n" ]; then
            say "up: $n nodes idle; export SLURM_CONF=$STATE/slurm.conf"
            return 0
        fi
        sleep 0.5
    done
    sinfo -N >&2 || true
    die "the nodes did not become idle within 30 s (logs in $STATE)"
}

down() {
    [ -d "$STATE" ] || { say "nothing to bring down"; return 0; }
    local pids=()
    for f in "$STATE"/slurmd.node*.pid "$STATE/slurmctld.pid" "$STATE/munged.pid"; do
        alive "$f" && pids+=("$(cat "$f")")
    done
    # in parallel: each daemon takes about 2 s to exit on SIGTERM
    [ ${#pids[@]} -gt 0 ] && kill "${pids[@]}" 2>/dev/null || true
    for _ in $(seq 1 50); do
        local any=0
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && any=1; done
        [ $any = 0 ] && break
        sleep 0.2
    done
    for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    local n
    n=$(cat "$STATE/nodes" 2>/dev/null || echo 0)
    for i in $(seq 1 "$n"); do
        ip link del "jbv$i" 2>/dev/null || true
        ip netns del "jbnode$i" 2>/dev/null || true
    done
    ip link del $BRIDGE 2>/dev/null || true
    rm -rf "$STATE"
    say "down"
}

status() {
    [ -f "$STATE/nodes" ] || { echo "down"; return 1; }
    SLURM_CONF=$STATE/slurm.conf sinfo -N
}

case "${1:-}" in
    up) up "${2:-3}" ;;
    down) down ;;
    status) status ;;
    env) echo "export SLURM_CONF=$STATE/slurm.conf" ;;
    *) die "usage: $0 up [N] | down | status | env" ;;
esac

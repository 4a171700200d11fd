#!/usr/bin/env bash
# A real Slurm cluster of network-namespace "nodes" on one machine, for tests
# and for trying the multi-node workflow on a workstation.
#
#   ci/vcluster/vcluster.sh up [N] [--torus AxB..] [--rails 1|2] [--link-rate R]
#                                     bring N nodes up (default 3); idempotent
#   ci/vcluster/vcluster.sh down      stop what "up" started (by pid), remove what it made
#   ci/vcluster/vcluster.sh rate R    every rate-limited link (torus or rails) to rate R at once
#   ci/vcluster/vcluster.sh rate R I  node I's links only (a slow node: its rails both ways, its
#                                     torus links outwards)
#   ci/vcluster/vcluster.sh status
#   ci/vcluster/vcluster.sh env       the variables a shell needs (eval "$(... env)")
#
# Each node is a network namespace with its own veth on a bridge, and slurmd
# runs in its own UTS (hostname), IPC and mount namespace with a private
# /dev/shm: MPI ranks on one node use shared memory, ranks on different nodes
# cross TCP.  See ../shared/notes/vcluster.md for the pitfalls this avoids.
#
# --torus AxB.. also wires the nodes as a torus (a ring for one dimension):
# a link (veth pair) between neighbours, every link rate-limited in both
# directions (tc tbf at --link-rate, default 50mbit; netem is not available),
# and static dimension-ordered routes with forwarding, so a message to a node
# h hops away really crosses h links and messages whose routes share a link
# share its rate.  Each node's torus address 10.78.0.I sits on interface
# torus0; MPI uses it for data while Slurm keeps the bridge, as real tori have
# a separate service network.  The topology file (hostname -> coordinates) is
# written to $STATE/topology.
#
# --rails K (1 or 2) rate-limits each node's network in both directions at
# --link-rate, and with 2 adds a second network (rail) on its own bridge:
# interface eth1, addresses 10.79.0.I.  Two switch planes, as Hein's machine
# had, or two adapters per node today: a message striped over both moves
# twice as fast as over one.  $STATE/rails lists the rails' interfaces.
set -euo pipefail

STATE=${JB_VCLUSTER_DIR:-/run/jitterbench-vcluster}
SUBNET=10.77.0
TORUS_SUBNET=10.78.0
RAIL2_SUBNET=10.79.0
BRIDGE=jbvc0
RAIL2_BRIDGE=jbvc1
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
# schedule batch jobs at slurmctld's next 1 s pass, not up to 3 s later (batch_sched_delay's
# default): the checks here submit one short job after another, and waited 1.2 s each on average
SchedulerParameters=batch_sched_delay=0
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
        ip netns list | grep -qw "jbnode$i" || node_up "$i"
    done
}

# node I's namespace with its first network (eth0 on the bridge)
node_up() {
    local i=$1
    ip netns add "jbnode$i"
    ip link add "jbv$i" type veth peer name eth0 netns "jbnode$i"
    ip link set "jbv$i" master $BRIDGE up
    ip -n "jbnode$i" addr add "$SUBNET.$i/24" dev eth0
    ip -n "jbnode$i" link set eth0 up
    ip -n "jbnode$i" link set lo up
}

# tbf: a device's outgoing traffic limited to the rate, with a burst of a few packets so that
# the rate holds over every message (netem is not available).  shape NETNS DEV RATE; NETNS
# "-" is the host
shape() {
    local ns=() ; [ "$1" = - ] || ns=(-n "$1")
    tc "${ns[@]}" qdisc replace dev "$2" root tbf rate "$3" burst 8kb latency 200ms
}

# both ends of a veth: each direction limited to the rate
limit() {
    local inside=$1 outside=$2 node=$3 rate=$4
    shape "$node" "$inside" "$rate"
    shape - "$outside" "$rate"
}

# whether link DEV is gone within 10 s (a namespace's links go some time after the namespace)
gone() {
    local tick
    for tick in $(seq 100); do ip link show "$1" >/dev/null 2>&1 || return 0; sleep 0.1; done
    return 1
}

# node I's second network (eth1 on the second bridge), in a namespace that lists eth0 before
# eth1.  UCX (1.13) opens its TCP devices in /sys/class/net's order, which is the order of a
# hash of each name and its namespace, so it differs between nodes; it pairs the i-th device of
# one node with the i-th address of the other, and a pair across the rails sends over whichever
# rail the kernel routes the peer's address to: with the orders crossed, 1 launch in 10 here put
# both lanes on one rail, two rails no faster than one (a CI run: 1.0x); aligned, 0 in 14.  Such a
# namespace is made again.
second_rail_up() {
    local i=$1 try
    for try in $(seq 16); do
        ip link add "jbw$i" type veth peer name eth1 netns "jbnode$i"
        ip link set "jbw$i" master $RAIL2_BRIDGE up
        ip -n "jbnode$i" addr add "$RAIL2_SUBNET.$i/24" dev eth1
        ip -n "jbnode$i" link set eth1 up
        [ "$(ip netns exec "jbnode$i" ls -U /sys/class/net | grep -x 'eth[01]' | tr -d '\n')" = eth0eth1 ] && return 0
        ip netns del "jbnode$i"
        gone "jbv$i" && gone "jbw$i" || die "node$i: its old links outlived their namespace"
        node_up "$i"
    done
    die "node$i: no namespace of 16 listed eth0 before eth1"
}

rails_up() {
    local n=$1 rails=$2 rate=$3 i
    [ -f "$STATE/rails" ] && return 0
    if [ "$rails" = 2 ]; then
        ip link show $RAIL2_BRIDGE >/dev/null 2>&1 || {
            ip link add $RAIL2_BRIDGE type bridge
            ip link set $RAIL2_BRIDGE alias "$STATE"
            ip addr add $RAIL2_SUBNET.254/24 dev $RAIL2_BRIDGE
            ip link set $RAIL2_BRIDGE up
        }
    fi
    for i in $(seq 1 "$n"); do
        if [ "$rails" = 2 ]; then
            second_rail_up "$i"
            limit eth1 "jbw$i" "jbnode$i" "$rate"
        fi
        limit eth0 "jbv$i" "jbnode$i" "$rate"
    done
    echo "$rate" > "$STATE/link-rate"
    if [ "$rails" = 2 ]; then echo "eth0 eth1"; else echo "eth0"; fi > "$STATE/rails"
}

# coordinates of node I (1-based) in the torus DIMS (dimension 0 varies fastest)
coords_of() {
    local i=$(( $1 - 1 )) d out=()
    for d in "${DIMS[@]}"; do out+=($(( i % d ))); i=$(( i / d )); done
    echo "${out[@]}"
}

node_at() { # node number (1-based) at the given coordinates
    local -a c=("$@")
    local i=0 stride=1 k
    for k in "${!DIMS[@]}"; do i=$(( i + c[k] * stride )); stride=$(( stride * DIMS[k] )); done
    echo $(( i + 1 ))
}

# The neighbour of the route from SRC to DST: dimension-ordered (lowest dimension
# first), the shorter way round, a tie (exactly half way) going the + way.  The
# benchmark's own routing (src/contention/topology.c) follows the same rule.
next_hop() {
    local -a a b
    read -ra a <<< "$(coords_of "$1")"
    read -ra b <<< "$(coords_of "$2")"
    local k
    for k in "${!DIMS[@]}"; do
        local L=${DIMS[k]} up=$(( (b[k] - a[k] + DIMS[k]) % DIMS[k] ))
        [ "$up" = 0 ] && continue
        if [ $(( 2 * up )) -le "$L" ]; then a[k]=$(( (a[k] + 1) % L )); else a[k]=$(( (a[k] - 1 + L) % L )); fi
        node_at "${a[@]}"
        return
    done
}

torus_up() {
    local n=$1 rate=$2 i j k
    [ -f "$STATE/topology" ] && return 0
    for i in $(seq 1 "$n"); do
        ip netns exec "jbnode$i" sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0
        # the node's torus address, on a veth whose peer stays inside (no dummy module here)
        ip -n "jbnode$i" link add torus0 type veth peer name torus0x
        ip -n "jbnode$i" addr add "$TORUS_SUBNET.$i/24" dev torus0
        ip -n "jbnode$i" link set torus0x up
        ip -n "jbnode$i" link set torus0 up
    done
    # one link per neighbour pair; interface "toJ" in node I leads to node J
    for i in $(seq 1 "$n"); do
        local -a c
        read -ra c <<< "$(coords_of "$i")"
        for k in "${!DIMS[@]}"; do
            [ "${DIMS[k]}" -lt 2 ] && continue
            local -a nb=("${c[@]}")
            nb[k]=$(( (c[k] + 1) % DIMS[k] ))
            j=$(node_at "${nb[@]}")
            ip -n "jbnode$i" link show "to$j" >/dev/null 2>&1 && continue # size 2: one link
            ip link add "jbt$i-$j" netns "jbnode$i" type veth peer name "jbt$j-$i" netns "jbnode$j"
            ip -n "jbnode$i" link set "jbt$i-$j" name "to$j"
            ip -n "jbnode$j" link set "jbt$j-$i" name "to$i"
            for end in "$i:$j" "$j:$i"; do
                local me=${end%:*} them=${end#*:}
                ip netns exec "jbnode$me" sysctl -qw "net.ipv4.conf.to$them.rp_filter=0"
                shape "jbnode$me" "to$them" "$rate"
                ip -n "jbnode$me" link set "to$them" up
            done
        done
    done
    for i in $(seq 1 "$n"); do
        for j in $(seq 1 "$n"); do
            [ "$i" = "$j" ] && continue
            local via
            via=$(next_hop "$i" "$j")
            ip -n "jbnode$i" route add "$TORUS_SUBNET.$j/32" via "$TORUS_SUBNET.$via" dev "to$via" onlink src "$TORUS_SUBNET.$i"
        done
    done
    {
        echo "# the emulated torus of ci/vcluster/vcluster.sh: links of $rate each way"
        echo "dims $(IFS=x; echo "${DIMS[*]}")"
        echo "wrap$(for _ in "${DIMS[@]}"; do printf ' yes'; done)"
        for i in $(seq 1 "$n"); do echo "node$i $(coords_of "$i")"; done
    } > "$STATE/topology.tmp"
    echo "$rate" > "$STATE/link-rate"
    mv "$STATE/topology.tmp" "$STATE/topology"
}

up() {
    local n=3 torus="" rate=50mbit rails=""
    while [ $# -gt 0 ]; do
        case "$1" in
            --torus) torus=${2:-}; shift 2 || die "--torus needs dimensions, e.g. 6 or 2x3" ;;
            --link-rate) rate=${2:-}; shift 2 || die "--link-rate needs a rate, e.g. 50mbit" ;;
            --rails) rails=${2:-}; shift 2 || die "--rails needs 1 or 2" ;;
            -*) die "unknown option '$1' (up [N] [--torus AxB..] [--rails 1|2] [--link-rate R])" ;;
            *) n=$1; shift ;;
        esac
    done
    DIMS=()
    if [ -n "$torus" ]; then
        [[ $torus =~ ^[1-9][0-9]*(x[1-9][0-9]*)*$ ]] || die "--torus must be dimensions like 6 or 2x3, not '$torus'"
        IFS=x read -ra DIMS <<< "$torus"
        local product=1 d
        for d in "${DIMS[@]}"; do product=$(( product * d )); done
        n=$product
    fi
    [[ $n =~ ^[1-9][0-9]?$ ]] || die "the node count must be 1 to 99, not '$n'"
    if [ -n "$rails" ]; then
        [[ $rails =~ ^[12]$ ]] || die "--rails must be 1 or 2, not '$rails'"
        [ -z "$torus" ] || die "--rails and --torus do not combine (the torus has its own links)"
    fi
    [[ $rate =~ ^[0-9]+([kmg]?bit)$ ]] || die "--link-rate must be like 50mbit, not '$rate'"
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
    [ ${#DIMS[@]} -gt 0 ] && torus_up "$n" "$rate"
    [ -n "$rails" ] && rails_up "$n" "$rails" "$rate"

    [ -f "$STATE/munge.key" ] || { dd if=/dev/urandom of="$STATE/munge.key" bs=1024 count=1 2>/dev/null; chmod 400 "$STATE/munge.key"; }
    alive "$STATE/munged.pid" || munged --force --socket="$STATE/munge.sock" --key-file="$STATE/munge.key" \
        --pid-file="$STATE/munged.pid" --log-file="$STATE/munged.log" --seed-file="$STATE/munge.seed" ||
        die "munged did not start (log: $STATE/munged.log)"
    alive "$STATE/slurmctld.pid" || slurmctld -f "$STATE/slurm.conf" ||
        die "slurmctld did not start (log: $STATE/slurmctld.log)"
    for i in $(seq 1 "$n"); do
        mkdir -p "$STATE/tmp.node$i"
        alive "$STATE/slurmd.node$i.pid" && continue
        # own hostname (UTS), own System V IPC and /dev/shm (IPC, mount): a real node's boundaries;
        # its own sysfs, so that /sys/class/net lists the node's interfaces (what the benchmarks
        # record), with the cgroup tree bound back in (slurmd needs it: ../shared/notes/vcluster.md)
        mkdir -p "$STATE/cgroup.node$i"
        nsenter --net="/run/netns/jbnode$i" unshare --uts --ipc --mount --propagation private sh -c "
            hostname node$i
            mount --bind '$STATE/hosts' /etc/hosts
            mount -t tmpfs -o mode=1777 shm-node$i /dev/shm
            mount --rbind /sys/fs/cgroup '$STATE/cgroup.node$i'
            mount -t sysfs sysfs-node$i /sys
            mount --rbind '$STATE/cgroup.node$i' /sys/fs/cgroup
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
        ip link del "jbw$i" 2>/dev/null || true
        ip netns del "jbnode$i" 2>/dev/null || true
    done
    ip link del $BRIDGE 2>/dev/null || true
    ip link del $RAIL2_BRIDGE 2>/dev/null || true
    rm -rf "$STATE"
    say "down"
}

# every rate-limited link of the cluster up, torus or rails, to another rate at once: a known
# answer measured at two rates needs no second cluster; or one node's only (rate R I): a slow
# node, the known answer of jb-pairs
rate() {
    local rate=${1:-} only=${2:-} n i dev
    [[ $rate =~ ^[0-9]+([kmg]?bit)$ ]] || die "rate must be like 50mbit, not '$rate'"
    [ -f "$STATE/link-rate" ] || die "no rate-limited links are up (up --torus or --rails first)"
    need_root_and_tools
    n=$(cat "$STATE/nodes")
    [ -z "$only" ] || [[ $only =~ ^[1-9][0-9]*$ && $only -le $n ]] || die "node must be 1 to $n, not '$only'"
    for i in $(seq 1 "$n"); do
        [ -z "$only" ] || [ "$i" = "$only" ] || continue
        for dev in $(tc -n "jbnode$i" qdisc show | awk '$2 == "tbf" {print $5}'); do shape "jbnode$i" "$dev" "$rate"; done
        for dev in "jbv$i" "jbw$i"; do
            tc qdisc show dev "$dev" 2>/dev/null | grep -q '^qdisc tbf' && shape - "$dev" "$rate"
        done
    done
    if [ -n "$only" ]; then
        say "node $only's links at $rate"
        return
    fi
    echo "$rate" > "$STATE/link-rate"
    [ -f "$STATE/topology" ] && sed -i "1s/links of .* each way/links of $rate each way/" "$STATE/topology"
    say "links at $rate each way"
}

status() {
    [ -f "$STATE/nodes" ] || { echo "down"; return 1; }
    [ -f "$STATE/rails" ] && echo "rails: $(cat "$STATE/rails") at $(cat "$STATE/link-rate") each way"
    SLURM_CONF=$STATE/slurm.conf sinfo -N
}

case "${1:-}" in
    up) shift; up "$@" ;;
    down) down ;;
    status) status ;;
    rate) shift; rate "$@" ;;
    env) echo "export SLURM_CONF=$STATE/slurm.conf" ;;
    *) die "usage: $0 up [N] [--torus AxB..] [--rails 1|2] [--link-rate R] | rate R [NODE] | down | status | env" ;;
esac

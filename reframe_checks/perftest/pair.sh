#!/bin/bash
# pair.sh PROGRAM [OPTIONS...]: one perftest program (ib_send_lat, ib_write_bw, ...) as a
# server and its client.  Started by the job's launcher as two tasks on two nodes, task 0
# serves and task 1 connects to it; started alone, both run on this host and the messages
# loop back through the adapter.  The client's output is this script's output; the server's
# goes to server.out.  The server's host and port meet the client in a file of the job's
# stage folder, which the nodes share, so no launcher needs to tell one task of the other.
set -u
program=$1
shift
rank=${SLURM_PROCID:-${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-0}}}}
size=${SLURM_NTASKS:-${OMPI_COMM_WORLD_SIZE:-${PMI_SIZE:-1}}}
meeting=perftest.server
# perftest waits for its client forever: a client that never comes must not hold the job
server_wait=${JB_PERFTEST_SERVER_WAIT:-300}
# two jobs on one node must not share a port: perftest's default is 18515
port=$((18515 + ${SLURM_JOB_ID:-$$} % 10000))

echo "# perftest: $("$program" --version 2>&1 | head -n 1)"

serve() {
    timeout "$server_wait" "$program" "$@" -p "$port" > server.out 2>&1
}

connect() {  # the server may not be listening yet: perftest gives up at once, so try again
    local host=$1 port=$2 attempt status=1
    shift 2
    for attempt in $(seq 1 10); do
        "$program" "$@" -p "$port" "$host" > client.out 2>&1
        status=$?
        [ "$status" -eq 0 ] && break
        grep -q "Couldn't connect" client.out || break
        sleep 1
    done
    cat client.out
    return "$status"
}

if [ "$size" -le 1 ]; then
    echo "# perftest pair: server and client on $(hostname)"
    serve "$@" &
    sleep 1
    connect localhost "$port" "$@"
    status=$?
    [ "$status" -eq 0 ] || kill %1 2>/dev/null
    wait
    exit $status
elif [ "$rank" -eq 0 ]; then
    echo "$(hostname) $port" > "$meeting.tmp" && mv "$meeting.tmp" "$meeting"
    serve "$@"
    exit $?
elif [ "$rank" -eq 1 ]; then
    for _ in $(seq 1 120); do [ -s "$meeting" ] && break; sleep 0.5; done
    if [ ! -s "$meeting" ]; then
        echo "pair.sh: task 0 never wrote $meeting: its server did not start" >&2
        exit 1
    fi
    read -r host server_port < "$meeting"
    echo "# perftest pair: server $host, client $(hostname)"
    connect "$host" "$server_port" "$@"
    exit $?
fi

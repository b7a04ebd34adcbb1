#!/usr/bin/env bash
# cluster-fixture.sh -- a throwaway Redis Cluster on free loopback ports: 3 masters, one replica
# each (redis-server --cluster-enabled yes, redis-cli --cluster create --cluster-replicas 1).
#
# As a command (what the integration tests run):
#   scripts/cluster-fixture.sh start DIR   start it in DIR (created), wait for cluster_state:ok on
#                                          every node; DIR/ports lists the six ports, one a line
#                                          (masters first as created), DIR/pids their pids
#   scripts/cluster-fixture.sh stop DIR    stop every node started in DIR (SIGTERM, then KILL)
#   scripts/cluster-fixture.sh wait DIR [SECONDS]   wait (default 30 s) until every node still
#                                          running says cluster_state:ok and agrees on the slots
#   scripts/cluster-fixture.sh restart DIR PORT   start node PORT again (after a test killed it):
#                                          with its nodes.conf it rejoins (a replica, if its
#                                          master's replica took over); DIR/pids is updated
# Sourced: cluster_start DIR sets CLUSTER_PORTS (array); cluster_stop DIR; cluster_wait DIR [S].
#
# Never uses 6379. Each node needs its port and port + 10000 (the cluster bus) free, so ports are
# drawn from 10000..22767 (bus ports below 32768, where the kernel's ephemeral ports start).
# cluster-node-timeout is CLUSTER_NODE_TIMEOUT_MS (default 3000): a killed master is failed over
# in about 4-6 s instead of the default's 15 s and more, while a node that a busy machine leaves
# unscheduled for a second is not failed (at 1000, the CI at load 20 saw CLUSTERDOWN on a test's
# set-up ZADD). No persistence (no AOF, no RDB): the nodes' data is gone with DIR.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/redis-fixture.sh" # pids_stop

CLUSTER_NODES=6

# A port for a node: it and its bus port (+10000) free, both below the kernel's ephemeral range
# (32768.. here), so no client socket's local port takes one between this check and the bind.
cluster_free_port() {
    local port
    for _ in $(seq 1 100); do
        port=$((10000 + RANDOM % 12768))
        if ! (exec 3<>/dev/tcp/127.0.0.1/"$port") 2>/dev/null &&
            ! (exec 3<>/dev/tcp/127.0.0.1/$((port + 10000))) 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

# One node in DIR/PORT, daemonized, answering PING; its pid in DIR/PORT/redis.pid. 0 or 1.
cluster_node_start() {
    local dir=$1 port=$2
    mkdir -p "$dir/$port"
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir/$port" \
        --cluster-enabled yes --cluster-config-file "$dir/$port/nodes.conf" \
        --cluster-node-timeout "${CLUSTER_NODE_TIMEOUT_MS:-3000}" \
        --save "" --appendonly no --repl-diskless-sync-delay 0 --pidfile "$dir/$port/redis.pid" \
        --logfile "$dir/$port/redis.log" --daemonize yes || return 1
    for _ in $(seq 1 100); do
        redis-cli -p "$port" ping 2>/dev/null | grep -q PONG && return 0
        [ -f "$dir/$port/redis.pid" ] || ! grep -q 'aborting' "$dir/$port/redis.log" 2>/dev/null || return 1
        sleep 0.05
    done
    [ -f "$dir/$port/redis.pid" ] && kill "$(cat "$dir/$port/redis.pid")" 2>/dev/null
    return 1
}

cluster_start() {
    local dir=$1 port i started
    mkdir -p "$dir"
    : >"$dir/ports"
    : >"$dir/pids"
    CLUSTER_PORTS=()
    for i in $(seq 1 "$CLUSTER_NODES"); do
        started=0
        for _ in 1 2 3 4 5; do # a port taken between the check and the bind: another one
            port=$(cluster_free_port) || return 1
            if cluster_node_start "$dir" "$port"; then
                started=1
                break
            fi
        done
        if [ "$started" = 0 ]; then
            echo "cluster node $i did not start (see $dir/*/redis.log)" >&2
            return 1
        fi
        CLUSTER_PORTS+=("$port")
        echo "$port" >>"$dir/ports"
        cat "$dir/$port/redis.pid" >>"$dir/pids"
    done
    local addrs=()
    for port in "${CLUSTER_PORTS[@]}"; do addrs+=("127.0.0.1:$port"); done
    # redis-cli makes the first three the masters and the last three their replicas
    if ! redis-cli --cluster create "${addrs[@]}" --cluster-replicas 1 --cluster-yes \
        >"$dir/create.log" 2>&1; then
        echo "redis-cli --cluster create failed (see $dir/create.log)" >&2
        return 1
    fi
    cluster_wait "$dir" 30
}

# Every node that still runs reports cluster_state:ok and all the slots assigned, and every
# replica among them has synced with its master.
cluster_wait() {
    local dir=$1 secs=${2:-30} port ok info
    for _ in $(seq 1 $((secs * 10))); do
        ok=1
        while read -r port; do
            info=$(redis-cli -p "$port" cluster info 2>/dev/null) || continue # a stopped node
            printf '%s' "$info" | grep -q 'cluster_state:ok' || ok=0
            printf '%s' "$info" | grep -q 'cluster_slots_assigned:16384' || ok=0
            # a replica counts once it has synced with its master (a failover needs that)
            info=$(redis-cli -p "$port" info replication 2>/dev/null) || continue
            case $info in *role:slave*) printf '%s' "$info" | grep -q 'master_link_status:up' || ok=0 ;; esac
        done <"$dir/ports"
        [ "$ok" = 1 ] && return 0
        sleep 0.1
    done
    echo "cluster in $dir not ok after $secs s" >&2
    return 1
}

cluster_restart() {
    local dir=$1 port=$2 i=0 p
    grep -qx "$port" "$dir/ports" || return 1
    cluster_node_start "$dir" "$port" || return 1
    local pid
    pid=$(cat "$dir/$port/redis.pid")
    : >"$dir/pids.new"
    while read -r p; do
        i=$((i + 1))
        if [ "$p" = "$port" ]; then echo "$pid"; else sed -n "${i}p" "$dir/pids"; fi
    done <"$dir/ports" >"$dir/pids.new"
    mv "$dir/pids.new" "$dir/pids"
}

cluster_stop() {
    pids_stop "$1/pids"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    case "${1:-}" in
    start) [ -n "${2:-}" ] && cluster_start "$2" || { cluster_stop "${2:-/nonexistent}"; exit 1; } ;;
    stop) [ -n "${2:-}" ] && cluster_stop "$2" ;;
    wait) [ -n "${2:-}" ] && cluster_wait "$2" "${3:-30}" ;;
    restart) [ -n "${3:-}" ] && cluster_restart "$2" "$3" ;;
    *)
        echo "usage: $0 start|stop|wait DIR [SECONDS] | restart DIR PORT" >&2
        exit 2
        ;;
    esac
fi

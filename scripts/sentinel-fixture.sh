#!/usr/bin/env bash
# sentinel-fixture.sh -- a throwaway Redis primary with one replica and three Redis Sentinels on
# free loopback ports (never 6379), for rankd's redis-sentinel:// tests.
#
#   scripts/sentinel-fixture.sh start DIR   start them in DIR; wait until every sentinel knows the
#                                           replica and the other two; DIR/ports: the primary,
#                                           the replica, the three sentinels, one a line; DIR/pids
#                                           their pids
#   scripts/sentinel-fixture.sh stop DIR    stop them (SIGTERM, then KILL), and what extra and
#                                           redis started in DIR
#   scripts/sentinel-fixture.sh extra DIR NAME PORT
#                                           one more sentinel, in DIR/NAME, that monitors
#                                           mymaster at 127.0.0.1:PORT on its own (quorum 1,
#                                           down-after-milliseconds 600000: it keeps naming
#                                           PORT); DIR/NAME/port its port, its pid added to
#                                           DIR/pids
#   scripts/sentinel-fixture.sh redis DIR NAME [CONF]
#                                           a plain redis-server in DIR/NAME (CONF: its
#                                           configuration file); DIR/NAME/port, DIR/pids
#
# The master is monitored as "mymaster", quorum 2, down-after-milliseconds 1000 and
# failover-timeout 5000, so a killed primary is replaced in a few seconds. No persistence.
set -u
. "$(dirname "${BASH_SOURCE[0]}")/redis-fixture.sh"

sentinel_wait() {
    local dir=$1 port
    for _ in $(seq 1 100); do
        local ok=1
        for port in $(sed -n '3,5p' "$dir/ports"); do
            [ "$(redis-cli -p "$port" sentinel replicas mymaster 2>/dev/null | grep -c '^name$')" -ge 1 ] || ok=0
            [ "$(redis-cli -p "$port" sentinel sentinels mymaster 2>/dev/null | grep -c '^name$')" -ge 2 ] || ok=0
        done
        [ "$ok" = 1 ] && return 0
        sleep 0.1
    done
    echo "sentinels in $dir do not know each other" >&2
    return 1
}

sentinel_start() {
    local dir=$1
    mkdir -p "$dir/primary" "$dir/replica"
    : >"$dir/ports"
    : >"$dir/pids"
    # a replica syncs at once (the default waits 5 s for more replicas), and nothing persists
    printf 'repl-diskless-sync-delay 0\nsave ""\nappendonly no\n' >"$dir/redis.conf"
    redis_start "$dir/primary" "$dir/redis.conf" || return 1
    local primary=$REDIS_PORT
    echo "$primary" >>"$dir/ports"
    echo "$REDIS_PID" >>"$dir/pids"
    redis_start "$dir/replica" "$dir/redis.conf" || return 1
    local replica=$REDIS_PORT
    echo "$replica" >>"$dir/ports"
    echo "$REDIS_PID" >>"$dir/pids"
    redis-cli -p "$replica" replicaof 127.0.0.1 "$primary" >/dev/null || return 1
    for _ in $(seq 1 100); do # synced: a failover must not promote an empty replica
        redis-cli -p "$replica" info replication | grep -q 'master_link_status:up' && break
        sleep 0.05
    done
    redis-cli -p "$replica" info replication | grep -q 'master_link_status:up' || {
        echo "the replica in $dir did not sync" >&2
        return 1
    }
    for i in 1 2 3; do
        sentinel_spawn "$dir/s$i" "sentinel monitor mymaster 127.0.0.1 $primary 2
sentinel down-after-milliseconds mymaster 1000
sentinel failover-timeout mymaster 5000
sentinel parallel-syncs mymaster 1" || return 1
        echo "$SENTINEL_PORT" >>"$dir/ports"
        echo "$SENTINEL_PID" >>"$dir/pids"
    done
    sentinel_wait "$dir"
}

# A sentinel in DIR with the monitor lines MONITOR, on a free port: SENTINEL_PORT, SENTINEL_PID.
sentinel_spawn() {
    local dir=$1 monitor=$2 port started=0
    mkdir -p "$dir"
    for _ in 1 2 3 4 5; do # a port taken between the check and the bind: another one
        port=$(free_port) || return 1
        printf 'port %s\nbind 127.0.0.1\ndir %s\n%s\n' "$port" "$dir" "$monitor" \
            >"$dir/sentinel.conf"
        redis-server "$dir/sentinel.conf" --sentinel --daemonize yes \
            --pidfile "$dir/sentinel.pid" --logfile "$dir/sentinel.log" || return 1
        for _ in $(seq 1 50); do
            if redis-cli -p "$port" ping 2>/dev/null | grep -q PONG; then
                started=1
                break
            fi
            sleep 0.05
        done
        [ "$started" = 1 ] && break
        [ -f "$dir/sentinel.pid" ] && kill "$(cat "$dir/sentinel.pid")" 2>/dev/null
    done
    if [ "$started" = 0 ]; then
        echo "the sentinel in $dir did not start (see $dir/sentinel.log)" >&2
        return 1
    fi
    SENTINEL_PORT=$port
    SENTINEL_PID=$(cat "$dir/sentinel.pid")
}

# One more sentinel, on its own: it names 127.0.0.1:PORT as mymaster for the whole test (no
# failover of its own: down-after-milliseconds 600000), whatever that address is.
sentinel_extra() {
    local dir=$1 name=$2 port=$3
    sentinel_spawn "$dir/$name" "sentinel monitor mymaster 127.0.0.1 $port 1
sentinel down-after-milliseconds mymaster 600000
sentinel failover-timeout mymaster 600000" || return 1
    echo "$SENTINEL_PID" >>"$dir/pids"
    echo "$SENTINEL_PORT" >"$dir/$name/port"
}

# A plain redis-server in DIR/NAME (CONF: its configuration; none: no persistence).
redis_extra() {
    local dir=$1 name=$2 conf=${3:-}
    if [ -z "$conf" ]; then
        conf="$dir/$name.conf"
        printf 'save ""\nappendonly no\n' >"$conf"
    fi
    redis_start "$dir/$name" "$conf" || return 1
    echo "$REDIS_PID" >>"$dir/pids"
    echo "$REDIS_PORT" >"$dir/$name/port"
}

sentinel_stop() {
    pids_stop "$1/pids"
}

case "${1:-}" in
start) [ -n "${2:-}" ] && sentinel_start "$2" || { sentinel_stop "${2:-/nonexistent}"; exit 1; } ;;
stop) [ -n "${2:-}" ] && sentinel_stop "$2" ;;
extra) [ -n "${4:-}" ] && sentinel_extra "$2" "$3" "$4" ;;
redis) [ -n "${3:-}" ] && redis_extra "$2" "$3" "${4:-}" ;;
*)
    echo "usage: $0 start|stop DIR, extra DIR NAME PORT, redis DIR NAME [CONF]" >&2
    exit 2
    ;;
esac

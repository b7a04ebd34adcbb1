#!/usr/bin/env bash
# redis-fixture.sh -- shared helpers to start a throwaway redis-server on a free loopback port.
# Source it, then: redis_start DIR [CONFIG_FILE]; it sets REDIS_PORT and REDIS_PID.
# Never uses 6379. The caller traps redis_stop. pids_stop FILE stops the processes FILE lists.

# free_port: a port from 20000 up to the kernel's ephemeral range (ip_local_port_range), so that
# it is never an outgoing connection's local port: connecting to that one fails (it looks free),
# but a server's bind to it fails too.
free_port() {
    local port lo=0 span=30000
    read -r lo _ </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null
    [ "${lo:-0}" -gt 21000 ] 2>/dev/null && span=$((lo - 20000))
    for _ in $(seq 1 100); do
        port=$(( 20000 + RANDOM % span ))
        if ! (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null; then
            echo "$port"
            return 0
        fi
    done
    return 1
}

redis_start() {
    local dir=$1 conf=()
    [ -n "${2:-}" ] && conf=("$2")
    mkdir -p "$dir"
    for _ in 1 2 3 4 5; do
        REDIS_PORT=$(free_port)
        : >"$dir/redis.log" # this attempt's log only (read below)
        redis-server "${conf[@]}" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$dir" \
            --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --daemonize yes || return 1
        for _ in $(seq 1 100); do
            if redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
                REDIS_PID=$(cat "$dir/redis.pid")
                return 0
            fi
            # the port was taken after all (the daemon logs it and exits): the next port now,
            # not after 100 pings of a server that is gone
            grep -q 'Failed listening on port' "$dir/redis.log" 2>/dev/null && break
            sleep 0.05
        done
        [ -f "$dir/redis.pid" ] && kill "$(cat "$dir/redis.pid")" 2>/dev/null
    done
    echo "could not start redis-server (see $dir/redis.log)" >&2
    return 1
}

redis_stop() {
    if [ -n "${REDIS_PID:-}" ]; then
        kill "$REDIS_PID" 2>/dev/null || true
        for _ in $(seq 1 50); do kill -0 "$REDIS_PID" 2>/dev/null || break; sleep 0.05; done
    fi
}

# Stop every process whose pid is a line of FILE: SIGTERM, up to 2.5 s, then SIGKILL.
pids_stop() {
    local file=$1 pid
    [ -f "$file" ] || return 0
    while read -r pid; do kill "$pid" 2>/dev/null || true; done <"$file"
    for _ in $(seq 1 50); do
        local alive=0
        while read -r pid; do kill -0 "$pid" 2>/dev/null && alive=1; done <"$file"
        [ "$alive" = 0 ] && return 0
        sleep 0.05
    done
    while read -r pid; do kill -9 "$pid" 2>/dev/null || true; done <"$file"
}

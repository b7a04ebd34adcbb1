#!/usr/bin/env bash
# redis-fixture.sh -- shared helpers to start a throwaway redis-server on a free loopback port.
# Source it, then: redis_start DIR [CONFIG_FILE]; it sets REDIS_PORT and REDIS_PID.
# Never uses 6379. The caller traps redis_stop. pids_stop FILE stops the processes FILE lists.

free_port() {
    local port
    for _ in $(seq 1 100); do
        port=$(( 20000 + RANDOM % 30000 ))
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
        redis-server "${conf[@]}" --port "$REDIS_PORT" --bind 127.0.0.1 --dir "$dir" \
            --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" --daemonize yes || return 1
        for _ in $(seq 1 100); do
            if redis-cli -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG; then
                REDIS_PID=$(cat "$dir/redis.pid")
                return 0
            fi
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

#!/usr/bin/env bash
# write-replicas.sh -- what --write-replicas 1 costs a score write (issue 15): single-entry `set`
# writes from 64 keep-alive connections to rankd on a primary with one replica (REPLICAOF on
# loopback), once without and once with --write-replicas 1 (one WAIT 1 per flush of a
# connection's pipeline, at most one in flight), in the same run: throughput, p50/p99/max,
# rankd's CPU per write (/proc utime + stime), and the WAITs Redis ran per write
# (INFO commandstats).
#
#   bench/write-replicas.sh [seconds]   (build first: make; make bench builds build/bench/*)
#   OUT=bench/results/write-replicas.md  where the table goes (default: stdout only)
# Starts its own redis-servers and rankd processes on free loopback ports (never 6379) at
# bench_priority (bench/lib.sh) and stops them on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SECS=${1:-8}
T_START=$(date +%s)
BENCH_TAG=write-replicas
BIN=$ROOT/build/bench
# shellcheck source=bench/lib.sh
. bench/lib.sh
[ -x "$ROOT/build/rankd" ] || die "build first: make"
build_tool loadgen -lm
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
DIR=$(mktemp -d)
RK=
P1=$(port)
P2=$(port)
cleanup() {
    [ -n "$RK" ] && kill "$RK" 2>/dev/null
    redis-cli -p "$P1" shutdown nosave > /dev/null 2>&1 || true
    redis-cli -p "$P2" shutdown nosave > /dev/null 2>&1 || true
    rm -rf "$DIR"
    bench_priority_restore
}
trap cleanup EXIT
bench_priority
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
for p in "$P1" "$P2"; do
    mkdir -p "$DIR/$p"
    redis-server --port "$p" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR/$p" \
        --repl-diskless-sync-delay 0 --daemonize yes --pidfile "$DIR/$p/pid" \
        --logfile "$DIR/$p/log"
    for _ in $(seq 50); do redis-cli -p "$p" ping > /dev/null 2>&1 && break; sleep 0.1; done
    bench_boost "$(cat "$DIR/$p/pid")"
done
redis-cli -p "$P2" replicaof 127.0.0.1 "$P1" > /dev/null
for _ in $(seq 100); do
    redis-cli -p "$P2" info replication | grep -q master_link_status:up && break
    sleep 0.1
done
TOKEN=bench-token-0123456789
waits() { # the WAITs the primary has run
    redis-cli -p "$P1" info commandstats | sed -n 's/^cmdstat_wait:calls=\([0-9]*\).*/\1/p' |
        grep . || echo 0
}
run() { # run LABEL FLAGS...: one rankd, SECS of writes; prints a table row
    local label=$1 hp
    shift
    hp=$(port)
    "$ROOT/build/rankd" --listen "127.0.0.1:$hp" --redis "redis://127.0.0.1:$P1" \
        --write-token "$TOKEN" --log-level warn "$@" > "$DIR/rankd.log" 2>&1 &
    RK=$!
    for _ in $(seq 50); do curl -fs "127.0.0.1:$hp/healthz" > /dev/null 2>&1 && break; sleep 0.1; done
    curl -fs -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d '{"order":"desc"}' "127.0.0.1:$hp/boards/wr" > /dev/null
    local args=(--port "$hp" --conns 64 --url /boards/wr/scores --token "$TOKEN" --members 100000
                --body '{"id":"u{m}","score":{s},"op":"set"}')
    "$BIN/loadgen" "${args[@]}" --duration 1 --warmup 0 > /dev/null
    local t0 t1 out w0 w1
    w0=$(waits)
    t0=$(awk '{print $14+$15}' "/proc/$RK/stat")
    out=$("$BIN/loadgen" "${args[@]}" --duration "$SECS" --warmup 0)
    t1=$(awk '{print $14+$15}' "/proc/$RK/stat")
    w1=$(waits)
    kill "$RK"
    wait "$RK" 2> /dev/null || true
    RK=
    echo "$out" | python3 -c "
import json, sys, os
d = json.load(sys.stdin); a = d['all']; n = d['total_requests']
tck = os.sysconf('SC_CLK_TCK')
print('| $label | %s | %.3f | %.3f | %.1f | %d | %.1f | %.3f |' % ('{:,}'.format(int(a['rps'])), a['p50_ms'],
      a['p99_ms'], a['max_ms'], a['non2xx'], ($t1 - $t0) * 1e6 / tck / n, ($w1 - $w0) / n))"
}
{
    echo "# --write-replicas: what WAIT costs a score write"
    echo
    echo "\`bench/write-replicas.sh $SECS\`, $(date -u '+%Y-%m-%d %H:%M') UTC, rankd \`$(git rev-parse --short HEAD)\`, $(nproc) cores, $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'); priority: $PRIORITY."
    echo "Single-entry \`set\` writes (100,000 ids) from 64 keep-alive connections, ${SECS} s each, to rankd on a primary with one replica on loopback."
    echo
    echo "| rankd | writes/s | p50 ms | p99 ms | max ms | non-2xx | rankd CPU µs per write | WAITs per write |"
    echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    run "no WAIT (default)"
    run "--write-replicas 1" --write-replicas 1
    echo
    echo "Load average before: $LOAD_BEFORE; after: $(cut -d' ' -f1-3 /proc/loadavg) (the machine may be shared: compare the two rows, which ran back to back, rather than either with other runs)."
} | tee "${OUT:-/dev/null}"

#!/usr/bin/env bash
# rss.sh -- rankd's resident memory (VmRSS, and the peak VmHWM, from /proc) and its thread count,
# at start, after live reads of a 1,000,000-member board (random pages and member lookups), and
# after an NDJSON import of 200,000 entries in one POST: what an allocator or a buffer change
# costs in bytes.
#
#   bench/rss.sh [seconds of reads]  (default 10; build first: make, and build/bench/{loadgen,gen})
#   RANKD=path (default build/rankd): the binary to measure. CONNS=n (default 64).
# Starts its own redis-server and rankd on free loopback ports (never 6379) and stops both on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
SECS=${1:-10}
BIN=$ROOT/build/bench
RANKD=${RANKD:-$ROOT/build/rankd}
CONNS=${CONNS:-64}
N=1000000 N_IMPORT=200000
[ -x "$BIN/loadgen" ] && [ -x "$BIN/gen" ] && [ -x "$RANKD" ] ||
    { echo "build first: make && make bench (or BENCH_QUICK=1 make bench)" >&2; exit 2; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
RP=$(port); HP=$(port); DIR=$(mktemp -d)
cleanup() {
    kill "${RK:-}" 2>/dev/null || true
    redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR" --daemonize yes \
    --logfile "$DIR/redis.log"
for _ in $(seq 50); do redis-cli -p "$RP" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/gen" resp "$N" big u rankd 0 1 | redis-cli -p "$RP" --pipe >/dev/null
"$BIN/gen" ndjson "$N_IMPORT" i set >"$DIR/imp.ndjson"
TOKEN=bench-rss-write-token-0123 # at least 16 bytes
printf '%s\n' "$TOKEN" >"$DIR/write-token"
"$RANKD" --listen "127.0.0.1:$HP" --redis "redis://127.0.0.1:$RP" --write-token-file "$DIR/write-token" \
    >"$DIR/rankd.log" 2>&1 &
RK=$!
for _ in $(seq 300); do curl -fs "127.0.0.1:$HP/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
mem() { # mem STEP: one line of VmRSS (of it RssAnon: the heap and stacks; RssFile: the mapped
    # binary and libraries), VmHWM (the peak), in kB, and the threads
    printf '%-34s %s\n' "$1" "$(awk '/^(VmRSS|RssAnon|RssFile|VmHWM):/ {
        printf "%s %6s kB  ", $1, $2 } /^Threads:/ { printf "threads %s", $2 }' "/proc/$RK/status")"
}
mem "started"
"$BIN/loadgen" --port "$HP" --conns "$CONNS" --duration "$SECS" --warmup 0 \
    --url '/boards/big/rank?page={p}' --pages $((N / 20)) --hot-pages 1 --hot-frac 0 >/dev/null
mem "random live pages, ${SECS} s"
"$BIN/loadgen" --port "$HP" --conns "$CONNS" --duration "$SECS" --warmup 0 --url /x \
    --member-url '/boards/big/members/u{m}' --member-frac 1 --members "$N" >/dev/null
mem "member lookups, ${SECS} s"
curl -fsS --max-time 300 -X POST -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/x-ndjson' --data-binary "@$DIR/imp.ndjson" \
    "127.0.0.1:$HP/boards/imp/scores" >"$DIR/imp.out"
grep -q "\"applied\":$N_IMPORT" "$DIR/imp.out" || { echo "import: $(head -c 300 "$DIR/imp.out")" >&2; exit 1; }
mem "NDJSON import of $N_IMPORT entries"
sleep 5
mem "5 s later"

#!/usr/bin/env bash
# cpu-per-request.sh -- rankd's CPU per request (utime + stime from /proc, over the requests
# completed) and the throughput for one kind of request, on a 200,000-member board (live, or with
# page_ttl_ms 1000 for `hit`): the quick measurement behind the CPU numbers in the session notes
# (make bench has the full tables).
#
#   bench/cpu-per-request.sh [live|hit|hit-l1|member|random|write|nginx] [seconds]  (build first:
#                                                         make; make bench builds build/bench/*)
#   hit-l1: the hot page with the in-process tier on (--l1-ttl-ms 250).
#   nginx: nginx (bench/lib.sh's configuration, as in make bench) serving the hot page's bytes as a
#   static file; the CPU and syscalls are its workers'.
#   write: POSTs of one score each ({"op":"set"}) to the live board, with a write token.
#   PERF=out.txt bench/cpu-per-request.sh ...   also samples rankd with `perf record -g` over the
#                                               measured seconds and writes the flat profile
#                                               (self time, top 40 symbols) to out.txt
#   ACCESS_LOG=on|off (default off): rankd's access log, written to a file as in production
#   (--log-level info); the pair of runs is what the access log costs a request.
#   CALLGRIND=out.txt bench/cpu-per-request.sh ...   runs rankd under valgrind's callgrind,
#                                               counting only over the measured seconds, and
#                                               prints rankd's user-space instructions per
#                                               request (Ir, every thread) with the top 40
#                                               functions in out.txt (the raw profile in
#                                               out.txt.out). Load-independent, unlike
#                                               the CPU time (the machine may be shared; perf's
#                                               hardware counters are not there in every VM);
#                                               rankd runs ~50x slower, so CONNS=16 is enough.
#                                               Caveat: callgrind counts each byte of a
#                                               `rep stosb` as an instruction, so a large memset
#                                               (libmicrohttpd's pool) weighs far more than its
#                                               time (PERF shows the time).
#   SYSCALLS=out.txt bench/cpu-per-request.sh ...   counts the server's system calls over the
#                                               measured seconds (`perf stat` of the syscalls
#                                               tracepoints, every thread) and writes each call's
#                                               count per request to out.txt (also printed)
#   RCG=out.txt bench/cpu-per-request.sh ...   runs redis-server under callgrind the same way
#                                               (counting only over the measured seconds) and
#                                               prints Redis' instructions per request: all of
#                                               them, and the EVALSHAs' alone (evalShaCommand
#                                               inclusive: the scripts' commands, not the
#                                               server's reading, writing and timers); the top
#                                               functions in out.txt, the raw profile in
#                                               out.txt.out. With CONNS=16 and a page read,
#                                               Redis runs ~50x slower, so is the bottleneck
#   CONNS=n (default 64): the load generator's connections.
#   RANKD=path (default build/rankd): the binary to measure (a kept build of another commit).
# Starts its own redis-server and rankd on free loopback ports (never 6379) and stops both on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
KIND=${1:-live}
SECS=${2:-4}
BIN=$ROOT/build/bench
RANKD=${RANKD:-$ROOT/build/rankd}
[ -x "$BIN/loadgen" ] && [ -x "$BIN/gen" ] && [ -x "$RANKD" ] ||
    { echo "build first: make && make bench (or BENCH_QUICK=1 make bench)" >&2; exit 2; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
RP=$(port); HP=$(port); DIR=$(mktemp -d)
cleanup() {
    kill "${RK:-}" 2>/dev/null || true
    [ ! -s "$DIR/nginx/nginx.pid" ] || kill "$(cat "$DIR/nginx/nginx.pid")" 2>/dev/null || true
    redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1 || true
    rm -rf "$DIR"
}
trap cleanup EXIT
if [ -n "${RCG:-}" ]; then
    valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$DIR/rcg.out" \
        redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR" \
        --logfile "$DIR/redis.log" >"$DIR/rvg.log" 2>&1 &
    RVG=$!
else
    redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR" --daemonize yes \
        --logfile "$DIR/redis.log"
fi
for _ in $(seq 300); do redis-cli -p "$RP" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/gen" resp 200000 live u rankd 0 1 | redis-cli -p "$RP" --pipe >/dev/null
"$BIN/gen" resp 200000 hot u rankd 1000 1 | redis-cli -p "$RP" --pipe >/dev/null
ACCESS_LOG=${ACCESS_LOG:-off}
CONNS=${CONNS:-64}
WRAP=()
AUTH=()
TOKEN=bench-cpu-per-request-token # at least 16 bytes
if [ "$KIND" = write ]; then
    printf '%s\n' "$TOKEN" >"$DIR/write-token" # a file, not a flag: ps shows flags
    AUTH=(--write-token-file "$DIR/write-token")
fi
L1=()
[ "$KIND" != hit-l1 ] || L1=(--l1-ttl-ms 250)
[ -z "${CALLGRIND:-}" ] || WRAP=(valgrind --tool=callgrind --instr-atstart=no
    "--callgrind-out-file=$DIR/callgrind.out")
"${WRAP[@]}" "$RANKD" --listen "127.0.0.1:$HP" --redis "redis://127.0.0.1:$RP" \
    --log-level info --access-log "$ACCESS_LOG" "${AUTH[@]}" "${L1[@]}" >"$DIR/rankd.log" 2>&1 &
RK=$!
for _ in $(seq 300); do curl -fs "127.0.0.1:$HP/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
case "$KIND" in
live) ARGS=(--url '/boards/live/rank?page={p}' --pages 1 --hot-pages 1) ;;
hit | hit-l1 | nginx) ARGS=(--url '/boards/hot/rank?page={p}' --pages 1 --hot-pages 1) ;;
random) ARGS=(--url '/boards/live/rank?page={p}' --pages 10000 --hot-pages 1 --hot-frac 0) ;;
member) ARGS=(--url '/x' --member-url '/boards/live/members/u{m}' --member-frac 1 --members 200000) ;;
write) ARGS=(--url /boards/live/scores --token "$TOKEN" --members 200000
    --body '{"id":"u{m}","score":{s},"op":"set"}') ;;
*) echo "kind: live, hit, hit-l1, random, member, write or nginx" >&2; exit 2 ;;
esac
PIDS=$RK # the measured server's processes (comma-separated)
if [ "$KIND" = nginx ]; then # the same page bytes from nginx, as make bench serves them
    T_START=$(date +%s) BENCH_TAG=cpu
    # shellcheck source=bench/lib.sh
    . "$ROOT/bench/lib.sh"
    curl -fs "127.0.0.1:$HP/boards/hot/rank?page=1" >"$DIR/page.json"
    kill "$RK" && wait "$RK" 2>/dev/null || true
    RK=
    chmod 711 "$DIR" # nginx workers (www-data when started as root) read nginx/www/
    mkdir -p "$DIR/nginx/www" && mv "$DIR/page.json" "$DIR/nginx/www/page.json"
    HP=$(port)
    nginx_start "$DIR/nginx" "$HP" || { echo "nginx did not start" >&2; exit 1; }
    for _ in $(seq 50); do curl -fs "127.0.0.1:$HP/x" >/dev/null 2>&1 && break; sleep 0.1; done
    PIDS=$(pgrep -d, -P "$(cat "$DIR/nginx/nginx.pid")")
fi
cpu_of() { local s=0 p; for p in ${PIDS//,/ }; do s=$((s + $(awk '{print $14+$15}' "/proc/$p/stat"))); done; echo "$s"; }
"$BIN/loadgen" --port "$HP" --conns "$CONNS" --duration 1 --warmup 0 "${ARGS[@]}" >/dev/null
t0=$(cpu_of)
[ -z "${CALLGRIND:-}" ] || callgrind_control -i on "$RK" >/dev/null
[ -z "${RCG:-}" ] || callgrind_control -i on "$RVG" >/dev/null
if [ -n "${PERF:-}" ]; then
    perf record -q -F 2999 -g -p "$RK" -o "$DIR/perf.data" -- sleep "$SECS" 2>/dev/null &
    PERF_PID=$!
fi
if [ -n "${SYSCALLS:-}" ]; then
    perf stat -x, -e 'syscalls:sys_enter_*' -p "$PIDS" -o "$DIR/syscalls.csv" -- sleep "$SECS" &
    SC_PID=$!
fi
out=$("$BIN/loadgen" --port "$HP" --conns "$CONNS" --duration "$SECS" --warmup 0 "${ARGS[@]}")
t1=$(cpu_of)
IR=0
if [ -n "${CALLGRIND:-}" ]; then
    callgrind_control -i off "$RK" >/dev/null
    callgrind_control -d "$RK" >/dev/null
    for _ in $(seq 100); do grep -qs '^totals:' "$DIR/callgrind.out.1" && break; sleep 0.1; done
    IR=$(awk '/^totals:/ {print $2; exit}' "$DIR/callgrind.out.1")
    callgrind_annotate "$DIR/callgrind.out.1" 2>/dev/null | head -60 >"$CALLGRIND" || true
    cp "$DIR/callgrind.out.1" "$CALLGRIND.out" # the whole profile: callgrind_annotate --tree=caller
fi
RIR=0 REV=0
if [ -n "${RCG:-}" ]; then
    callgrind_control -i off "$RVG" >/dev/null
    callgrind_control -d "$RVG" >/dev/null
    for _ in $(seq 100); do grep -qs '^totals:' "$DIR/rcg.out.1" && break; sleep 0.1; done
    RIR=$(awk '/^totals:/ {print $2; exit}' "$DIR/rcg.out.1")
    REV=$(callgrind_annotate --inclusive=yes "$DIR/rcg.out.1" 2>/dev/null |
        awk '/:evalShaCommand / && !ev {gsub(",", "", $1); ev = $1} END {print ev + 0}')
    callgrind_annotate "$DIR/rcg.out.1" 2>/dev/null | head -60 >"$RCG" || true
    cp "$DIR/rcg.out.1" "$RCG.out"
fi
if [ -n "${PERF:-}" ]; then
    wait "$PERF_PID" || true
    { perf report -q -i "$DIR/perf.data" --no-children --sort dso,symbol --stdio -g none 2>&1 |
        grep -v '^$' | head -40 >"$PERF"; } || true
fi
echo "$out" | python3 -c "
import json, sys, os
d = json.load(sys.stdin); a = d['all']; n = d['total_requests']
tck = os.sysconf('SC_CLK_TCK')
print('$KIND, access log $ACCESS_LOG: %.0f req/s, p99 %.2f ms, non-2xx %d, rankd CPU %.1f us per request'
      % (a['rps'], a['p99_ms'], a['non2xx'], ($t1 - $t0) * 1e6 / tck / n))
if $IR:
    print('rankd instructions (callgrind Ir, user space, every thread): %d per request over %d requests'
          % ($IR // n, n))
if $RIR:
    print('Redis instructions (callgrind Ir): %d per request, of them the EVALSHAs %d, over %d requests'
          % ($RIR // n, $REV // n, n))"
if [ -n "${SYSCALLS:-}" ]; then
    wait "$SC_PID" || true
    n=$(echo "$out" | python3 -c 'import json,sys; print(json.load(sys.stdin)["total_requests"])')
    awk -F, -v n="$n" -v kind="$KIND" '$1 ~ /^[0-9]+$/ && $1 > 0 {
        sub(/^syscalls:sys_enter_/, "", $3); c[$3] = $1; t += $1 }
        END { printf "%s: system calls per request over %d requests: %.3f\n", kind, n, t / n
              for (k in c) printf "  %-20s %8.3f\n", k, c[k] / n }' "$DIR/syscalls.csv" |
        { IFS= read -r head; echo "$head"; sort -k2 -rn; } | tee "$SYSCALLS"
fi
[ "$ACCESS_LOG" = off ] || echo "access lines written: $(grep -c ' access ' "$DIR/rankd.log")"

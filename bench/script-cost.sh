#!/usr/bin/env bash
# script-cost.sh -- Redis' instructions per call of the live page's script, against webdis' page
# script (make bench's baseline: ZCARD + ZRANGE 20 WITHSCORES + HMGET in one EVALSHA) on the same
# 200,000-member board: redis-server runs under valgrind's callgrind, counting only over each
# row's `redis-benchmark -c 4 -n N` of the one EVALSHA, so the counts do not depend on the other
# work of a shared machine (Redis' CPU per page is half of what decides the live page's ratio on
# a small machine). rankd's call is caught with MONITOR (its keys and arguments, as it sends them)
# and replayed as it is.
#
#   bench/script-cost.sh [extra.lua ...]   (build first: make; make bench builds build/bench/*)
#        each extra script is loaded and run with rankd's keys and arguments (a variant of the
#        page script, built as the Makefile builds it: scripts/lua-prelude.awk)
#   N (2000): EVALSHAs a row. RANKD=path (default build/rankd): the binary whose script is run.
#   KEEP=1 keeps the work dir (the profiles: callgrind_annotate --inclusive=yes DIR/cg.ROW).
# Prints per row: all of Redis' instructions per call, and the EVALSHAs' alone (evalShaCommand
# inclusive: the script and the reply it builds, not reading the command or writing the reply).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=$ROOT/build/bench
RANKD=${RANKD:-$ROOT/build/rankd}
N=${N:-2000}
[ -x "$BIN/gen" ] && [ -x "$RANKD" ] ||
    { echo "build first: make && make bench (or BENCH_QUICK=1 make bench)" >&2; exit 2; }
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
RP=$(port); HP=$(port); DIR=$(mktemp -d /tmp/rankd-script-cost.XXXXXX)
cleanup() {
    kill "${RK:-}" 2>/dev/null || true
    redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1 || true
    sleep 1
    [ -n "${KEEP:-}" ] || rm -rf "$DIR"
}
trap cleanup EXIT
valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$DIR/rcg.out" \
    redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$DIR" \
    --logfile "$DIR/redis.log" >"$DIR/rvg.log" 2>&1 &
RVG=$!
for _ in $(seq 300); do redis-cli -p "$RP" ping >/dev/null 2>&1 && break; sleep 0.1; done
"$BIN/gen" resp 200000 live u rankd 0 1 | redis-cli -p "$RP" --pipe >/dev/null
"$RANKD" --listen "127.0.0.1:$HP" --redis "redis://127.0.0.1:$RP" --log-level warn \
    >"$DIR/rankd.log" 2>&1 &
RK=$!
for _ in $(seq 300); do curl -fs "127.0.0.1:$HP/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "127.0.0.1:$HP/boards/live/rank?page=1" >/dev/null # the script loaded
timeout 6 redis-cli -p "$RP" monitor >"$DIR/monitor.txt" &
MON=$!
sleep 2
curl -fs "127.0.0.1:$HP/boards/live/rank?page=1" >/dev/null
wait "$MON" || true
kill "$RK"
RK=
# the EVALSHA's words, from MONITOR's quoted form
grep -m1 '"EVALSHA"' "$DIR/monitor.txt" | python3 -c '
import shlex, sys
line = sys.stdin.read()
sys.stdout.write("\0".join(shlex.split(line[line.index("\""):])))' >"$DIR/args"
mapfile -d '' ARGS <"$DIR/args"
[ "${#ARGS[@]}" -gt 6 ] || { echo "no EVALSHA of the page seen (MONITOR: $DIR/monitor.txt)" >&2; exit 1; }
row() { # row LABEL COMMAND...: one row's count
    local label=$1
    shift
    callgrind_control -z "$RVG" >/dev/null
    callgrind_control -i on "$RVG" >/dev/null
    redis-benchmark -p "$RP" -c 4 -n "$N" "$@" >/dev/null
    callgrind_control -i off "$RVG" >/dev/null
    callgrind_control -d "$RVG" >/dev/null
    local f ir ev
    for _ in $(seq 200); do
        f=$(ls -t "$DIR"/rcg.out.* 2>/dev/null | head -1)
        [ -n "$f" ] && grep -qs '^totals:' "$f" && break
        sleep 0.1
    done
    ir=$(awk '/^totals:/ {print $2; exit}' "$f")
    ev=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null |
        awk '/:evalShaCommand / && !ev {gsub(",", "", $1); ev = $1} END {print ev + 0}')
    printf '%-28s Redis instructions per call %8d, the EVALSHA %8d\n' "$label" $((ir / N)) $((ev / N))
    mv "$f" "$DIR/cg.$label"
}
# rankd's arguments: EVALSHA sha numkeys settings set records ...; webdis': the set and records
WSHA=$(redis-cli -p "$RP" script load "$(cat "$ROOT/bench/webdis-page.lua")")
row webdis EVALSHA "$WSHA" 2 "${ARGS[4]}" "${ARGS[5]}" 1
row rankd "${ARGS[@]}"
for f in "$@"; do
    sha=$(redis-cli -p "$RP" script load "$(cat "$f")")
    row "$(basename "$f" .lua)" EVALSHA "$sha" "${ARGS[@]:2}"
done
[ -z "${KEEP:-}" ] || echo "profiles: $DIR/cg.*"

#!/usr/bin/env bash
# write-cost.sh -- the write rows of make bench's section 9 alone, with what each costs Redis:
# an NDJSON import of N (200,000) `set` entries against `redis-cli --pipe` of ZADD + HSET of the
# same entries, and single-entry writes (64 connections, SECS seconds) against redis-benchmark
# ZADD; for each, Redis' INFO commandstats (calls, usec per call: the commands scripts run
# included) and rankd's CPU per entry or request from /proc.
#
#   bench/write-cost.sh [import|write|both|single]   (build first: make; make bench builds
#                  build/bench/*). single: SWN (5,000) `set` lines imported into a new board
#                  (so its distinct scores are kept, as on any board rankd wrote), then single
#                  `set` writes with a record of a random member of it to a random score (WCONNS
#                  connections, SECS seconds): Redis' commands per write (commandstats), and
#                  with RCG= its instructions per write
#   RCG=prefix     runs redis-server under valgrind's callgrind, counting only over each row:
#                  Redis' instructions per entry or write (load-independent, unlike usec on a
#                  shared machine), the top functions in prefix.ROW. Redis runs ~50x slower:
#                  use N=20000 RBN=5000 WCONNS=8
#   CALLGRIND=prefix  the same for rankd (instructions per entry or write)
#   N, RBN (redis-benchmark requests, 200000), SECS (4), WCONNS (64), KEEP=1 (keep the work dir)
#   RANKD=path (default build/rankd): the binary to measure (a kept build of another commit)
#   PRELOAD=n      first write a board of n members with records (bench/gen resp, ids u1..,
#                  board b1m) into rankd's keys, as make bench has loaded (1000000) before its
#                  import row: the import's records then go into a hash that holds n already
# Starts its own redis-server (schema/redis.conf, no persistence) and rankd on free loopback
# ports (never 6379) and stops both on exit. The write rows use a 200,000-member board written
# straight into Redis (bench/gen resp), and a load-generator seed of their own, so no write
# repeats one of the warm-up's (a repeated `set` changes nothing).
set -euo pipefail
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
KIND=${1:-both}
N=${N:-200000}
SECS=${SECS:-4}
BIN=$ROOT/build/bench
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
RP=$(port); HP=$(port); DIR=$(mktemp -d /tmp/rankd-write-cost.XXXXXX)
cleanup() { kill "${RK:-}" 2>/dev/null || true; sleep 0.3; redis-cli -p "$RP" shutdown nosave; sleep 0.5; [ -z "${RVG:-}" ] || kill "$RVG" 2>/dev/null >/dev/null 2>&1 || true; [ -n "${KEEP:-}" ] || rm -rf "$DIR"; }
trap cleanup EXIT
cat > "$DIR/redis.conf" <<EOC
include $ROOT/schema/redis.conf
appendonly no
save ""
port $RP
bind 127.0.0.1
daemonize yes
dir $DIR
logfile $DIR/redis.log
EOC
if [ -n "${RCG:-}" ]; then
  sed -i 's/^daemonize yes/daemonize no/' "$DIR/redis.conf"
  valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$DIR/rcg.out" redis-server "$DIR/redis.conf" > "$DIR/rvg.log" 2>&1 &
  RVG=$!
else
  redis-server "$DIR/redis.conf"
fi
rcg_on() { [ -z "${RCG:-}" ] || callgrind_control -i on "$RVG" >/dev/null; }
rcg_off() { # rcg_off LABEL COUNT
  [ -z "${RCG:-}" ] && return 0
  callgrind_control -i off "$RVG" >/dev/null; callgrind_control -d "$RVG" >/dev/null
  local f; for _ in $(seq 200); do f=$(ls -t "$DIR"/rcg.out.* 2>/dev/null | head -1); [ -n "$f" ] && grep -qs '^totals:' "$f" && break; sleep 0.1; done
  local ir; ir=$(awk '/^totals:/ {print $2; exit}' "$f")
  echo "redis callgrind $1: Ir $ir = $(( ir / $2 )) per unit ($2)"
  # the scripts' calls alone (EVALSHA inclusive): not the server's own periodic work, which a
  # slow row (few units under a busy machine) counts per unit too
  local ev; ev=$(callgrind_annotate --inclusive=yes "$f" 2>/dev/null | awk '/:evalShaCommand / && !ev {gsub(",", "", $1); ev = $1} END {print ev}' || true)
  [ -z "$ev" ] || echo "redis callgrind $1: EVALSHA inclusive $ev = $(( ev / $2 )) per unit"
  callgrind_annotate "$f" 2>/dev/null | head -70 > "$RCG.$1" || true
  mv "$f" "$DIR/done.$1"; callgrind_control -z "$RVG" >/dev/null 2>&1 || true
}
for _ in $(seq 300); do redis-cli -p "$RP" ping >/dev/null 2>&1 && break; sleep 0.1; done
r() { redis-cli -p "$RP" "$@"; }
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d " \n"); echo "$TOKEN" > "$DIR/tok"
WRAP=()
[ -z "${CALLGRIND:-}" ] || WRAP=(valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$DIR/cg.out")
"${WRAP[@]}" "${RANKD:-$ROOT/build/rankd}" --listen "127.0.0.1:$HP" --redis "redis://127.0.0.1:$RP/0" --write-token-file "$DIR/tok" --log-level warn ${RCG:+--request-timeout-ms 30000 --redis-timeout-ms 30000} > "$DIR/rankd.log" 2>&1 &
RK=$!
for _ in $(seq 300); do curl -fs "127.0.0.1:$HP/readyz" >/dev/null 2>&1 && break; sleep 0.1; done
cpu() { awk '{print $14+$15}' "/proc/$1/stat"; }
stats() { r info commandstats | tr -d '\r' | grep -v '^#' | grep . | sed 's/cmdstat_//' | awk -F'[:,=]' '{printf "  %-14s calls %-9s usec %-10s usec/call %s\n",$1,$3,$5,$7}'; }
rstat() { r info stats | tr -d '\r' | awk -F: '/total_commands_processed/{print $2}'; }
rcpu() { r info cpu | tr -d '\r' | awk -F: '/used_cpu_(sys|user)_main_thread/{s+=$2} END{printf "%.3f", s}'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }
[ -z "${PRELOAD:-}" ] || "$BIN/gen" resp "$PRELOAD" b1m u rankd 1000 1 | r --pipe >/dev/null
echo "load before: $(load)"
if [ "$KIND" = single ]; then
  SWN=${SWN:-5000}
  "$BIN/gen" ndjson "$SWN" i set > "$DIR/sw.ndjson"
  curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/x-ndjson' --data-binary "@$DIR/sw.ndjson" "127.0.0.1:$HP/boards/sw/scores" > /dev/null
  r config resetstat >/dev/null
  [ -z "${CALLGRIND:-}" ] || callgrind_control -i on "$RK" >/dev/null
  rcg_on; p0=$(rstat)
  out=$("$BIN/loadgen" --port "$HP" --conns "${WCONNS:-4}" --duration "$SECS" --warmup 0 --seed 11 --url /boards/sw/scores --token "$TOKEN" --members "$SWN" --body '{"id":"i{m}","score":{s},"op":"set","record":{"w":1}}')
  p1=$(rstat)
  nreq=$(echo "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['total_requests'])")
  rcg_off single "$nreq"
  echo "$out" | python3 -c "
import json,sys
d=json.load(sys.stdin); a=d['all']
print('rankd single writes into a kept board: %d writes, %.0f req/s, non2xx %d; Redis commands %d = %.2f per write (the EVALSHA included)' % (d['total_requests'], a['rps'], a['non2xx'], $p1-$p0, ($p1-$p0)/d['total_requests']))
"
  stats
  if [ -n "${CALLGRIND:-}" ]; then
    callgrind_control -i off "$RK" >/dev/null; callgrind_control -d "$RK" >/dev/null
    for _ in $(seq 100); do grep -qs '^totals:' "$DIR/cg.out.1" && break; sleep 0.1; done
    IR=$(awk '/^totals:/ {print $2; exit}' "$DIR/cg.out.1")
    echo "callgrind: rankd Ir $IR = $(( IR / nreq )) per write"
    callgrind_annotate "$DIR/cg.out.1" 2>/dev/null | head -50 > "$CALLGRIND.single" || true
  fi
  echo "load after: $(load)"
  exit 0
fi
if [ "$KIND" != write ]; then
  "$BIN/gen" pipe "$N" 'bench:{imp}:z' bench:items i > "$DIR/imp.resp"
  "$BIN/gen" ndjson "$N" i set > "$DIR/imp.ndjson"
  r config resetstat >/dev/null
  rcg_on; c0=$(rcpu); t0=$(date +%s%N)
  r --pipe < "$DIR/imp.resp" >/dev/null
  t1=$(date +%s%N); c1=$(rcpu); rcg_off pipe "$N"
  ms=$(( (t1-t0)/1000000 ))
  echo "pipe: $N entries in $ms ms = $(( N*1000/ms )) /s; redis main cpu $(python3 -c "print(round(($c1-$c0)*1e6/$N,2))") us/entry; zcard $(r zcard 'bench:{imp}:z')"
  stats
  r unlink 'bench:{imp}:z' bench:items >/dev/null
  curl -fsS -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"page_size":20,"page_ttl_ms":0}' "127.0.0.1:$HP/boards/imp" >/dev/null
  r config resetstat >/dev/null
  [ -z "${CALLGRIND:-}" ] || callgrind_control -i on "$RK" >/dev/null
  rcg_on; k0=$(cpu $RK); c0=$(rcpu); p0=$(rstat); t0=$(date +%s%N)
  curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/x-ndjson' --data-binary "@$DIR/imp.ndjson" "127.0.0.1:$HP/boards/imp/scores" > "$DIR/imp.out"
  t1=$(date +%s%N); k1=$(cpu $RK); c1=$(rcpu); p1=$(rstat); rcg_off import "$N"
  ms=$(( (t1-t0)/1000000 ))
  echo "rankd import: $N in $ms ms = $(( N*1000/ms )) /s; rankd cpu $(python3 -c "print(round(($k1-$k0)*1e4/$N,2))") us/entry; redis main cpu $(python3 -c "print(round(($c1-$c0)*1e6/$N,2))") us/entry; redis cmds $(( p1-p0 )); $(head -c 120 "$DIR/imp.out")"
  stats
  if [ -n "${CALLGRIND:-}" ]; then
    callgrind_control -i off "$RK" >/dev/null; callgrind_control -d "$RK" >/dev/null
    for _ in $(seq 100); do grep -qs '^totals:' "$DIR/cg.out.1" && break; sleep 0.1; done
    IR=$(awk '/^totals:/ {print $2; exit}' "$DIR/cg.out.1")
    echo "callgrind: rankd Ir $IR = $(( IR / N )) per entry"
    callgrind_annotate "$DIR/cg.out.1" 2>/dev/null | head -50 > "$CALLGRIND.import" || true
    [ -n "${KEEP:-}" ] || rm -f "$DIR/cg.out.1"
  fi
fi
if [ "$KIND" != import ]; then
  "$BIN/gen" resp 200000 b200k u rankd 0 1 | r --pipe >/dev/null
  RBN=${RBN:-200000}
  r config resetstat >/dev/null
  rcg_on
  rb=$(redis-benchmark -p "$RP" -c 64 -n "$RBN" -r 1000000 -q zadd bench:zadd __rand_int__ m:__rand_int__ | tr '\r' '\n' | grep -i 'per second' | tail -1 || true)
  rcg_off zadd "$RBN"
  echo "redis-benchmark: $rb"
  stats | grep -i zadd
  r unlink bench:zadd >/dev/null
  WCONNS=${WCONNS:-64}
  "$BIN/loadgen" --port "$HP" --conns "$WCONNS" --duration 1 --warmup 0 --seed 7 --url /boards/b200k/scores --token "$TOKEN" --members 200000 --body '{"id":"u{m}","score":{s},"op":"set"}' >/dev/null
  r config resetstat >/dev/null
  [ -z "${CALLGRIND:-}" ] || callgrind_control -i on "$RK" >/dev/null
  rcg_on; k0=$(cpu $RK); c0=$(rcpu)
  out=$("$BIN/loadgen" --port "$HP" --conns "$WCONNS" --duration "$SECS" --warmup 0 --url /boards/b200k/scores --token "$TOKEN" --members 200000 --body '{"id":"u{m}","score":{s},"op":"set"}')
  k1=$(cpu $RK); c1=$(rcpu)
  echo "$out" | python3 -c "import json,sys; print(json.load(sys.stdin)['total_requests'])" > "$DIR/nreq"
  rcg_off write "$(cat "$DIR/nreq")"
  echo "$out" | python3 -c "
import json,sys,os
d=json.load(sys.stdin); a=d['all']; n=d['total_requests']
print('rankd single writes: %.0f req/s p99 %.2f ms non2xx %d; rankd cpu %.1f us/req; redis main cpu %.1f us/req' % (a['rps'],a['p99_ms'],a['non2xx'],($k1-$k0)*1e6/os.sysconf('SC_CLK_TCK')/n, ($c1-$c0)*1e6/n))
"
  stats
  if [ -n "${CALLGRIND:-}" ]; then
    callgrind_control -i off "$RK" >/dev/null; callgrind_control -d "$RK" >/dev/null
    for _ in $(seq 100); do grep -qs '^totals:' "$DIR/cg.out.1" && break; sleep 0.1; done
    IR=$(awk '/^totals:/ {print $2; exit}' "$DIR/cg.out.1")
    echo "callgrind: rankd Ir $IR = $(( IR / $(cat $DIR/nreq) )) per write"
    callgrind_annotate "$DIR/cg.out.1" 2>/dev/null | head -50 > "$CALLGRIND.write" || true
  fi
fi
echo "load after: $(load)"

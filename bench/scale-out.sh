#!/usr/bin/env bash
# scale-out.sh -- issue 15's measurement: one rankd on one Redis against two rankd processes on a
# 3-master Redis Cluster (one replica each, scripts/cluster-fixture.sh), the same boards, the same
# requests, back to back in one run; and the bytes a member costs in Redis, for the paper estimate
# in bench/results/scale-out.md.
#
#   bench/scale-out.sh [seconds per row]      (default 5; build first: make)
#   BOARDS=n MEMBERS=n CONNS=n bench/scale-out.sh   (defaults 6 boards of 50,000, 64 connections)
#
# Rows, closed loop (bench/loadgen.c), each board equally likely ({b} in the URL templates):
#   live   GET /boards/bN/rank?page=P, P uniform in 1..100, boards with page_ttl_ms 0 (every
#          request one script call; on the cluster plus one records call grouped by node)
#   member GET /boards/bN/members/uM
#   write  POST /boards/bN/scores {"id":"uM","score":S,"op":"set"} (a record-less write)
#   hit    the same boards with page_ttl_ms 1000, pages 1..10: cached pages (one round trip)
# Per row: requests/s, p50/p99/p999/max, rankd's CPU per request (every rankd process, from
# /proc), Redis' CPU per request (every node, replicas included) and the loadgen's own, so the
# result says where a request's CPU goes: on 2 cores the sum is the bound, and the topology
# that needs less CPU per request is the one that serves more. The cluster's boards are chosen
# so each master holds BOARDS/3 of them (CLUSTER KEYSLOT of the board's hash tag).
# Memory: used_memory before and after the import on the single Redis, per member (sorted set
# with its dense side set, record hash field, registry), and per member of a board without records.
# Everything on free loopback ports, never 6379; stopped on exit.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
SECS=${1:-5}
BOARDS=${BOARDS:-6}
MEMBERS=${MEMBERS:-50000}
CONNS=${CONNS:-64}
T_START=$(date +%s)
BENCH_TAG=scale-out
BIN=$ROOT/build/bench
. bench/lib.sh
. scripts/redis-fixture.sh
. scripts/cluster-fixture.sh
[ -x build/rankd ] || die "build first: make"
build_tool loadgen
build_tool gen
bench_priority

WORK=$(mktemp -d /tmp/rankd-scale.XXXXXX)
RK_PIDS=()
cleanup() {
    for p in "${RK_PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    redis_stop
    cluster_stop "$WORK/cluster" 2>/dev/null || true
    bench_priority_restore
    [ "${BENCH_KEEP:-0}" = 1 ] && say "kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
REDIS_PIDS=()

start_rankd() { # start_rankd URL LOG: appends to RK_PIDS, RK_PORTS
    RANKD_WRITE_TOKEN=$TOKEN build/rankd --listen 127.0.0.1:0 --redis "$1" --log-level info --access-log off \
        > "$2" 2>&1 &
    local pid=$! port=
    RK_PIDS+=("$pid")
    for _ in $(seq 1 200); do
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$2" | head -1)
        [ -n "$port" ] && curl -fs --max-time 1 "http://127.0.0.1:$port/readyz" > /dev/null && break
        kill -0 "$pid" 2> /dev/null || { cat "$2" >&2; die "rankd did not start"; }
        sleep 0.05
    done
    [ -n "$port" ] || die "rankd did not say where it listens"
    RK_PORTS+=("$port")
    bench_boost "$pid"
}
api() { # api PORT METHOD PATH [curl args]
    local port=$1 m=$2 p=$3
    shift 3
    curl -fsS --max-time 120 -X "$m" -H "Authorization: Bearer $TOKEN" "$@" "http://127.0.0.1:$port$p"
}
ours_us() { # rankd processes + every redis node + this shell's finished children (loadgen)
    local t=0 p
    for p in "${RK_PIDS[@]}" "${REDIS_PIDS[@]}"; do t=$((t + $(proc_cpu_us "$p"))); done
    echo $((t + $(children_cpu_us)))
}
sum_cpu() { local t=0 p; for p in "$@"; do t=$((t + $(proc_cpu_us "$p"))); done; echo "$t"; }

"$BIN/gen" ndjson "$MEMBERS" u > "$WORK/board.ndjson"
load_boards() { # load_boards PORT: BOARD_NAMES created live and imported through rankd
    local b
    for b in "${BOARD_NAMES[@]}"; do
        api "$1" PUT "/boards/$b" -H 'Content-Type: application/json' -d '{"page_ttl_ms":0}' > /dev/null
        api "$1" POST "/boards/$b/scores" -H 'Content-Type: application/x-ndjson' \
            --data-binary "@$WORK/board.ndjson" > "$WORK/import.json"
        grep -q "\"applied\":$MEMBERS" "$WORK/import.json" ||
            die "import of $b: $(head -c 300 "$WORK/import.json")"
    done
}

RESULTS=$WORK/rows.txt
: > "$RESULTS"
run_rows() { # run_rows SETUP PORTS(csv)
    local setup=$1 ports=$2 kind args out r0 s0
    for kind in live member write hit; do
        case $kind in
        hit) # the same boards with page_ttl_ms 1000: pages 1..10 from the page cache
            for b in "${BOARD_NAMES[@]}"; do
                api "${ports%%,*}" PUT "/boards/$b" -H 'Content-Type: application/json' \
                    -d '{"page_ttl_ms":1000}' > /dev/null
            done
            args=(--url '/boards/{b}/rank?page={p}' --pages 10 --hot-frac 0) ;;
        live) args=(--url '/boards/{b}/rank?page={p}' --pages 100 --hot-frac 0) ;;
        member) args=(--url /x --member-url '/boards/{b}/members/u{m}' --member-frac 1) ;;
        write) args=(--url '/boards/{b}/scores' --token "$TOKEN"
            --body '{"id":"u{m}","score":{s},"op":"set"}') ;;
        esac
        "$BIN/loadgen" --ports "$ports" --conns "$CONNS" --duration 1 --warmup 0 --boards "$NAMES" \
            --members "$MEMBERS" "${args[@]}" > /dev/null
        cpu_mark
        r0=$(sum_cpu "${RK_PIDS[@]}")
        s0=$(sum_cpu "${REDIS_PIDS[@]}")
        out=$("$BIN/loadgen" --ports "$ports" --conns "$CONNS" --duration "$SECS" --warmup 0 \
            --boards "$NAMES" --members "$MEMBERS" "${args[@]}")
        cpu_foreign
        local r1 s1
        r1=$(sum_cpu "${RK_PIDS[@]}")
        s1=$(sum_cpu "${REDIS_PIDS[@]}")
        echo "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin); a = d['all']; n = max(d['total_requests'], 1)
print('| %s | %s | %.0f | %.2f | %.2f | %.2f | %.2f | %d | %.1f | %.1f | %d%% |' % ('$setup', '$kind',
      a['rps'], a['p50_ms'], a['p99_ms'], a['p999_ms'], a['max_ms'], a['non2xx'],
      ($r1 - $r0) / n, ($s1 - $s0) / n, $FOREIGN))" | tee -a "$RESULTS" >&2
    done
}
board_names_by_slot() { # 3 masters, BOARDS/3 boards each: fills BOARD_NAMES (bN names)
    local per=$((BOARDS / 3)) i n0=0 n1=0 n2=0 s
    BOARD_NAMES=()
    for i in $(seq 1 500); do
        s=$(redis-cli -p "$1" cluster keyslot "b$i")
        if [ "$s" -le 5460 ] && [ $n0 -lt $per ]; then n0=$((n0 + 1))
        elif [ "$s" -gt 5460 ] && [ "$s" -le 10922 ] && [ $n1 -lt $per ]; then n1=$((n1 + 1))
        elif [ "$s" -gt 10922 ] && [ $n2 -lt $per ]; then n2=$((n2 + 1))
        else continue; fi
        BOARD_NAMES+=("b$i")
        [ ${#BOARD_NAMES[@]} -eq $((per * 3)) ] && return 0
    done
    die "no board names for the slots"
}

# ---------------------------------------------------------------- the boards both setups serve
say "starting a 3-master cluster with a replica each"
cluster_start "$WORK/cluster" > /dev/null || die "cluster did not start"
mapfile -t CPORTS < "$WORK/cluster/ports"
CPIDS=()
mapfile -t CPIDS < "$WORK/cluster/pids"
for p in "${CPIDS[@]}"; do bench_boost "$p"; done
board_names_by_slot "${CPORTS[0]}"
NAMES=$(IFS=,; echo "${BOARD_NAMES[*]}")
say "boards: $NAMES ($MEMBERS members each, BOARDS/3 on each master)"
used_memory() { redis-cli -p "$1" info memory | tr -d '\r' | sed -n 's/^used_memory:\([0-9]*\)/\1/p'; }

# ---------------------------------------------------------------- setup 1: one rankd, one Redis
redis_start "$WORK/redis" || die "redis did not start"
REDIS_PIDS=("$REDIS_PID")
bench_boost "$REDIS_PID"
RK_PORTS=()
start_rankd "redis://127.0.0.1:$REDIS_PORT/0" "$WORK/rankd-single.log"
m0=$(used_memory "$REDIS_PORT")
load_boards "${RK_PORTS[0]}"
m1=$(used_memory "$REDIS_PORT")
ALL_BYTES=$((m1 - m0))
sed 's/,"record":{[^}]*}//' "$WORK/board.ndjson" > "$WORK/bare.ndjson"
api "${RK_PORTS[0]}" POST /boards/bare/scores -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$WORK/bare.ndjson" > /dev/null
m2=$(used_memory "$REDIS_PORT")
BYTES_BARE=$(( (m2 - m1) / MEMBERS ))
# the boards share their ids, so the records (one per id, shared by every board) were stored once
BYTES_RECORD=$(( (ALL_BYTES - BYTES_BARE * MEMBERS * BOARDS) / MEMBERS ))
api "${RK_PORTS[0]}" DELETE /boards/bare > /dev/null
RECORD_BYTES=$(( $(head -1000 "$WORK/board.ndjson" | grep -o '"record":{[^}]*}' | wc -c) / 1000 - 10 ))
say "memory: $BYTES_BARE B a board member (set + dense side set), $BYTES_RECORD B a record of ~$RECORD_BYTES B of JSON"
run_rows "one rankd, one Redis" "${RK_PORTS[0]}"
for p in "${RK_PIDS[@]}"; do kill "$p"; wait "$p" 2> /dev/null || true; done
redis_stop
REDIS_PID=

# ---------------------------------------------------------------- setup 2: two rankd, a cluster
RK_PIDS=() RK_PORTS=()
REDIS_PIDS=("${CPIDS[@]}")
SEEDS=$(printf '127.0.0.1:%s,' "${CPORTS[@]:0:3}")
start_rankd "redis-cluster://${SEEDS%,}" "$WORK/rankd-c1.log"
start_rankd "redis-cluster://${SEEDS%,}" "$WORK/rankd-c2.log"
load_boards "${RK_PORTS[0]}"
run_rows "two rankd, 3-master cluster" "${RK_PORTS[0]},${RK_PORTS[1]}"

# ---------------------------------------------------------------- report
LOAD=$(cut -d' ' -f1-3 /proc/loadavg)
{
    echo "bench/scale-out.sh $SECS, $(date -u '+%Y-%m-%d %H:%M UTC'), rankd $(git rev-parse --short HEAD 2> /dev/null || echo '?'), $(nproc) cores, priority: $PRIORITY, load average after: $LOAD"
    echo "$BOARDS boards of $MEMBERS members ($NAMES), $CONNS connections, closed loop"
    echo
    echo "| setup | row | req/s | p50 ms | p99 ms | p999 ms | max ms | non-2xx | rankd CPU us/req | Redis CPU us/req | others' CPU |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    cat "$RESULTS"
    echo
    echo "Redis memory (single Redis, used_memory before and after each import, $MEMBERS distinct scores a board): $BYTES_BARE B a board member (its sorted set entry and its dense side-set entry), $BYTES_RECORD B a record of ~$RECORD_BYTES B of JSON (one per id, shared by the boards)."
}

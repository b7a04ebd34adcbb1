#!/usr/bin/env bash
# read-replicas.sh -- what --read-from-replicas costs and gains (issue 15): live page reads and
# member lookups on a Redis Cluster, with and without it, same binary, same data.
#
#   bench/read-replicas.sh [seconds per run (10)]      build first: make
#   RR_OUT=file (default bench/results/read-replicas.md), RR_MEMBERS=n (100000), CONNS=n (64),
#   RR_ROUNDS=n (2: off/on pairs per kind, alternated so a burst of other work hits both)
#
# 1. a cluster of scripts/cluster-fixture.sh (3 masters, a replica each) on free loopback ports;
#    a board of RR_MEMBERS members with ~100-byte records loaded through rankd's NDJSON upload
#    (page_ttl_ms 0: every page is page.lua plus its records, the read a replica may answer;
#    a cached page's hit is the page cache's, always the master's);
# 2. for each kind (live pages uniform over all pages of 20, member lookups uniform over all
#    members) and round: rankd without, then with --read-from-replicas (started afresh, warmed
#    until its reads reach the replicas), bench/loadgen closed loop on CONNS connections; the
#    throughput, p50 and p99, and the CPU each Redis node used (masters, replicas) over the run;
# 3. the result file: the command, the load average before and after, the CPU other processes
#    took during each run, the table.
#
# On a 2-core machine this cannot show scale-out: the 6 nodes, rankd and loadgen share 2 cores,
# so moving reads to replicas moves CPU from masters to replicas without adding any; what it
# shows is the routing's own cost (per request, in rankd) and where the Redis work goes. The
# script runs itself, rankd, loadgen and the nodes at nice -19 when it may (bench_priority).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
T_START=$(date +%s)
BENCH_TAG=read-replicas
BIN=$ROOT/build/bench
# shellcheck source=bench/lib.sh
. bench/lib.sh

SECS=${1:-10}
N=${RR_MEMBERS:-100000}
CONNS=${CONNS:-64}
ROUNDS=${RR_ROUNDS:-2}
OUT=${RR_OUT:-bench/results/read-replicas.md}
RANKD=$ROOT/build/rankd
TOKEN=bench-token-0123456789
[ -x "$RANKD" ] || die "build first: make"
build_tool loadgen -lm
build_tool gen

WORK=$(mktemp -d /tmp/rankd-rr.XXXXXX)
RK_PID=
cleanup() {
    [ -n "$RK_PID" ] && kill "$RK_PID" 2>/dev/null && wait "$RK_PID" 2>/dev/null
    scripts/cluster-fixture.sh stop "$WORK/cluster" >/dev/null 2>&1 || true
    rm -rf "$WORK"
    bench_priority_restore
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

bench_priority
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
say "cluster (3 masters, 3 replicas) in $WORK/cluster; priority: $PRIORITY"
scripts/cluster-fixture.sh start "$WORK/cluster" >/dev/null || die "the cluster did not start"
mapfile -t PORTS <"$WORK/cluster/ports"
mapfile -t PIDS <"$WORK/cluster/pids"
for p in "${PIDS[@]}"; do bench_boost "$p"; done
URL="redis-cluster://127.0.0.1:${PORTS[0]},127.0.0.1:${PORTS[1]},127.0.0.1:${PORTS[2]}"
HP=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')

ours_us() { # this script's rankd and the cluster's nodes
    local sum=0 p
    for p in "${PIDS[@]}" "${RK_PID:-}"; do sum=$((sum + $(proc_cpu_us "$p"))); done
    echo $((sum + $(children_cpu_us)))
}

rankd_start() { # rankd_start [--read-from-replicas]
    "$RANKD" --listen "127.0.0.1:$HP" --redis "$URL" --write-token "$TOKEN" --access-log off \
        --log-level warn "$@" >>"$WORK/rankd.log" 2>&1 &
    RK_PID=$!
    for _ in $(seq 300); do curl -fs "127.0.0.1:$HP/healthz" >/dev/null 2>&1 && return 0; sleep 0.05; done
    die "rankd did not start (see $WORK/rankd.log)"
}
rankd_stop() {
    kill "$RK_PID" 2>/dev/null && wait "$RK_PID" 2>/dev/null
    RK_PID=
}
replica_reads() {
    curl -fs "127.0.0.1:$HP/metrics" | awk '/^rankd_redis_replica_reads_total\{to="replica"\}/ {print $2}'
}

say "loading $N members through rankd's NDJSON upload"
rankd_start
curl -fs -X PUT -H "Authorization: Bearer $TOKEN" "127.0.0.1:$HP/boards/live" \
    -d '{"page_ttl_ms":0}' >/dev/null || die "PUT /boards/live failed"
"$BIN/gen" ndjson "$N" u set >"$WORK/board.ndjson"
curl -fs -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/x-ndjson' \
    --data-binary @"$WORK/board.ndjson" "127.0.0.1:$HP/boards/live/scores" >"$WORK/upload.json" ||
    die "the upload failed"
rankd_stop
PAGES=$(((N + 19) / 20))

# run KIND MODE: one measured run; appends a row to $WORK/rows
run() {
    local kind=$1 mode=$2 args=()
    [ "$mode" = on ] && args=(--read-from-replicas)
    rankd_start "${args[@]}"
    local lg=(--port "$HP" --conns "$CONNS" --warmup 1)
    case "$kind" in
    page) lg+=(--url '/boards/live/rank?page={p}' --pages "$PAGES" --hot-pages 1 --hot-frac 0) ;;
    member) lg+=(--url '/x' --member-url '/boards/live/members/u{m}' --member-frac 1 --members "$N") ;;
    esac
    # warm: connections to every node (and with the flag, until the replicas answer reads: the
    # first reads of each replica go to its master while it is dialled)
    local w v
    for w in $(seq 100); do
        "$BIN/loadgen" "${lg[@]}" --duration 0.3 --warmup 0 >/dev/null
        [ "$w" -ge 2 ] || continue
        [ "$mode" = off ] && break
        v=$(replica_reads)
        [ "${v%.*}" -gt 1000 ] 2>/dev/null && break
    done
    local cpu0=() i
    for i in "${!PIDS[@]}"; do cpu0[i]=$(proc_cpu_us "${PIDS[i]}"); done
    local rk0 r0
    rk0=$(proc_cpu_us "$RK_PID")
    r0=$(replica_reads || true)
    cpu_mark
    local out
    out=$("$BIN/loadgen" "${lg[@]}" --duration "$SECS")
    cpu_foreign
    local rk1 r1 masters=0 replicas=0
    rk1=$(proc_cpu_us "$RK_PID")
    r1=$(replica_reads || true)
    for i in "${!PIDS[@]}"; do
        local d=$(($(proc_cpu_us "${PIDS[i]}") - cpu0[i]))
        if redis-cli -p "${PORTS[i]}" role 2>/dev/null | head -1 | grep -q master; then
            masters=$((masters + d))
        else
            replicas=$((replicas + d))
        fi
    done
    echo "$out" | python3 -c "
import json, sys
d = json.load(sys.stdin); a = d['all']; n = d['total_requests'] or 1
to_replicas = (int(float('${r1:-0}' or 0)) - int(float('${r0:-0}' or 0)))
print('| %s | %s | %.0f | %.2f | %.2f | %d | %.1f | %.0f | %.0f | %.1f | %s%% |' % (
    '$kind', '$mode', a['rps'], a['p50_ms'], a['p99_ms'], a['non2xx'],
    ($rk1 - $rk0) / n, $masters / n, $replicas / n,
    to_replicas / n if '$mode' == 'on' else 0, '$FOREIGN'))
" | tee -a "$WORK/rows" >&2
    rankd_stop
}

: >"$WORK/rows"
for kind in page member; do
    for r in $(seq "$ROUNDS"); do
        run "$kind" off
        run "$kind" on
    done
done
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
REV=$(git describe --always --dirty --abbrev=12 2>/dev/null || echo unknown)

{
    echo "# --read-from-replicas: live pages and member lookups on a Redis Cluster"
    echo
    echo "\`bench/read-replicas.sh $SECS\` (RR_MEMBERS=$N, CONNS=$CONNS, RR_ROUNDS=$ROUNDS), $(date -u '+%Y-%m-%d %H:%M UTC'),"
    echo "rankd \`$REV\`, $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')),"
    echo "Redis $(redis-server --version | cut -d' ' -f3 | tr -d 'v='), priority: $PRIORITY. Load average before: $LOAD_BEFORE; after: $LOAD_AFTER."
    echo
    echo "A cluster of scripts/cluster-fixture.sh (3 masters, a replica each, loopback), a board of $N"
    echo "members with ~100-byte records and \`page_ttl_ms\` 0 (every page is \`page.lua\` and its records:"
    echo "the reads a replica may answer), bench/loadgen closed loop on $CONNS connections for $SECS s per"
    echo "row, each row a fresh rankd (\`--http-threads\` default), the two modes alternated."
    echo "Pages: uniform over all $PAGES pages of 20; members: uniform over all $N."
    echo
    echo "| kind | --read-from-replicas | req/s | p50 ms | p99 ms | non-2xx | rankd CPU us/req | masters' CPU us/req | replicas' CPU us/req | replica reads/req | others' CPU |"
    echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
    cat "$WORK/rows"
    echo
    echo "*replica reads/req*: \`rankd_redis_replica_reads_total{to=\"replica\"}\` over the requests: a"
    echo "page is its script and one \`HMGET\` per records bucket its 20 ids fall in, a member its"
    echo "script and its record's \`HMGET\`."
    echo "*others' CPU*: the share of all cores that processes other than this run's took during the"
    echo "row (bench/lib.sh's cpu_foreign)."
    echo
    echo "**What this can and cannot show.** On $(nproc) cores the six Redis nodes, rankd and loadgen"
    echo "share the same CPUs, so sending reads to replicas cannot add capacity: it moves the Redis"
    echo "work of the reads from the masters to the replicas (the CPU columns), and the throughput"
    echo "stays bound by the machine. A deployment with the replicas on their own cores or hosts"
    echo "gains the replicas' capacity for these reads; the masters keep the writes, the page cache"
    echo "and the settings."
} >"$OUT"
say "wrote $OUT"
cat "$OUT"

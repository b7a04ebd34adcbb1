#!/usr/bin/env bash
# delete-only.sh -- only the big-delete cases of `make bench` (bench/run.sh section 9), repeated,
# with the prototypes of other ways to delete, for issue 5 ("board lifecycle without stalls").
#
# The same setup as bench/run.sh: its own redis-server with the shipped schema/redis.conf (no
# persistence) and rankd on free loopback ports (never 6379); the paced reader (4 connections,
# 1,000 requests/s, the b1m page/member mix, page TTL 0 so every read reaches Redis) runs
# DEL_PRE s, then the operation (timed), then DEL_POST s. Each case's "foreign" column is the
# share of all cores used by processes that are not the bench's (as in run.sh): a build or a
# test suite next to it shows there.
#
# Cases (BENCH_DELETE_CASES, space-separated, in this order each round):
#   base       the reader alone
#   del        DEL with Redis' default lazyfree-lazy-user-del no (blocking; the old reference)
#   rankd      DELETE /boards/big through rankd (UNLINK); timed until rankd:trash is gone, which
#              is at once here and the whole drain with the trash + reaper prototype (branch
#              i5-trash-reaper), so the reader covers it
#   unlink     UNLINK of the set straight from a client (bench/drain.c): rankd's Redis work alone
#   drain:C:P  RENAME to a trash key, then ZREMRANGEBYRANK 0 C-1 with P us between calls, then
#              UNLINK of the last <= C members (bench/drain.c)
# Every case's reader runs at least BENCH_DELETE_WINDOW s (default 10; longer when the operation
# is), so cases have about as many samples; a case where others took more than 15% of the CPU is
# run again (at most BENCH_DELETE_TRIES times) after waiting for a quiet second (<= 60 s); the
# summary leaves such rows out. The foreign share is an average over the row: a short burst
# from a neighbour can still hide in it, so read single rows with care.
# Environment: BENCH_DELETE_RUNS (rounds, default 3), BENCH_BIG_N (default 3000000),
# BENCH_KEEP=1 (keep the work directory). Output: one line per case and round on stdout, then
# per case the median and worst of max and p99.9 over the rounds, and the max minus the same
# round's baseline max. Raw rows: $WORK/rows.jsonl (kept with BENCH_KEEP=1).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. scripts/redis-fixture.sh

RUNS=${BENCH_DELETE_RUNS:-3}
BIG_N=${BENCH_BIG_N:-3000000}
CASES=${BENCH_DELETE_CASES:-base rankd unlink drain:1000:1000}
N_LARGE=1000000
DEL_PRE=2 DEL_POST=2.5
WINDOW=${BENCH_DELETE_WINDOW:-10} # s of reader per case at least, so every case has as many samples
FOREIGN_MAX=15 TRIES=${BENCH_DELETE_TRIES:-3}
BIN=$ROOT/build/bench
RANKD=$ROOT/build/rankd
PY=/usr/bin/python3
T_START=$(date +%s)
BENCH_TAG=delete
. bench/lib.sh # say, die, now_ms, build_tool, the foreign-CPU measure
[ -x "$RANKD" ] || die "build/rankd is missing: run 'make' first"

build_tool loadgen -lm
build_tool gen
build_tool drain -lhiredis

WORK=$(mktemp -d /tmp/rankd-delete.XXXXXX)
ROWS=$WORK/rows.jsonl
: > "$ROWS"
PIDS=()
REDIS_PID=
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    redis_stop
    if [ "${BENCH_KEEP:-0}" = 1 ] || [ "$rc" -ne 0 ]; then say "work directory kept: $WORK"; else rm -rf "$WORK"; fi
    exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

cat > "$WORK/redis.conf" <<EOF
include $ROOT/schema/redis.conf
appendonly no
save ""
EOF
redis_start "$WORK/redis" "$WORK/redis.conf" || die "redis-server did not start"
RP=$REDIS_PORT
rcli() { redis-cli -p "$RP" "$@"; }

TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" > "$WORK/write-token" # a file, not a flag: ps shows flags
for _ in 1 2 3; do
    RK=$(free_port)
    [ "$RK" != "$RP" ] || continue
    "$RANKD" --listen "127.0.0.1:$RK" --redis "redis://127.0.0.1:$RP/0" --write-token-file "$WORK/write-token" \
        --log-level warn > "$WORK/rankd.log" 2>&1 &
    RK_PID=$!
    PIDS+=("$RK_PID")
    for _ in $(seq 1 100); do
        curl -fs --max-time 1 -o /dev/null "http://127.0.0.1:$RK/readyz" && break 2
        sleep 0.05
    done
    kill "$RK_PID" 2>/dev/null || true
done
curl -fs --max-time 1 -o /dev/null "http://127.0.0.1:$RK/readyz" || die "rankd did not start"
api() {
    local m=$1 p=$2
    shift 2
    curl -fsS --max-time 120 -X "$m" -H "Authorization: Bearer $TOKEN" "$@" "http://127.0.0.1:$RK$p"
}
say "redis on :$RP, rankd $(git rev-parse --short HEAD) on :$RK"

"$BIN/gen" resp "$N_LARGE" b1m u rankd 1000 1 | rcli --pipe > "$WORK/pipe-b1m.log" || die "b1m"
"$BIN/gen" resp "$BIG_N" big d benchsrc 1000 0 | rcli --pipe > "$WORK/pipe-big.log" || die "big"
api PUT /boards/b1m -H 'Content-Type: application/json' -d '{"page_ttl_ms":0}' >/dev/null
say "b1m ($N_LARGE) and the big source ($BIG_N) loaded"

# -------------------------------------------------- foreign CPU (bench/lib.sh)
ours_us() { echo $(( $(proc_cpu_us "$REDIS_PID") + $(proc_cpu_us "$RK_PID") + $(children_cpu_us) )); }
wait_quiet() { quiet_within "$1" || true; } # until others use under 10% for a second, at most $1 s

# -------------------------------------------------- the cases
READER=(--port "$RK" --conns 4 --rate 1000 --duration 120 --drain 5
        --url '/boards/b1m/rank?page={p}' --pages $((N_LARGE / 20)) --hot-pages 5 --hot-frac 0.8
        --member-url '/boards/b1m/members/u{m}' --members "$N_LARGE" --member-frac 0.1)
lazy_idle() { # until the lazy-free thread has nothing pending, at most 10 s
    for _ in $(seq 1 200); do
        [ "$(rcli info memory | tr -d '\r' | sed -n 's/^lazyfree_pending_objects://p')" = 0 ] && return
        sleep 0.05
    done
}
big_ready() {
    api PUT /boards/big -H 'Content-Type: application/json' -d '{"page_size":20}' >/dev/null
    rcli copy 'benchsrc:{big}:z' 'rankd:{big}:z' replace >/dev/null
    [ "$(rcli zcard 'rankd:{big}:z')" = "$BIG_N" ] || die "big board not ready"
}
rankd_delete() { # DELETE /boards/big, then until no trash is registered (<= 120 s)
    api DELETE /boards/big
    for _ in $(seq 1 600); do
        [ "$(rcli exists rankd:trash)" = 0 ] && return 0
        sleep 0.2
    done
    echo "the trash was not drained in 120 s"
    return 1
}
run_case() { # run_case ROUND CASE
    local round=$1 c=$2 op=() setup=big_ready lg op0 op1 out
    case "$c" in
    base) setup=true op=(true) ;;
    del) op=(rcli del 'rankd:{big}:z') ;;
    rankd) op=(rankd_delete) ;;
    unlink) op=("$BIN/drain" "$RP" 'rankd:{big}:z' unlink) ;;
    drain:*:*)
        IFS=: read -r _ chunk pause <<<"$c"
        op=("$BIN/drain" "$RP" 'rankd:{big}:z' rename 'rankd:{big}:trash:1' "$chunk" "$pause" "$chunk") ;;
    *) die "unknown case $c" ;;
    esac
    for attempt in $(seq 1 "$TRIES"); do
        $setup
        [ "$c" = del ] && rcli config set lazyfree-lazy-user-del no >/dev/null
        lazy_idle
        rcli config resetstat >/dev/null
        sleep 0.5
        cpu_mark
        "$BIN/loadgen" --label "$c" "${READER[@]}" > "$WORK/reader.json" &
        lg=$!
        sleep "$DEL_PRE"
        op0=$(now_ms)
        "${op[@]}" > "$WORK/op.out" 2>&1 || die "$c failed: $(cat "$WORK/op.out")"
        op1=$(now_ms)
        sleep "$DEL_POST"
        rest=$(( WINDOW * 1000 - DEL_PRE * 1000 - (op1 - op0) - 2500 ))
        [ "$rest" -le 0 ] || sleep "$(printf '%d.%03d' $((rest / 1000)) $((rest % 1000)))"
        kill -INT "$lg" 2>/dev/null || true
        wait "$lg" || die "reader failed in $c"
        cpu_foreign
        rcli config set lazyfree-lazy-user-del yes >/dev/null
        [ "$c" = base ] || [ "$(rcli exists 'rankd:{big}:z' 'rankd:{big}:trash:1')" = 0 ] ||
            die "$c left the big set behind"
        [ "$FOREIGN" -le "$FOREIGN_MAX" ] || [ "$attempt" = "$TRIES" ] || {
            say "  round $round $c: others took ${FOREIGN}% of the CPU, once more when quiet"
            rcli unlink 'rankd:{big}:z' >/dev/null
            wait_quiet 60
            continue
        }
        break
    done
    zr=$(rcli info commandstats | tr -d '\r' | sed -n 's/^cmdstat_zremrangebyrank:.*usec_per_call=\([0-9.]*\).*/\1/p')
    out=$(cat "$WORK/reader.json")
    printf '{"round":%d,"case":"%s","attempt":%d,"foreign_pct":%d,"op_ms":%d,"zremrange_us_per_call":%s,"op":%s,"reader":%s}\n' \
        "$round" "$c" "$attempt" "$FOREIGN" $((op1 - op0)) "${zr:-null}" \
        "$("$PY" -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read().strip()[:300]))' "$WORK/op.out")" \
        "$out" >> "$ROWS"
    "$PY" - "$ROWS" <<'EOF'
import json, sys
r = [json.loads(l) for l in open(sys.argv[1])][-1]
p = r["reader"]["all"]
zr = r["zremrange_us_per_call"]
zr = f'  ZREMRANGEBYRANK {zr} us/call' if zr else ''
print(f'round {r["round"]} {r["case"]:<18} foreign {r["foreign_pct"]:>3}%  op {r["op_ms"]:>6} ms  '
      f'p99 {p["p99_ms"]:7.3f}  p999 {p["p999_ms"]:7.3f}  max {p["max_ms"]:8.3f} ms  n {p["n"]}{zr}', flush=True)
EOF
}
for round in $(seq 1 "$RUNS"); do
    for c in $CASES; do run_case "$round" "$c"; done
done
"$PY" - "$ROWS" <<'EOF'
import json, statistics, sys
every = [json.loads(l) for l in open(sys.argv[1])]
rows = [r for r in every if r["foreign_pct"] <= 15]
print(f"\nsummary over the {len(rows)} of {len(every)} rows where others took <= 15% of the CPU")
base = {r["round"]: r["reader"]["all"]["max_ms"] for r in rows if r["case"] == "base"}
print("case               rounds  max median/worst ms  p999 median/worst ms  max-base median/worst ms  foreign % max")
for c in dict.fromkeys(r["case"] for r in rows):
    rs = [r for r in rows if r["case"] == c]
    mx = [r["reader"]["all"]["max_ms"] for r in rs]
    p9 = [r["reader"]["all"]["p999_ms"] for r in rs]
    d = [r["reader"]["all"]["max_ms"] - base[r["round"]] for r in rs if r["round"] in base]
    dd = f'{statistics.median(d):7.2f} / {max(d):7.2f}' if d else 'n/a'
    print(f'{c:<18} {len(rs):>6}  {statistics.median(mx):8.2f} / {max(mx):7.2f}  '
          f'{statistics.median(p9):8.2f} / {max(p9):7.2f}    {dd:>20}    {max(r["foreign_pct"] for r in rs):>5}')
EOF

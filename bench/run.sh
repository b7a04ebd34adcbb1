#!/usr/bin/env bash
# run.sh -- `make bench`: rankd's paging strategies side by side, with nginx, redis-benchmark and a
# classic full-page cache as references (method and results: bench/README.md).
#
# Starts its own redis-server, rankd (defaults; with the in-process tier; in a full run also with
# --http-threads 2), nginx, the full-page baseline (bench/fullpage.c), webdis (Debian's package,
# for the issue-12 rows) and, if installed, PostgreSQL, all on free loopback ports (never 6379), in a throw-away directory; stops them all on exit and
# on Ctrl-C. Every loop and wait here is bounded. Writes bench/results/latest.{md,json} and two
# SVG charts.
#
# Environment: BENCH_QUICK=1 (short variant, under 3 minutes), BENCH_FP_DELAY_MS (full-page
# source delay, default 250), BENCH_KEEP=1 (keep the work directory and its logs),
# BENCH_OUT (results directory, default bench/results).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. scripts/redis-fixture.sh

QUICK=${BENCH_QUICK:-0}
FP_DELAY_MS=${BENCH_FP_DELAY_MS:-250}
OUT=${BENCH_OUT:-$ROOT/bench/results}
BIN=$ROOT/build/bench
RANKD=$ROOT/build/rankd
T_START=$(date +%s)

if [ "$QUICK" = 1 ]; then
    DUR=2 WARM=0.5 WDUR=2 QUIET_WAIT=5 BIG_N=1000000 RB_N=100000 DEL_PRE=1.5 DEL_POST=1.5 WRITE_SHARES="0.1"
    VDUR=2 VWARM=0.5 # the issue-12 rows (section 9)
else
    DUR=10 WARM=2 WDUR=5 QUIET_WAIT=20 BIG_N=3000000 RB_N=400000 DEL_PRE=2 DEL_POST=2.5 WRITE_SHARES="0.01 0.1 0.5"
    VDUR=5 VWARM=1
fi
CONNS=64
N_SMALL=10000
N_MID=200000 # section 9: the 200k board, and the size of the NDJSON import
N_LARGE=1000000

BENCH_TAG=bench
. bench/lib.sh # say, die, now_ms, build_tool, the foreign-CPU measure

# ---------------------------------------------------------------- 0. tools and packages

extra=()
command -v nginx >/dev/null || [ -x /usr/sbin/nginx ] || extra+=(nginx-light)
command -v wrk >/dev/null || extra+=(wrk)
command -v webdis >/dev/null || extra+=(webdis)
[ -x /usr/bin/python3 ] || command -v python3 >/dev/null || extra+=(python3)
if [ ${#extra[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        scripts/deps.sh "${extra[@]}" || die "could not install ${extra[*]}"
    else
        # wrk is only the load generator's cross-check and webdis one baseline of section 9
        # (its rows are then skipped); nginx and python3 are needed
        for p in "${extra[@]}"; do
            [ "$p" = wrk ] || [ "$p" = webdis ] && continue
            die "bench needs $p: sudo apt-get install -y ${extra[*]}"
        done
    fi
fi
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)   # the system one: a version-manager shim starts slowly
[ -x "$RANKD" ] || die "build/rankd is missing: run 'make bench' (it builds it first)"

build_tool loadgen -lm
build_tool gen
build_tool fullpage -pthread -lhiredis

# ---------------------------------------------------------------- 1. processes and cleanup

WORK=$(mktemp -d /tmp/rankd-bench.XXXXXX)
ROWS=$WORK/rows.jsonl
: > "$ROWS"
PIDS=()       # rankd, fullpage, webdis, background loadgens
NGINX_PID=
NGINX_WORKERS=()
PG_DIR=
PG_RUNAS=()
REDIS_PID=
FINISHED=0

cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null || true
    if [ -n "$PG_DIR" ]; then
        "${PG_RUNAS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 10 stop \
            >/dev/null 2>&1 || true
    fi
    redis_stop
    for p in "${PIDS[@]}"; do
        for _ in $(seq 1 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
        kill -9 "$p" 2>/dev/null || true
    done
    if [ "${BENCH_KEEP:-0}" = 1 ] || { [ "$FINISHED" = 0 ] && [ "$rc" -ne 130 ]; }; then
        say "work directory kept: $WORK"
    else
        rm -rf "$WORK"
    fi
    exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# Ports: random in 20000-31999, below Linux's ephemeral range (32768+) so that no outgoing
# connection can hold one, and not bound by anything now (/proc/net/tcp*); never 6379.
pick_port() {
    local p hex
    for _ in $(seq 1 200); do
        p=$(( 20000 + RANDOM % 12000 ))
        case "$USED_PORTS" in *" $p "*) continue ;; esac
        hex=$(printf ':%04X' "$p")
        awk -v h="$hex" 'FNR > 1 && substr($2, length($2) - 4) == h {f = 1} END {exit !f}' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null && continue
        echo "$p"
        return 0
    done
    return 1
}
free_port() { pick_port; } # used by scripts/redis-fixture.sh's redis_start
USED_PORTS=" "
new_port() { # new_port VAR: a fresh port into VAR, remembered so no other server gets it
    local _np
    _np=$(pick_port) || die "no free port"
    USED_PORTS="$USED_PORTS$_np "
    printf -v "$1" "%s" "$_np"
}

wait_http() { # wait_http URL PID: until URL answers 200, at most 10 s
    for _ in $(seq 1 200); do
        curl -fs --max-time 1 -o /dev/null "$1" && return 0
        kill -0 "$2" 2>/dev/null || return 1
        sleep 0.05
    done
    return 1
}

# Redis: the shipped configuration, without persistence (an AOF rewrite's fork in the middle of
# a row would be noise; persistence is not what is measured).
cat > "$WORK/redis.conf" <<EOF
include $ROOT/schema/redis.conf
appendonly no
save ""
EOF
redis_start "$WORK/redis" "$WORK/redis.conf" || die "redis-server did not start"
RP=$REDIS_PORT
USED_PORTS="$USED_PORTS$RP "
rcli() { redis-cli -p "$RP" "$@"; }
say "redis-server $(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p') on 127.0.0.1:$RP"

TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" > "$WORK/write-token" # a file, not a flag: ps shows flags
start_rankd() { # start_rankd VAR EXTRA_FLAGS...: sets VAR to the port, VAR_PID to the pid
    local var=$1 p pid
    shift
    for _ in 1 2 3; do
        new_port p
        "$RANKD" --listen "127.0.0.1:$p" --redis "redis://127.0.0.1:$RP/0" --write-token-file "$WORK/write-token" \
            --log-level warn "$@" > "$WORK/rankd-$var.log" 2>&1 &
        pid=$!
        PIDS+=("$pid")
        if wait_http "http://127.0.0.1:$p/readyz" "$pid"; then
            printf -v "$var" '%s' "$p"
            printf -v "${var}_PID" '%s' "$pid"
            return 0
        fi
        kill "$pid" 2>/dev/null || true
    done
    die "rankd did not start ($WORK/rankd-$var.log)"
}
L1_TTL=250
start_rankd RK
start_rankd RKL1 --l1-ttl-ms "$L1_TTL"
# the access log on, as in production (to a file): the hot rows run against both (issue 16)
start_rankd RKAL --log-level info --access-log on
[ "$QUICK" = 1 ] || start_rankd RKT2 --http-threads 2
say "rankd on :$RK, rankd --l1-ttl-ms $L1_TTL on :$RKL1"

for _ in 1 2 3; do
    new_port FP
    "$BIN/fullpage" --listen "$FP" --redis-port "$RP" --delay-ms "$FP_DELAY_MS" --ttl-ms 60000 \
        > "$WORK/fullpage.log" 2>&1 &
    FP_PID=$!
    PIDS+=("$FP_PID")
    wait_http "http://127.0.0.1:$FP/stats" "$FP_PID" && break
done
wait_http "http://127.0.0.1:$FP/stats" "$FP_PID" || die "fullpage did not start"

api() { # api METHOD PATH [curl args...]: a write to rankd, body on stdout
    local m=$1 p=$2
    shift 2
    curl -fsS --max-time 120 -X "$m" -H "Authorization: Bearer $TOKEN" "$@" "http://127.0.0.1:$RK$p"
}
set_ttl() { # set_ttl BOARD MS
    api PUT "/boards/$1" -H 'Content-Type: application/json' -d "{\"page_ttl_ms\":$2}" >/dev/null
}

# ---------------------------------------------------------------- 2. data

# 10k board through rankd's own NDJSON import (measured), 1M board written directly in rankd's
# key format (bench/gen.c; much faster), 3M board for the delete in a source key to COPY from.
"$BIN/gen" ndjson "$N_SMALL" u > "$WORK/b10k.ndjson"
api PUT /boards/b10k -H 'Content-Type: application/json' -d '{"page_size":20}' >/dev/null
t0=$(now_ms)
api POST /boards/b10k/scores -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$WORK/b10k.ndjson" > "$WORK/import.json"
IMPORT_MS=$(( $(now_ms) - t0 ))
IMPORT_BYTES=$(stat -c %s "$WORK/b10k.ndjson")
say "b10k: $N_SMALL entries imported through NDJSON in $IMPORT_MS ms"

MEM0=$(rcli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')
t0=$(now_ms)
"$BIN/gen" resp "$N_LARGE" b1m u rankd 1000 1 | rcli --pipe > "$WORK/pipe-b1m.log" ||
    die "loading b1m failed ($WORK/pipe-b1m.log)"
GEN_MS=$(( $(now_ms) - t0 ))
MEM1=$(rcli info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p')
say "b1m: $N_LARGE members + records written with redis-cli --pipe in $GEN_MS ms"
t0=$(now_ms)
"$BIN/gen" resp "$BIG_N" big d benchsrc 1000 0 | rcli --pipe > "$WORK/pipe-big.log" ||
    die "loading the big source failed"
say "big source: $BIG_N members in $(( $(now_ms) - t0 )) ms"

# Sanity: the import is complete, and rankd reads the directly written board (total, last page).
b10k_total=$(curl -fs "http://127.0.0.1:$RK/boards/b10k" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
[ "$b10k_total" = "$N_SMALL" ] || die "b10k has $b10k_total members after the import ($WORK/import.json)"
b1m_total=$(curl -fs "http://127.0.0.1:$RK/boards/b1m" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
[ "$b1m_total" = "$N_LARGE" ] || die "rankd sees $b1m_total members on b1m, expected $N_LARGE"
last=$(curl -fs "http://127.0.0.1:$RK/boards/b1m/rank?page=$((N_LARGE / 20))" | grep -o '"rank":' | wc -l)
[ "$last" = 20 ] || die "b1m last page has $last items"

# The same page bytes for nginx: page 1 of b10k as rankd renders it.
mkdir -p "$WORK/nginx/www"
chmod 711 "$WORK"   # nginx workers (www-data when started as root) read www/
curl -fs "http://127.0.0.1:$RK/boards/b10k/rank?page=1" > "$WORK/nginx/www/page.json"
PAGE_BYTES=$(stat -c %s "$WORK/nginx/www/page.json")
"$PY" bench/report.py heavy-page "$WORK/nginx/www/page.json" 10240 > "$WORK/nginx/www/heavy.json"
for _ in 1 2 3; do
    new_port NG
    nginx_start "$WORK/nginx" "$NG" && break # else the port was taken meanwhile: another one
done
[ -s "$WORK/nginx/nginx.pid" ] || die "nginx did not start ($WORK/nginx/error.log)"
NGINX_PID=$(cat "$WORK/nginx/nginx.pid")
mapfile -t NGINX_WORKERS < <(ps -o pid= --ppid "$NGINX_PID" | tr -d ' ')
wait_http "http://127.0.0.1:$NG/x" "$NGINX_PID" || die "nginx does not answer"
say "nginx $("$NGINX" -v 2>&1 | sed 's/.*nginx\///') on :$NG serving $PAGE_BYTES bytes; full-page baseline on :$FP"

# ---------------------------------------------------------------- 3. measurement helpers

redis_stats() { # "commands main_thread_cpu_us"
    rcli info all | tr -d '\r' | awk -F: '
        /^total_commands_processed:/ {c=$2}
        /^used_cpu_user_main_thread:/ {u=$2}
        /^used_cpu_sys_main_thread:/ {s=$2}
        END {printf "%.0f %.0f\n", c, (u+s)*1000000}'
}

# Other processes on this machine (a test suite, a build) skew every number, so each row
# measures how much CPU went to processes that are not the bench's: all busy CPU (/proc/stat,
# steal included) minus the servers' CPU minus this shell's finished children (loadgen,
# redis-benchmark, redis-cli...). A row with more than FOREIGN_MAX % of the machine taken by
# others is run again once after waiting (bounded) for the machine to quiet down.
FOREIGN_MAX=15
ours_us() {
    local pids=("$REDIS_PID" "${RK_PID:-}" "${RKL1_PID:-}" "${RKT2_PID:-}" "${FP_PID:-}" "${WD_PID:-}") p sum=0
    [ -n "${NGINX_PID:-}" ] && pids+=("$NGINX_PID" "${NGINX_WORKERS[@]}")
    for p in "${pids[@]}"; do
        [ -n "$p" ] && sum=$((sum + $(proc_cpu_us "$p")))
    done
    echo $((sum + $(children_cpu_us)))
}
wait_quiet() { # wait_quiet SECONDS: until others use under 10% for a second, at most SECONDS
    quiet_within "$1" && return 0
    say "  the machine stayed busy (other processes: ${FOREIGN}% of the CPU); going on"
    BUSY_WAITS=$((BUSY_WAITS + 1))
    [ "$BUSY_WAITS" -lt 2 ] || RETRIES=0 # busy for good: retrying only costs time
    [ "$BUSY_WAITS" -lt 3 ] || DELETE_RETRIES=0
}
BUSY_WAITS=0
# Retry budgets: 3 for the throughput rows, 3 kept for the big-delete cases (the most sensitive
# to a neighbour), none late in the run; a full run stays under 10 minutes. Quick: no retries.
if [ "$QUICK" = 1 ]; then RETRIES=0 DELETE_RETRIES=0; else RETRIES=3 DELETE_RETRIES=3; fi
RETRY_UNTIL=$((T_START + 500))
may_retry() { [ "$RETRIES" -gt 0 ] && [ "$(date +%s)" -lt "$RETRY_UNTIL" ]; }

# How to run a row again (requiet): the whole call, by "SECTION|NAME".
declare -A ROWCMD
remember() { # remember KEY FUNCTION ARGS...: the call that made the row KEY, with ROW_BASE
    ROWCMD[$1]="ROW_BASE=$(printf '%q' "${ROW_BASE:-}") $(printf '%q ' "${@:2}")"
}

# row SECTION NAME SERVER_PID NOTE -- loadgen args: one loadgen run appended to rows.jsonl.
# ROW_SETUP (optional): a command run before each attempt (e.g. emptying a cache).
# ROW_BASE (optional): the name of the row of the same section this one is a ratio against.
row() {
    local section=$1 name=$2 spid=$3 note=$4 rc0 ru0 rc1 ru1 c0 c1 out attempt first=null
    remember "$section|$name" row "$@"
    shift 5
    for attempt in 1 2; do
        [ -n "${ROW_SETUP:-}" ] && $ROW_SETUP
        read -r rc0 ru0 <<<"$(redis_stats)"
        c0=$(proc_cpu_us "$spid")
        cpu_mark
        out=$("$BIN/loadgen" --label "$name" "$@") || die "loadgen failed for $name"
        cpu_foreign
        c1=$(proc_cpu_us "$spid")
        read -r rc1 ru1 <<<"$(redis_stats)"
        if [ "$attempt" = 2 ] || [ "$FOREIGN" -le "$FOREIGN_MAX" ] || ! may_retry; then
            break
        fi
        RETRIES=$((RETRIES - 1))
        first=$FOREIGN
        say "  other processes took ${FOREIGN}% of the CPU during '$name': once more when quiet"
        wait_quiet 15
    done
    printf '{"section":"%s","name":"%s","kind":"loadgen","note":"%s","baseline":"%s","redis_cmds":%d,"redis_cpu_us":%d,"server_cpu_us":%d,"foreign_cpu_pct":%d,"first_try_foreign_pct":%s,"result":%s}\n' \
        "$section" "$name" "$note" "${ROW_BASE:-}" $((rc1 - rc0)) $((ru1 - ru0)) $((c1 - c0)) \
        "$FOREIGN" "$first" "$out" >> "$ROWS"
    "$PY" bench/report.py line "$ROWS" >&2
}

# fact SECTION NAME JSON: a row of facts (not a load run)
fact() { printf '{"section":"%s","name":"%s","kind":"info","result":%s}\n' "$1" "$2" "$3" >> "$ROWS"; }

# rbench SECTION NAME NOTE REQUESTS -- command...: one redis-benchmark run (64 clients)
rbench() {
    local section=$1 name=$2 note=$3 n=$4 line
    remember "$section|$name" rbench "$@"
    shift 5
    cpu_mark
    line=$(redis-benchmark -p "$RP" -c "$CONNS" -n "$n" --csv "$@" | tail -1)
    cpu_foreign
    "$PY" bench/report.py rbench "$section" "$name" "$note" "$line" "$FOREIGN" >> "$ROWS"
    "$PY" bench/report.py line "$ROWS" >&2
}

# wrk_base SECTION NAME PORT URL PAGES: the baseline row NAME measured again with wrk (one thread,
# CONNS connections, the same duration), as the row "NAME (wrk)": {p} in URL is page 1..PAGES,
# uniform (a fixed page when PAGES is 1). A baseline's ratio takes the higher of the two figures:
# bench/loadgen must not flatter rankd by getting less from a baseline than wrk does.
wrk_base() {
    local section=$1 name=$2 port=$3 url=$4 pages=$5 wout
    command -v wrk > /dev/null || return 0
    ROWCMD[$section|$name (wrk)]="WRK_DUR=${WRK_DUR:-$VDUR} $(printf '%q ' wrk_base "$@")"
    cat > "$WORK/wrk-base.lua" <<EOF
local pages = $pages
request = function()
  local path = string.gsub("$url", "{p}", tostring(math.random(1, pages)))
  return wrk.format("GET", path)
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format('{"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d,"p999_us":%d,"max_us":%d,"mean_us":%.1f}\n',
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), latency:percentile(99.9), latency.max, latency.mean))
end
EOF
    cpu_mark
    wout=$(wrk -t1 -c"$CONNS" -d"${WRK_DUR:-$VDUR}s" -s "$WORK/wrk-base.lua" "http://127.0.0.1:$port" | tail -1)
    cpu_foreign
    "$PY" bench/report.py wrk "$section" "$name (wrk)" "$wout" "$FOREIGN" >> "$ROWS"
    "$PY" bench/report.py line "$ROWS" >&2
}

# requiet KEY BASE_KEY [WRK]: the rows "SECTION|NAME" of a ratio (rankd's, then its baseline's;
# WRK=1: the baseline's wrk row too) run again, the baseline first, while any of them had more
# than FOREIGN_MAX % of the CPU taken by other work, at most PAIR_RETRIES times and not past
# PAIR_UNTIL; the report uses each row's last run and says when it stayed busy.
PAIR_RETRIES=$([ "$QUICK" = 1 ] && echo 2 || echo 3)
PAIR_UNTIL=$((T_START + $([ "$QUICK" = 1 ] && echo 250 || echo 560)))
requiet() {
    local keys=("$1" "$2") n=0 busy
    [ "${3:-0}" = 1 ] && [ -n "${ROWCMD[$2 (wrk)]:-}" ] && keys+=("$2 (wrk)")
    for k in "${keys[@]}"; do [ -n "${ROWCMD[$k]:-}" ] || return 0; done
    while :; do
        busy=$("$PY" bench/report.py busy "$ROWS" "$FOREIGN_MAX" "${keys[@]}")
        [ -z "$busy" ] && return 0
        if [ "$n" -ge "$PAIR_RETRIES" ] || [ "$(date +%s)" -ge "$PAIR_UNTIL" ]; then
            say "  still busy after $n more run(s): $busy (the report says so)"
            return 0
        fi
        n=$((n + 1))
        say "  other load over ${FOREIGN_MAX}% ($busy): the pair once more"
        wait_quiet 5
        eval "${ROWCMD[$2]}"
        [ "${#keys[@]}" -lt 3 ] || eval "${ROWCMD[$2 (wrk)]}"
        eval "${ROWCMD[$1]}"
    done
}

MIX_SMALL=(--url '/boards/b10k/rank?page={p}' --pages $((N_SMALL / 20)) --hot-pages 5 --hot-frac 0.8
           --member-url '/boards/b10k/members/u{m}' --members "$N_SMALL" --member-frac 0.1)
MIX_LARGE=(--url '/boards/b1m/rank?page={p}' --pages $((N_LARGE / 20)) --hot-pages 5 --hot-frac 0.8
           --member-url '/boards/b1m/members/u{m}' --members "$N_LARGE" --member-frac 0.1)
LOAD=(--conns "$CONNS" --duration "$DUR" --warmup "$WARM")
fp_flush() { # forget every full-page key (between rows) and reset its counters
    rcli --scan --pattern 'fp:*' | awk '{print "UNLINK", $0}' | rcli > /dev/null
    curl -fs "http://127.0.0.1:$FP/stats?reset=1" > /dev/null
}
fp_stats() { curl -fs "http://127.0.0.1:$FP/stats"; }
cache_mem() { # cache_mem PATTERN: "keys bytes" (bytes: mean MEMORY USAGE of 200 keys x keys)
    local keys mean
    keys=$(rcli --scan --pattern "$1" | wc -l)
    mean=$(rcli --scan --pattern "$1" | head -200 | awk '{print "MEMORY USAGE", $0}' | rcli |
        awk '{s+=$1; n++} END {print n ? int(s/n) : 0}')
    echo "$keys $((keys * mean))"
}

# ---------------------------------------------------------------- 4. physical limits

say "waiting (at most ${QUIET_WAIT} s) until other processes leave the CPU alone"
wait_quiet "$QUIET_WAIT"
say "1. physical limits"
row limits "nginx static file, same page bytes" "$NGINX_PID" "$PAGE_BYTES B, mix URLs" -- \
    --port "$NG" "${LOAD[@]}" "${MIX_SMALL[@]}"
if command -v wrk >/dev/null; then
    WRK_DUR=$DUR wrk_base limits "nginx static file, same page bytes" "$NG" "/boards/b10k/rank?page={p}" 1
else
    fact limits "wrk" '{"skipped":"wrk is not installed (it only cross-checks bench/loadgen)"}'
fi
rcli set bench:page "$(cat "$WORK/nginx/www/page.json")" > /dev/null
rbench limits "redis-benchmark GET of a page-sized value" "$PAGE_BYTES B" "$RB_N" -- GET bench:page
rbench limits "redis-benchmark ZRANGE 0 19 WITHSCORES (1M set)" "" "$RB_N" -- \
    ZRANGE 'rankd:{b1m}:z' 0 19 WITHSCORES

# ---------------------------------------------------------------- 5. one hot page, 64 connections

say "2. one hot page, $CONNS connections"
HOT=(--url '/boards/b10k/rank?page=1' --pages 1 --hot-pages 1)
set_ttl b10k 1000
row hot "rankd short-ttl (Redis-cached page)" "$RK_PID" "page_ttl_ms 1000" -- \
    --port "$RK" "${LOAD[@]}" "${HOT[@]}"
row hot "rankd short-ttl + in-process tier" "$RKL1_PID" "--l1-ttl-ms $L1_TTL" -- \
    --port "$RKL1" "${LOAD[@]}" "${HOT[@]}"
requiet "hot|rankd short-ttl (Redis-cached page)" "limits|nginx static file, same page bytes" 1
requiet "hot|rankd short-ttl + in-process tier" "limits|nginx static file, same page bytes" 1
row hot "rankd short-ttl, access log on" "$RKAL_PID" "page_ttl_ms 1000, --access-log on, to a file" -- \
    --port "$RKAL" "${LOAD[@]}" "${HOT[@]}"
if [ "$QUICK" != 1 ]; then
    # the same page through the same rankd with fewer connections, and with two event threads
    # instead of the default (half the cores: one on 2 cores): where does the cached path's time go?
    for c in 8 16 32; do
        row hot-sweep "rankd short-ttl, $c connections" "$RK_PID" "default event threads" -- \
            --port "$RK" --conns "$c" --duration "$WDUR" --warmup 1 "${HOT[@]}"
    done
    row hot-sweep "rankd short-ttl, $CONNS connections, --http-threads 2" "$RKT2_PID" \
        "two event threads" -- --port "$RKT2" --conns "$CONNS" --duration "$WDUR" --warmup 1 \
        "${HOT[@]}"
fi
set_ttl b10k 0
row hot "rankd live (no cache)" "$RK_PID" "page_ttl_ms 0" -- --port "$RK" "${LOAD[@]}" "${HOT[@]}"
row hot "rankd live, access log on" "$RKAL_PID" "page_ttl_ms 0, --access-log on, to a file" -- \
    --port "$RKAL" "${LOAD[@]}" "${HOT[@]}"
set_ttl b10k 1000
ROW_SETUP=fp_flush row hot "full-page cache" "$FP_PID" "TTL 60 s" -- --port "$FP" "${LOAD[@]}" "${HOT[@]}"

# ---------------------------------------------------------------- 6. strategies, request mix

say "3. strategies on the request mix"
for b in b10k b1m; do
    if [ "$b" = b10k ]; then MIX=("${MIX_SMALL[@]}"); else MIX=("${MIX_LARGE[@]}"); fi
    set_ttl "$b" 0
    row "mix-$b" "live" "$RK_PID" "page_ttl_ms 0" -- --port "$RK" "${LOAD[@]}" "${MIX[@]}"
    set_ttl "$b" 1000
    row "mix-$b" "short-ttl" "$RK_PID" "page_ttl_ms 1000" -- --port "$RK" "${LOAD[@]}" "${MIX[@]}"
    read -r k by <<<"$(cache_mem "rankd:{$b}:page:*")"
    fact "mix-$b" "short-ttl cache" "{\"keys\":$k,\"bytes\":$by}"
    row "mix-$b" "short-ttl + in-process tier" "$RKL1_PID" "--l1-ttl-ms $L1_TTL" -- \
        --port "$RKL1" "${LOAD[@]}" "${MIX[@]}"
    ROW_SETUP=fp_flush row "mix-$b" "full-page" "$FP_PID" "TTL 60 s, source ${FP_DELAY_MS} ms" -- \
        --port "$FP" "${LOAD[@]}" "${MIX[@]}"
    read -r k by <<<"$(cache_mem "fp:{$b}:*")"
    fact "mix-$b" "full-page cache" "{\"keys\":$k,\"bytes\":$by,\"stats\":$(fp_stats)}"
done

# ---------------------------------------------------------------- 7. writers and staleness

say "4. concurrent writers, measured staleness (b10k)"
WCHECK=(--write-port "$RK" --write-path /boards/b10k/scores --token "$TOKEN" --probe-ms 50
        --check-port "$RP" --check-key 'rankd:{b10k}:z' --check-frac 0.05)
WLOAD=(--conns "$CONNS" --duration "$WDUR" --warmup 1)
for share in $WRITE_SHARES; do
    wc=$("$PY" -c "print(max(2, min(32, round($CONNS * $share * 1.5))))")
    set_ttl b10k 0
    row "writers-$share" "live" "$RK_PID" "" -- --port "$RK" "${WLOAD[@]}" "${MIX_SMALL[@]}" \
        "${WCHECK[@]}" --write-frac "$share" --write-conns "$wc"
    set_ttl b10k 1000
    row "writers-$share" "short-ttl" "$RK_PID" "" -- --port "$RK" "${WLOAD[@]}" "${MIX_SMALL[@]}" \
        "${WCHECK[@]}" --write-frac "$share" --write-conns "$wc"
    row "writers-$share" "short-ttl + in-process tier" "$RKL1_PID" "" -- --port "$RKL1" \
        "${WLOAD[@]}" "${MIX_SMALL[@]}" "${WCHECK[@]}" --write-frac "$share" --write-conns "$wc"
    ROW_SETUP=fp_flush row "writers-$share" "full-page" "$FP_PID" "" -- --port "$FP" "${WLOAD[@]}" "${MIX_SMALL[@]}" \
        "${WCHECK[@]}" --write-frac "$share" --write-conns "$wc"
done
api DELETE /boards/b10k/members/zz-probe >/dev/null || true

# ---------------------------------------------------------------- 8. deep paging

say "5. deep paging on b1m"
set_ttl b1m 0
LAST_PAGE=$((N_LARGE / 20))
DEEP=(--conns 16 --duration "$WDUR" --warmup 1 --pages 1 --hot-pages 1)
row deep "rankd live, page 1" "$RK_PID" "16 connections" -- --port "$RK" "${DEEP[@]}" \
    --url '/boards/b1m/rank?page=1'
row deep "rankd live, page $LAST_PAGE" "$RK_PID" "16 connections" -- --port "$RK" "${DEEP[@]}" \
    --url "/boards/b1m/rank?page=$LAST_PAGE"
rbench deep "redis-benchmark ZRANGE at rank $((N_LARGE - 20))" "" "$RB_N" -- \
    ZRANGE 'rankd:{b1m}:z' $((N_LARGE - 20)) $((N_LARGE - 1)) WITHSCORES

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ "$QUICK" = 1 ]; then
    fact deep "postgresql" '{"skipped":"not in BENCH_QUICK=1 (loading 1M rows takes ~10 s)"}'
elif [ -z "$PG_BIN" ] || [ ! -x "$PG_BIN/initdb" ] || ! command -v pgbench >/dev/null; then
    fact deep "postgresql" '{"skipped":"PostgreSQL is not installed (apt-get install postgresql)"}'
else
    PG_DIR=$WORK/pg
    mkdir -p "$PG_DIR"
    if [ "$(id -u)" -eq 0 ]; then
        chown postgres "$PG_DIR"
        PG_RUNAS=(runuser -u postgres --)
    fi
    new_port PGP
    if "${PG_RUNAS[@]}" "$PG_BIN/initdb" -D "$PG_DIR/data" -A trust -U postgres --no-sync \
            > "$PG_DIR/initdb.log" 2>&1 &&
       "${PG_RUNAS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/log" -w -t 30 \
            -o "-p $PGP -k $PG_DIR -c listen_addresses='' -c fsync=off -c shared_buffers=256MB" \
            start > /dev/null; then
        PSQL=(psql -q -X -h "$PG_DIR" -p "$PGP" -U postgres -v ON_ERROR_STOP=1 postgres)
        t0=$(now_ms)
        "${PSQL[@]}" -c 'create unlogged table s(id text primary key, score bigint not null, record text not null)'
        "$BIN/gen" csv "$N_LARGE" u | "${PSQL[@]}" -c 'copy s from stdin with (format csv)'
        "${PSQL[@]}" -c 'create index s_rank on s(score desc, id)' -c 'vacuum analyze s'
        say "postgresql: $N_LARGE rows loaded and indexed in $(( $(now_ms) - t0 )) ms"
        for off in 0 $((N_LARGE - 20)); do
            echo "select id, score, record from s order by score desc, id limit 20 offset $off;" \
                > "$PG_DIR/q$off.sql"
            rm -f "$PG_DIR"/pgb.*
            (cd "$PG_DIR" && pgbench -n -h "$PG_DIR" -p "$PGP" -U postgres -f "q$off.sql" \
                -T "$WDUR" -c 4 -j 2 -l --log-prefix=pgb postgres > "pgbench-$off.txt" 2>&1) ||
                die "pgbench failed ($PG_DIR/pgbench-$off.txt)"
            "$PY" bench/report.py pgbench deep "PostgreSQL OFFSET $off LIMIT 20" \
                "4 connections, index (score desc, id)" "$WDUR" "$PG_DIR"/pgb.* >> "$ROWS"
            "$PY" bench/report.py line "$ROWS" >&2
        done
        "${PG_RUNAS[@]}" "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 30 stop > /dev/null || true
        PG_DIR=
    else
        fact deep "postgresql" "{\"skipped\":\"PostgreSQL did not start (see BENCH_KEEP=1 logs)\"}"
    fi
fi

# ---------------------------------------------------------------- 9. big delete

say "6. big delete: reader on b1m while a $BIG_N-member board goes"
set_ttl b1m 0
READER=(--port "$RK" --conns 4 --rate 1000 --duration 120 --drain 5 "${MIX_LARGE[@]}")
big_ready() { # the big board again: a fresh copy of the source set and rankd's settings
    api PUT /boards/big -H 'Content-Type: application/json' -d '{"page_size":20}' >/dev/null
    rcli copy 'benchsrc:{big}:z' 'rankd:{big}:z' replace >/dev/null
    [ "$(rcli zcard 'rankd:{big}:z')" = "$BIG_N" ] || die "big board not ready"
}
big_default_redis() { # the big board, and DEL back to blocking as in Redis' own default config
    big_ready
    rcli config set lazyfree-lazy-user-del no >/dev/null
}
# delete_case NAME NOTE SETUP CMD...: SETUP prepares the board; the reader runs DEL_PRE s, then
# CMD (timed), then DEL_POST s more (retried once, like row, when others took the CPU)
delete_case() {
    local name=$1 note=$2 setup=$3 lg tl op0 op1 out sl attempt first=null
    shift 3
    tl=$WORK/timeline-$(echo "$name" | tr -c 'a-zA-Z0-9' '-').csv
    for attempt in 1 2; do
        $setup
        rcli slowlog reset >/dev/null
        cpu_mark
        "$BIN/loadgen" --label "$name" "${READER[@]}" --timeline "$tl" > "$WORK/reader.json" &
        lg=$!
        PIDS+=("$lg")
        sleep "$DEL_PRE"
        op0=$(now_ms)
        "$@" > "$WORK/op.out" 2>&1 || die "$name: $* failed ($(cat "$WORK/op.out"))"
        op1=$(now_ms)
        sleep "$DEL_POST"
        kill -INT "$lg" 2>/dev/null || true
        wait "$lg" || die "reader failed in $name"
        cpu_foreign
        rcli config set lazyfree-lazy-user-del yes >/dev/null # the shipped value
        if [ "$attempt" = 2 ] || [ "$FOREIGN" -le "$FOREIGN_MAX" ] || ! may_retry; then
            break
        fi
        RETRIES=$((RETRIES - 1))
        first=$FOREIGN
        say "  other processes took ${FOREIGN}% of the CPU during '$name': once more when quiet"
        rcli unlink 'rankd:{big}:z' >/dev/null
        wait_quiet 15
    done
    out=$(cat "$WORK/reader.json")
    sl=$(rcli --json slowlog get 10 | "$PY" bench/report.py slowlog)
    printf '{"section":"delete","name":"%s","kind":"loadgen","note":"%s","op_start_wall_ms":%s,"op_end_wall_ms":%s,"op_output":%s,"timeline":"%s","slowlog":%s,"foreign_cpu_pct":%d,"first_try_foreign_pct":%s,"result":%s}\n' \
        "$name" "$note" "$op0" "$op1" "$("$PY" -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()[:300]))' "$WORK/op.out")" \
        "$tl" "$sl" "$FOREIGN" "$first" "$out" >> "$ROWS"
    "$PY" bench/report.py line "$ROWS" >&2
}
BUSY_WAITS=0 RETRIES=$DELETE_RETRIES # the delete cases' own budget
delete_case "no delete (baseline)" "the reader alone" true true
delete_case "DEL, Redis default config" "lazyfree-lazy-user-del no (the Redis default)" \
    big_default_redis rcli del 'rankd:{big}:z'
if [ "$QUICK" != 1 ]; then
    delete_case "DEL, shipped schema/redis.conf" "lazyfree-lazy-user-del yes makes DEL lazy too" \
        big_ready rcli del 'rankd:{big}:z'
fi
delete_case "rankd DELETE /boards/big (UNLINK)" "" big_ready api DELETE /boards/big
# reset and trim (issue #5) when this rankd has them: the route answers board_not_found
reset_probe=$(curl -s -X POST -H "Authorization: Bearer $TOKEN" \
    "http://127.0.0.1:$RK/boards/no-such-board-x/reset" || true)
if [ "$QUICK" != 1 ] && grep -q board_not_found <<<"$reset_probe"; then
    delete_case "rankd POST /boards/big/reset" "" big_ready api POST /boards/big/reset
    delete_case "rankd trim to the top 1000" "DELETE /boards/big/members?keep=1000, in chunks" \
        big_ready api DELETE '/boards/big/members?keep=1000'
    api DELETE /boards/big >/dev/null || true
else
    fact delete "reset and trim" '{"skipped":"not in BENCH_QUICK=1, or rankd has no POST /boards/{b}/reset"}'
    api DELETE /boards/big >/dev/null 2>&1 || true
fi
rcli unlink 'benchsrc:{big}:z' 'benchsrc:{big}:meta' 'benchsrc:boards' >/dev/null

# ---------------------------------------------------------------- 10. record weight

say "7. record weight"
"$BIN/gen" weight bench:w:flat 20 100 0 | rcli --pipe >/dev/null
"$BIN/gen" weight bench:w:nested 20 10240 1 | rcli --pipe >/dev/null
FIELDS=$(seq -f 'f%g' 1 20 | tr '\n' ' ')
# shellcheck disable=SC2086
rbench weight "HMGET of 20 records, ~100 B flat" "a page's records, Redis alone" "$RB_N" -- HMGET bench:w:flat $FIELDS
# shellcheck disable=SC2086
rbench weight "HMGET of 20 records, ~10 KB nested" "a page's records, Redis alone" $((RB_N / 10)) -- HMGET bench:w:nested $FIELDS
HEAVY_BYTES=$(stat -c %s "$WORK/nginx/www/heavy.json")
row weight "nginx static page, 20 x 10 KB records" "$NGINX_PID" "$HEAVY_BYTES B" -- \
    --port "$NG" "${LOAD[@]}" --url /heavy --pages 1 --hot-pages 1
nested=$(rcli hget bench:w:nested f1)
code=$(curl -s -o "$WORK/refused.json" -w '%{http_code}' -X PUT -H "Authorization: Bearer $TOKEN" \
    -H 'Content-Type: application/json' --data-binary "$nested" "http://127.0.0.1:$RK/items/heavy-1")
fact weight "rankd PUT /items with a 10 KB nested record" \
    "{\"status\":$code,\"reply\":$("$PY" -c 'import json,sys; print(json.dumps(open(sys.argv[1]).read()[:300]))' "$WORK/refused.json")}"
rcli unlink bench:w:flat bench:w:nested bench:page >/dev/null

# ---------------------------------------------------------------- 11. memory

say "8. memory"
zb=$(rcli memory usage 'rankd:{b1m}:z' samples 0)
ib=$(rcli memory usage rankd:items samples 0)
ih=$(rcli hlen rankd:items)
fact memory "b1m" "{\"members\":$N_LARGE,\"zset_bytes\":$zb,\"records\":$ih,\"records_bytes\":$ib,\"used_memory_delta\":$((MEM1 - MEM0))}"
l1=$(curl -fs "http://127.0.0.1:$RKL1/metrics" | grep -E '^rankd_page_cache_l1' | tr '\n' ';' || true)
fact memory "rankd metrics (in-process tier)" "{\"metrics\":\"$l1\"}"

# ---------------------------------------------------------------- 12. against webdis and Redis' own clients

# Issue #12: rankd's rows as ratios of baselines measured here, in the same run, 64 keep-alive
# connections: webdis (Redis over HTTP, no logic of its own) running one EVALSHA of a page script,
# redis-benchmark ZADD for single writes, redis-cli --pipe for the bulk import; and rankd's own CPU
# per request (/proc/<pid>/stat utime+stime around the row, over the requests it completed).
say "9. rankd against webdis, redis-benchmark ZADD and redis-cli --pipe ($N_MID and $N_LARGE members)"
t0=$(now_ms)
"$BIN/gen" resp "$N_MID" b200k u rankd 0 1 | rcli --pipe > "$WORK/pipe-b200k.log" ||
    die "loading b200k failed ($WORK/pipe-b200k.log)"
say "b200k: $N_MID members + records (page_ttl_ms 0) written with redis-cli --pipe in $(( $(now_ms) - t0 )) ms"
b200k_total=$(curl -fs "http://127.0.0.1:$RK/boards/b200k" | sed -n 's/.*"total":\([0-9]*\).*/\1/p')
[ "$b200k_total" = "$N_MID" ] || die "rankd sees $b200k_total members on b200k, expected $N_MID"
set_ttl b1m 0

# webdis: its own config (loopback, a free port, the bench's Redis, foreground, no logging),
# with WD_THREADS worker threads and WD_POOL Redis connections per thread
WD= WD_PID= WD_SHA= WD_VERSION=none WD_THREADS=2 WD_POOL=2
wd_start() {
    for _ in 1 2 3; do
        new_port WD
        cat > "$WORK/webdis.json" <<EOF
{"redis_host":"127.0.0.1","redis_port":$RP,"redis_auth":null,
 "http_host":"127.0.0.1","http_port":$WD,"threads":$WD_THREADS,"pool_size":$WD_POOL,
 "daemonize":false,"database":0,"verbosity":0,"logfile":"$WORK/webdis.log"}
EOF
        webdis "$WORK/webdis.json" > "$WORK/webdis.out" 2>&1 &
        WD_PID=$!
        PIDS+=("$WD_PID")
        wait_http "http://127.0.0.1:$WD/PING" "$WD_PID" && return 0
        kill "$WD_PID" 2>/dev/null || true
        WD_PID=
    done
    die "webdis did not start ($WORK/webdis.out, $WORK/webdis.log)"
}
wd_stop() { kill "$WD_PID" 2>/dev/null || true; wait "$WD_PID" 2>/dev/null || true; WD_PID=; }
if command -v webdis >/dev/null; then
    WD_VERSION=$(dpkg-query -W -f='${Version}' webdis 2>/dev/null || echo unknown)
    wd_start
    # One page in one script (bench/webdis-page.lua says what it does).
    WD_SHA=$(rcli script load "$(cat "$ROOT/bench/webdis-page.lua")")
    [ ${#WD_SHA} = 40 ] || die "SCRIPT LOAD of the webdis page script failed: $WD_SHA"
    # webdis at its best: Debian's settings (2 threads, 2 Redis connections each), upstream's
    # defaults (4 threads) and larger pools, each 1 s on page 1 of b200k (wrk when installed);
    # the fastest runs every webdis row
    cal= best=0
    for cfg in "2 2" "4 2" "2 16" "4 16"; do
        wd_stop
        read -r WD_THREADS WD_POOL <<<"$cfg"
        wd_start
        u="/EVALSHA/$WD_SHA/2/rankd%3A%7Bb200k%7D%3Az/rankd%3Aitems/1"
        if command -v wrk > /dev/null; then
            r=$(wrk -t1 -c"$CONNS" -d1s "http://127.0.0.1:$WD$u" | awk '/^Requests\/sec/ {printf "%d", $2}')
        else
            r=$("$BIN/loadgen" --port "$WD" --conns "$CONNS" --duration 1 --warmup 0.2 --url "$u" \
                --pages 1 --hot-pages 1 | "$PY" -c 'import json,sys; print(int(json.load(sys.stdin)["all"]["rps"]))')
        fi
        cal=${cal:+$cal,}"{\"threads\":$WD_THREADS,\"pool_size\":$WD_POOL,\"rps\":${r:-0}}"
        [ "${r:-0}" -gt "$best" ] && best=${r:-0} && bcfg=$cfg
    done
    wd_stop
    read -r WD_THREADS WD_POOL <<<"${bcfg:-2 2}"
    wd_start
    fact "vs-b200k" "webdis settings" "{\"tried\":[$cal],\"threads\":$WD_THREADS,\"pool_size\":$WD_POOL}"
    say "webdis $WD_VERSION on :$WD ($WD_THREADS threads, $WD_POOL Redis connections each: the best of $cal), page script $WD_SHA"
fi
wd_url() { # wd_url BOARD: webdis URL template of a page, keys percent-encoded ({ } :)
    echo "/EVALSHA/$WD_SHA/2/rankd%3A%7B$1%7D%3Az/rankd%3Aitems/{p}"
}
VLOAD=(--conns "$CONNS" --duration "$VDUR" --warmup "$VWARM")
for b in b200k b1m; do
    if [ "$b" = b200k ]; then n=$N_MID; else n=$N_LARGE; fi
    RANDP=(--pages $((n / 20)) --hot-frac 0)
    if [ -n "$WD_PID" ]; then
        # before timing: webdis answers 200 with the same 20 ids as rankd, and the records
        chks=
        for pg in 1 $((n / 20)); do
            u=$(wd_url "$b")
            code=$(curl -s -o "$WORK/wd-$b-$pg.json" -w '%{http_code}' --max-time 5 \
                "http://127.0.0.1:$WD${u/\{p\}/$pg}")
            [ "$code" = 200 ] || die "webdis answered $code for $b page $pg ($WORK/wd-$b-$pg.json)"
            curl -fs --max-time 5 "http://127.0.0.1:$RK/boards/$b/rank?page=$pg" > "$WORK/rk-$b-$pg.json"
            chk=$("$PY" bench/report.py webdis-check "$WORK/wd-$b-$pg.json" "$WORK/rk-$b-$pg.json" "$n") ||
                die "webdis page $pg of $b does not match rankd's: $chk"
            chks=${chks:+$chks,}$chk
        done
        fact "vs-$b" "webdis check" "{\"checks\":[$chks]}"
        row "vs-$b" "webdis EVALSHA, page 1" "$WD_PID" "ZCARD + ZRANGE 20 + HMGET, one script" -- \
            --port "$WD" "${VLOAD[@]}" --url "$(wd_url "$b")" --pages 1 --hot-pages 1
        wrk_base "vs-$b" "webdis EVALSHA, page 1" "$WD" "$(wd_url "$b")" 1
    else
        fact "vs-$b" "webdis" '{"skipped":"webdis is not installed (apt-get install -y webdis, as root)"}'
    fi
    ROW_BASE="webdis EVALSHA, page 1" row "vs-$b" "rankd live, page 1" "$RK_PID" "page_ttl_ms 0" -- \
        --port "$RK" "${VLOAD[@]}" --url "/boards/$b/rank?page={p}" --pages 1 --hot-pages 1
    if [ -n "$WD_PID" ]; then
        row "vs-$b" "webdis EVALSHA, random pages" "$WD_PID" "uniform over $((n / 20)) pages" -- \
            --port "$WD" "${VLOAD[@]}" --url "$(wd_url "$b")" "${RANDP[@]}"
        wrk_base "vs-$b" "webdis EVALSHA, random pages" "$WD" "$(wd_url "$b")" $((n / 20))
    fi
    ROW_BASE="webdis EVALSHA, random pages" row "vs-$b" "rankd live, random pages" "$RK_PID" \
        "uniform over $((n / 20)) pages" -- --port "$RK" "${VLOAD[@]}" \
        --url "/boards/$b/rank?page={p}" "${RANDP[@]}"
    ROW_BASE="webdis EVALSHA, random pages" row "vs-$b" "rankd member lookup, random ids" \
        "$RK_PID" "GET /boards/$b/members/{id}" -- --port "$RK" "${VLOAD[@]}" \
        --url "/boards/$b/rank?page=1" --member-url "/boards/$b/members/u{m}" --members "$n" \
        --member-frac 1
    if [ -n "$WD_PID" ]; then
        requiet "vs-$b|rankd live, page 1" "vs-$b|webdis EVALSHA, page 1" 1
        requiet "vs-$b|rankd live, random pages" "vs-$b|webdis EVALSHA, random pages" 1
        requiet "vs-$b|rankd member lookup, random ids" "vs-$b|webdis EVALSHA, random pages" 1
    fi
done

# single-entry writes: redis-benchmark ZADD of random members into a fresh key, and rankd's
# POST of one JSON entry (set, random score) for a random member of b1m
rbench vs-writes "redis-benchmark ZADD, random members" "-r 1000000, a fresh key" "$RB_N" -- \
    -r 1000000 zadd bench:zadd __rand_int__ m:__rand_int__
ROW_BASE="redis-benchmark ZADD, random members" row vs-writes "rankd POST one entry (set), random ids" \
    "$RK_PID" "b1m, Authorization: Bearer" -- --port "$RK" "${VLOAD[@]}" --url /boards/b1m/scores \
    --token "$TOKEN" --members "$N_LARGE" --body '{"id":"u{m}","score":{s},"op":"set"}'
ROWCMD["vs-writes|redis-benchmark ZADD, random members"]="rcli unlink bench:zadd > /dev/null; ${ROWCMD["vs-writes|redis-benchmark ZADD, random members"]}"
requiet "vs-writes|rankd POST one entry (set), random ids" "vs-writes|redis-benchmark ZADD, random members"
rcli unlink bench:zadd > /dev/null

# bulk import of the same N_MID entries (ids i1..., records ~110 B): redis-cli --pipe of one ZADD
# and one HSET per entry (RESP made beforehand, so only the load is timed) into keys of its own,
# then rankd's NDJSON endpoint into a new board. Rate: entries/s; CPU: rankd's per entry.
"$BIN/gen" pipe "$N_MID" 'bench:{imp}:z' bench:items i > "$WORK/imp.resp"
"$BIN/gen" ndjson "$N_MID" i set > "$WORK/imp.ndjson"
# import_row NAME NOTE SERVER_PID CHECK -- command...: time command (its output in imp.out), then
# CHECK (a function) must print the number of entries the target holds
import_row() {
    local name=$1 note=$2 spid=$3 check=$4 rc0 ru0 rc1 ru1 c0 c1 t0 t1 got
    shift 5
    read -r rc0 ru0 <<<"$(redis_stats)"
    c0=$(proc_cpu_us "$spid")
    cpu_mark
    t0=$(now_ms)
    "$@" > "$WORK/imp.out" 2>&1 || die "$name failed ($(head -c 300 "$WORK/imp.out"))"
    t1=$(now_ms)
    cpu_foreign
    c1=$(proc_cpu_us "$spid")
    read -r rc1 ru1 <<<"$(redis_stats)"
    got=$($check)
    [ "$got" = "$N_MID" ] || die "$name: $got entries after the import, expected $N_MID"
    "$PY" bench/report.py import vs-import "$name" "$note" "${ROW_BASE:-}" "$N_MID" \
        "$((t1 - t0))" "$((rc1 - rc0))" "$((ru1 - ru0))" "$((c1 - c0))" "$FOREIGN" >> "$ROWS"
    "$PY" bench/report.py line "$ROWS" >&2
}
pipe_count() { rcli zcard 'bench:{imp}:z'; }
imp_count() { curl -fs "http://127.0.0.1:$RK/boards/imp" | sed -n 's/.*"total":\([0-9]*\).*/\1/p'; }
rcli_pipe_file() { rcli --pipe < "$1"; }
import_row "redis-cli --pipe, ZADD + HSET per entry" "$(stat -c %s "$WORK/imp.resp") B of RESP" "" \
    pipe_count -- rcli_pipe_file "$WORK/imp.resp"
api PUT /boards/imp -H 'Content-Type: application/json' -d '{"page_size":20,"page_ttl_ms":0}' >/dev/null
ROW_BASE="redis-cli --pipe, ZADD + HSET per entry" import_row "rankd NDJSON import (set)" \
    "$(stat -c %s "$WORK/imp.ndjson") B, one POST" "$RK_PID" imp_count -- \
    api POST /boards/imp/scores -H 'Content-Type: application/x-ndjson' --data-binary "@$WORK/imp.ndjson"
grep -q "\"applied\":$N_MID" "$WORK/imp.out" || die "the NDJSON import did not apply $N_MID entries: $(head -c 300 "$WORK/imp.out")"
api DELETE /boards/imp > /dev/null || true
rcli unlink 'bench:{imp}:z' bench:items > /dev/null
[ -z "$WD_PID" ] || { kill "$WD_PID" 2>/dev/null || true; }

# ---------------------------------------------------------------- 13. report

say "writing $OUT/latest.{md,json} and charts"
mkdir -p "$OUT"
cat > "$WORK/meta.json" <<EOF
{"date":"$(date -u +%Y-%m-%dT%H:%M:%SZ)","quick":$QUICK,
 "command":"$([ "$QUICK" = 1 ] && echo 'BENCH_QUICK=1 ')make bench",
 "elapsed_s":$(( $(date +%s) - T_START )),
 "cpu":"$(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)","cores":$(nproc),
 "mem_gb":$(awk '/MemTotal/ {printf "%.1f", $2/1048576}' /proc/meminfo),
 "kernel":"$(uname -r)","os":"$(. /etc/os-release && echo "$PRETTY_NAME")",
 "loadavg_start":"$(cut -d' ' -f1-3 /proc/loadavg)",
 "redis":"$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p')",
 "nginx":"$("$NGINX" -v 2>&1 | sed 's/.*nginx\///')",
 "postgresql":"$( [ -n "$PG_BIN" ] && "$PG_BIN/postgres" --version | sed -n 's/.*) \([0-9.]*\).*/\1/p' || echo none)",
 "rankd_commit":"$(git rev-parse --short HEAD 2>/dev/null || echo unknown)$(git diff --quiet HEAD -- service 2>/dev/null || echo '+dirty')",
 "page_bytes":$PAGE_BYTES,"conns":$CONNS,"duration_s":$DUR,"warmup_s":$WARM,
 "fp_delay_ms":$FP_DELAY_MS,"l1_ttl_ms":$L1_TTL,"big_n":$BIG_N,
 "webdis":"$WD_VERSION","vs_duration_s":$VDUR,"vs_warmup_s":$VWARM,"vs_members":[$N_MID,$N_LARGE],
 "import":{"entries":$N_SMALL,"ms":$IMPORT_MS,"bytes":$IMPORT_BYTES},
 "direct_load":{"members":$N_LARGE,"ms":$GEN_MS}}
EOF
"$PY" bench/report.py build "$WORK/meta.json" "$ROWS" "$OUT"
FINISHED=1
cat "$OUT/latest.md"
say "done in $(( $(date +%s) - T_START )) s: $OUT/latest.md"

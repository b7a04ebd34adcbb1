#!/usr/bin/env bash
# streams.sh -- what event streams cost (pages watched with Accept: text/event-stream): rankd's
# memory per idle stream, the events per second it fans out, and the Redis commands per second
# with 10, 1,000 and STREAMS_MAX viewers of one page. Run by `make bench` after bench/run.sh;
# alone: bench/streams.sh (build first: make). Writes bench/results/streams.md.
#
#   STREAMS_MAX=n (10000), STREAMS_WINDOW=s (20: each Redis-cost window), STREAMS_OUT=file,
#   BENCH_QUICK=1 (1,000 at most, 6 s windows)
#
# The result opens with the command and the streams row of `make bench`: memory per idle stream,
# events per second received, and Redis commands per second (with their ratio to 10 viewers').
#
# 1. a throwaway redis-server and rankd (no stream caps, --max-connections above the streams)
#    on free loopback ports; a board of 1,000 members, page_ttl_ms 1000;
# 2. for 10, 1,000 and STREAMS_MAX viewers of page 1 (bench/streams.c: one epoll client, each
#    stream read as it arrives): INFO commandstats over STREAMS_WINDOW seconds without writes
#    (commands per second, all but INFO) and the watch's page reads
#    (rankd_watch_page_reads_total); then half as long while a writer changes the page every
#    200 ms: the events the viewers received per second and rankd's CPU;
# 3. memory: rankd's RSS (/proc) before any stream, and with STREAMS_MAX idle streams open
#    (each has its first page; no writes): bytes per stream;
# 4. the fan-out of one change to every stream: for each page version the window saw, the time
#    from the first viewer's copy to the last one's.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
T_START=$(date +%s)
BENCH_TAG=streams
BIN=$ROOT/build/bench
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=scripts/redis-fixture.sh
. scripts/redis-fixture.sh

QUICK=${BENCH_QUICK:-0}
MAX=${STREAMS_MAX:-10000}
WIN=${STREAMS_WINDOW:-20}
if [ "$QUICK" = 1 ]; then
    MAX=1000
    WIN=6
fi
OUT=${STREAMS_OUT:-bench/results/streams.md}
RANKD=$ROOT/build/rankd
[ -x "$RANKD" ] || die "build first: make"
build_tool streams

# the client holds MAX sockets and so does rankd: raise the soft limit to what is allowed
need=$((MAX + 200))
[ "$(ulimit -Hn)" = unlimited ] || [ "$(ulimit -Hn)" -ge "$need" ] ||
    die "ulimit -Hn is $(ulimit -Hn): $need descriptors are needed (STREAMS_MAX=$MAX)"
[ "$(ulimit -Sn)" != unlimited ] && [ "$(ulimit -Sn)" -lt "$need" ] && ulimit -Sn "$need"

WORK=$(mktemp -d /tmp/rankd-streams.XXXXXX)
RK_PID=
WRITER_PID=
cleanup() {
    [ -n "$WRITER_PID" ] && kill "$WRITER_PID" 2>/dev/null
    [ -n "$RK_PID" ] && kill "$RK_PID" 2>/dev/null && wait "$RK_PID" 2>/dev/null
    redis_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

redis_start "$WORK/redis" || die "redis-server did not start"
RP=$REDIS_PORT
rcli() { redis-cli -p "$RP" "$@"; }
TOKEN=bench-token-0123456789abcdef
RK=$(free_port)
"$RANKD" --listen "127.0.0.1:$RK" --redis "redis://127.0.0.1:$RP/0" --write-token "$TOKEN" \
    --log-level warn --max-connections $((MAX + 100)) --max-connections-per-ip 0 \
    --max-streams 0 --max-streams-per-ip 0 > "$WORK/rankd.log" 2>&1 &
RK_PID=$!
for _ in $(seq 1 100); do
    curl -fs "http://127.0.0.1:$RK/readyz" >/dev/null 2>&1 && break
    sleep 0.1
done
curl -fs "http://127.0.0.1:$RK/readyz" >/dev/null || die "rankd did not start ($WORK/rankd.log)"
api() { curl -fsS -X "$1" -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    "http://127.0.0.1:$RK$2" -d "$3"; }
api PUT /boards/live '{"page_ttl_ms":1000,"page_size":20}' >/dev/null
seq 1 1000 | awk '{printf "{\"id\":\"m%d\",\"score\":%d}\n", $1, $1 * 10}' |
    curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/x-ndjson' \
        --data-binary @- "http://127.0.0.1:$RK/boards/live/scores" >/dev/null
PAGE=/boards/live/rank?page=1
say "redis-server on :$RP, rankd on :$RK; up to $MAX streams, ${WIN} s windows"

rss_kb() { awk '/^VmRSS/ {print $2}' "/proc/$RK_PID/status"; }
metric() { curl -fs "http://127.0.0.1:$RK/metrics" | awk -v n="$1" '$1 == n {print $2}'; }
calls() { rcli info commandstats | tr -d '\r' |
    awk -F'[=,:]' '/^cmdstat_/ && $1 != "cmdstat_info" {s += $3} END {print s + 0}'; }
writer() { # a member moves into the page every 200 ms
    local i=0
    while :; do
        i=$((i + 1))
        curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
            "http://127.0.0.1:$RK/boards/live/scores" -d "{\"id\":\"w\",\"score\":$((20000 + i))}" \
            >/dev/null 2>&1 || true
        sleep 0.2
    done
}

# ---------------------------------------------------------------- memory of idle streams
RSS0=$(rss_kb)
"$BIN/streams" "$RK" "$PAGE" "$MAX" 3 > "$WORK/idle.out" &
CL=$!
for _ in $(seq 1 1200); do grep -q '^ready' "$WORK/idle.out" 2>/dev/null && break; sleep 0.1; done
READY=$(awk '/^ready/ {print $2}' "$WORK/idle.out")
OPEN_MS=$(awk '/^ready/ {print $3}' "$WORK/idle.out")
sleep 1
RSS1=$(rss_kb)
OPEN=$(metric rankd_streams_open)
wait "$CL" || true
PER_STREAM=$(( (RSS1 - RSS0) * 1024 / (READY > 0 ? READY : 1) ))
say "idle: $READY streams open in $OPEN_MS ms (rankd says $OPEN); RSS $RSS0 -> $RSS1 KiB: $PER_STREAM B/stream"
sleep 2 # the streams' closes reach rankd

# ---------------------------------------------------------------- Redis cost, then events
# Per row: the viewers open (each has its first page); WIN s without writes (Redis commands per
# second: the page's reads alone, each a computation since the copy is past its TTL); then EV s
# with the writer (events per second, the fan-out of each change, rankd's CPU).
EV=$(( WIN / 2 > 5 ? WIN / 2 : 5 ))
ROWS=()
CMDS_BASE= # the Redis commands/s of the first row (10 viewers): the others' ratio to it
SUMMARY_EV=()
SUMMARY_CMDS=()
SIZES=(10 1000)
[ "$MAX" -gt 1000 ] && SIZES+=("$MAX")
for n in "${SIZES[@]}"; do
    "$BIN/streams" "$RK" "$PAGE" "$n" $((WIN + EV + 3)) > "$WORK/run-$n.out" &
    CL=$!
    for _ in $(seq 1 1200); do grep -q '^ready' "$WORK/run-$n.out" 2>/dev/null && break; sleep 0.1; done
    sleep 1
    c0=$(calls)
    r0=$(metric rankd_watch_page_reads_total)
    sleep "$WIN"
    c1=$(calls)
    r1=$(metric rankd_watch_page_reads_total)
    writer &
    WRITER_PID=$!
    cpu0=$(proc_cpu_us "$RK_PID")
    sleep "$EV"
    cpu1=$(proc_cpu_us "$RK_PID")
    kill "$WRITER_PID" 2>/dev/null
    wait "$WRITER_PID" 2>/dev/null || true
    WRITER_PID=
    wait "$CL" || true
    # the versions the writer made: how many copies reached the viewers, and the spread of each
    # that reached every one (first copy to last)
    got=$(awk '/^version/ {s += $4} END {print s + 0}' "$WORK/run-$n.out")
    spread=$(awk -v n="$n" '/^version/ && $4 == n {d = $8 - $6; s += d; if (d > m) m = d; k++}
        END {if (k) printf "%.0f / %d", s / k, m; else print "-"}' "$WORK/run-$n.out")
    cmds_s=$(awk -v a="$c0" -v b="$c1" -v w="$WIN" 'BEGIN {printf "%.2f", (b - a) / w}')
    reads=$((r1 - r0))
    ev_s=$(awk -v e="$got" -v s="$EV" 'BEGIN {printf "%.0f", e / s}')
    cpu_ms=$(( (cpu1 - cpu0) / 1000 ))
    [ -n "$CMDS_BASE" ] || CMDS_BASE=$cmds_s
    ratio=$(awk -v a="$cmds_s" -v b="$CMDS_BASE" 'BEGIN {if (b > 0) printf "%.2f", a / b; else print "-"}')
    ROWS+=("| $n | $cmds_s | $ratio | $reads | $ev_s | $spread | $cpu_ms |")
    SUMMARY_EV+=("$ev_s at $n")
    SUMMARY_CMDS+=("$cmds_s at $n (× $ratio)")
    say "$n viewers: $cmds_s Redis commands/s ($reads page reads in ${WIN} s); with writes: $ev_s events/s, fan-out $spread ms, rankd CPU $cpu_ms ms in ${EV} s"
    sleep 2
done

{
    echo "# Event streams: memory, fan-out and Redis cost"
    echo
    echo "\`bench/streams.sh\` (run by \`make bench\`) on $(date -u '+%Y-%m-%d %H:%M UTC'), rankd at" \
        "commit \`$(git rev-parse --short HEAD 2>/dev/null || echo unknown)\`, $(nproc) cores" \
        "($(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1)), Redis" \
        "$(redis-server --version | sed -n 's/.*v=\([^ ]*\).*/\1/p'); load before: $(cut -d' ' -f1-3 /proc/loadavg)."
    echo "One page (\`$PAGE\`, page_ttl_ms 1000) of a 1,000-member board; bench/streams.c holds" \
        "the viewers (one epoll client on the same machine)."
    echo "Command: \`STREAMS_MAX=$MAX STREAMS_WINDOW=$WIN bench/streams.sh\` (what \`make bench\`" \
        "runs with the defaults; \`BENCH_QUICK=1\`: 1,000 streams, 6 s windows)."
    echo
    (IFS=';'
     echo "**The streams row**: **$PER_STREAM bytes per idle stream** ($READY open);" \
         "events/s received: $(echo "${SUMMARY_EV[*]}" | sed 's/;/, /g') viewers;" \
         "Redis commands/s: $(echo "${SUMMARY_CMDS[*]}" | sed 's/;/, /g') viewers" \
         "(× the 10 viewers' rate).")
    echo
    echo "**Memory**: $READY idle streams (each had its first page) raised rankd's RSS from" \
        "$RSS0 KiB to $RSS1 KiB: **$PER_STREAM bytes per stream** (the connection's" \
        "libmicrohttpd memory pool of 16 KiB, the request, the stream). Opening them took $OPEN_MS ms."
    echo
    echo "**Redis cost** over $WIN s without writes (\`INFO commandstats\`, INFO left out: the" \
        "page's reads alone, each a computation of the page since the last copy is past its TTL)," \
        "then **events** over $EV s while a writer changes the page every 200 ms (every page" \
        "read finds a new version to fan out):"
    echo
    echo "| viewers | Redis commands/s | × 10 viewers | page reads in $WIN s | events/s received | fan-out of a change, mean / max ms | rankd CPU ms in $EV s |"
    echo "|---|---|---|---|---|---|---|"
    printf '%s\n' "${ROWS[@]}"
    echo
    echo "Redis commands per second stay those of one viewer: the page is read once per TTL" \
        "(+10%) for all its viewers of the process, whatever their number; events per second" \
        "grow with the viewers (each change goes to each); the fan-out column is the time" \
        "from the first viewer's copy of a version to the last one's."
} > "$OUT"
say "wrote $OUT"

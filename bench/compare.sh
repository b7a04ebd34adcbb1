#!/usr/bin/env bash
# compare.sh -- two rankd builds on the same hot page, in the same run, in alternating rounds:
# which is faster is only meaningful at the same moment on a VM whose speed drifts between runs.
#
#   bench/compare.sh OLD_RANKD NEW_RANKD [EXTRA_RANKD_FLAGS...]
#   e.g. git worktree add /tmp/old HEAD~3 && make -C /tmp/old && \
#        bench/compare.sh /tmp/old/build/rankd build/rankd
#
# Starts its own redis-server (schema/redis.conf, no persistence) on a free loopback port (never
# 6379), loads a 1,000-member board through the NEW build, then BENCH_ROUNDS (default 5) rounds of:
# OLD, then NEW, each a fresh rankd process with default flags (plus the extra ones), one warm-up
# request, then bench/loadgen with 64 keep-alive connections on page 1 (Redis-cached, 1 s page
# TTL) for BENCH_SECONDS (default 5) after 1 s of warm-up. Per row: req/s, p50/p99/p99.9/max, and
# the rankd process's CPU per request (utime + stime over the loadgen run). Then the medians and
# the NEW/OLD ratios of the medians. Rows where other processes took more than 15% of the CPU are
# marked. BENCH_OLD_FLAGS / BENCH_NEW_FLAGS add flags to one side only (the same build with two
# settings: bench/compare.sh build/rankd build/rankd with BENCH_NEW_FLAGS="--http-threads 2").
# When nginx is installed, each round also runs nginx serving the same page bytes as a static
# file (the reference of issue #3's goals: "x nginx" and nginx's own p99 in the same rounds);
# BENCH_NGINX=0 leaves it out. BENCH_MEMBERS (default 1000) sizes the board (members u0..);
# BENCH_LOAD replaces the load's URL arguments (default: page 1 only), e.g. a request mix:
#   BENCH_MEMBERS=10000 BENCH_LOAD="--url /boards/cmp/rank?page={p} --pages 500 --hot-pages 5
#   --hot-frac 0.8 --member-url /boards/cmp/members/u{m} --members 10000 --member-frac 0.1"
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
. scripts/redis-fixture.sh
[ $# -ge 2 ] || { sed -n '2,7p' "$0" >&2; exit 2; }
OLD=$1 NEW=$2
shift 2
ROUNDS=${BENCH_ROUNDS:-5} SECONDS_PER=${BENCH_SECONDS:-5}
read -r -a OLD_FLAGS <<< "${BENCH_OLD_FLAGS:-}"
read -r -a NEW_FLAGS <<< "${BENCH_NEW_FLAGS:-}"
MEMBERS=${BENCH_MEMBERS:-1000}
read -r -a LOAD_ARGS <<< "${BENCH_LOAD:---url /boards/cmp/rank?page=1 --pages 1 --hot-pages 1}"
BIN=$ROOT/build/bench
T_START=$(date +%s)
BENCH_TAG=compare
. bench/lib.sh
for b in "$OLD" "$NEW"; do [ -x "$b" ] || die "not an executable: $b"; done
build_tool loadgen -lm
build_tool gen

WORK=$(mktemp -d /tmp/rankd-compare.XXXXXX)
RK_PID=
REDIS_PID=
NGINX_PID=
cleanup() {
    local rc=$?
    trap - EXIT INT TERM
    [ -n "$RK_PID" ] && kill "$RK_PID" 2>/dev/null || true
    [ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null || true
    redis_stop
    rm -rf "$WORK"
    exit "$rc"
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM
printf 'include %s/schema/redis.conf\nappendonly no\nsave ""\n' "$ROOT" > "$WORK/redis.conf"
redis_start "$WORK/redis" "$WORK/redis.conf" || die "redis-server did not start"
ours_us() { local s=0 p; for p in "$REDIS_PID" "$RK_PID"; do [ -n "$p" ] && s=$((s + $(proc_cpu_us "$p"))); done; [ -n "$NGINX_PID" ] && s=$((s + $(nginx_cpu_us))); echo $((s + $(children_cpu_us))); }
TOKEN=cmp-token-0123456789-$$

start() { # start BINARY: RK_PORT, RK_PID
    local bin=$1
    shift
    for _ in 1 2 3; do
        RK_PORT=$(free_port)
        # the token in the environment (old builds have no --write-token-file; ps shows flags)
        RANKD_WRITE_TOKEN=$TOKEN "$bin" --listen "127.0.0.1:$RK_PORT" \
            --redis "redis://127.0.0.1:$REDIS_PORT/0" --log-level warn "$@" > "$WORK/rankd.log" 2>&1 &
        RK_PID=$!
        for _ in $(seq 1 100); do
            curl -fs "http://127.0.0.1:$RK_PORT/readyz" > /dev/null 2>&1 && return 0
            kill -0 "$RK_PID" 2>/dev/null || break
            sleep 0.05
        done
        kill "$RK_PID" 2>/dev/null || true
        wait "$RK_PID" 2>/dev/null || true
    done
    die "$bin did not start ($WORK/rankd.log)"
}
stop() { kill "$RK_PID" 2>/dev/null || true; wait "$RK_PID" 2>/dev/null || true; RK_PID=; }

start "$NEW" "$@"
curl -fsS -X PUT -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
    -d '{"page_size":20,"page_ttl_ms":1000}' "http://127.0.0.1:$RK_PORT/boards/cmp" > /dev/null
"$BIN/gen" ndjson "$MEMBERS" u > "$WORK/cmp.ndjson"
curl -fsS -X POST -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/x-ndjson' \
    --data-binary "@$WORK/cmp.ndjson" "http://127.0.0.1:$RK_PORT/boards/cmp/scores" > /dev/null
SIDES="OLD NEW"
if [ "${BENCH_NGINX:-1}" = 1 ] && { command -v nginx || [ -x /usr/sbin/nginx ]; } > /dev/null; then
    mkdir -p "$WORK/nginx/www"
    chmod 711 "$WORK"
    curl -fs "http://127.0.0.1:$RK_PORT/boards/cmp/rank?page=1" > "$WORK/nginx/www/page.json"
    for _ in 1 2 3; do
        NG_PORT=$(free_port)
        nginx_start "$WORK/nginx" "$NG_PORT" && break
    done
    [ -s "$WORK/nginx/nginx.pid" ] || die "nginx did not start ($WORK/nginx/error.log)"
    NGINX_PID=$(cat "$WORK/nginx/nginx.pid")
    SIDES="OLD NEW nginx"
fi
stop
nginx_cpu_us() { local s=0 p; for p in $(ps -o pid= --ppid "$NGINX_PID"); do s=$((s + $(proc_cpu_us "$p"))); done; echo "$s"; }

ROWS=$WORK/rows.tsv
: > "$ROWS"
for r in $(seq 1 "$ROUNDS"); do
    for side in $SIDES; do
        if [ "$side" = nginx ]; then
            port=$NG_PORT
            c0=$(nginx_cpu_us)
        else
            bin=$OLD flags=("${OLD_FLAGS[@]}")
            [ "$side" = NEW ] && bin=$NEW flags=("${NEW_FLAGS[@]}")
            start "$bin" "$@" "${flags[@]}"
            port=$RK_PORT
            curl -fs "http://127.0.0.1:$RK_PORT/boards/cmp/rank?page=1" > /dev/null
            c0=$(proc_cpu_us "$RK_PID")
        fi
        cpu_mark
        "$BIN/loadgen" --port "$port" --conns 64 --duration "$SECONDS_PER" --warmup 1 \
            "${LOAD_ARGS[@]}" > "$WORK/lg.json"
        cpu_foreign
        if [ "$side" = nginx ]; then
            c1=$(nginx_cpu_us)
        else
            c1=$(proc_cpu_us "$RK_PID")
            stop
        fi
        python3 - "$side" "$r" "$c0" "$c1" "$FOREIGN" "$WORK/lg.json" >> "$ROWS" <<'EOF'
import json, sys
side, rnd, c0, c1, foreign, path = sys.argv[1:]
d = json.load(open(path))
a = d["all"]
print("\t".join(str(x) for x in (side, rnd, round(a["rps"]), a["p50_ms"], a["p99_ms"],
      a["p999_ms"], a["max_ms"], round((int(c1) - int(c0)) / max(1, d["total_requests"]), 1),
      foreign, a["non2xx"] + d["errors"] + d["timeouts"])))
EOF
        say "round $r $side: $(tail -1 "$ROWS" | cut -f3-8 | tr '\t' ' ')"
    done
done

python3 - "$ROWS" "$OLD ${BENCH_OLD_FLAGS:-} $*" "$NEW ${BENCH_NEW_FLAGS:-} $*" "$ROUNDS" \
    "$SECONDS_PER" <<'EOF'
import os, statistics as st, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
old, new, rounds, secs = (a.strip() for a in sys.argv[2:])
old, new = (" ".join(x.split()) for x in (old, new))
sides = [s for s in ("OLD", "NEW", "nginx") if any(r[0] == s for r in rows)]
load = os.environ.get("BENCH_LOAD", "")
what = f"load `{' '.join(load.split())}`" if load else "one hot page"
print(f"# rankd A/B, {what}, 64 connections, {rounds} rounds x {secs} s, alternating\n")
print(f"OLD = `{old}`, NEW = `{new}`" +
      (", nginx = the same page bytes as a static file" if "nginx" in sides else "") + "\n")
print("| side | round | req/s | p50 ms | p99 ms | p99.9 ms | max ms | server CPU µs/req | other load % | errors |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for r in rows:
    flag = " (busy machine)" if float(r[8]) > 15 else ""
    print(f"| {r[0]} | {r[1]} | {int(r[2]):,} | {r[3]} | {r[4]} | {r[5]} | {r[6]} | {r[7]} | {r[8]}{flag} | {r[9]} |")
med = {}
for side in sides:
    sel = [r for r in rows if r[0] == side and float(r[8]) <= 15] or [r for r in rows if r[0] == side]
    med[side] = [st.median(float(r[i]) for r in sel) for i in (2, 3, 4, 7)]
# x nginx: each round's req/s over nginx's in the same round, then the median
ng = {r[1]: float(r[2]) for r in rows if r[0] == "nginx"}
def x_nginx(side):
    v = [float(r[2]) / ng[r[1]] for r in rows if r[0] == side and r[1] in ng]
    return f"{st.median(v):.2f}" if v else "n/a"
print("\n| median | req/s | × nginx | p50 ms | p99 ms | server CPU µs/req |")
print("| --- | ---: | ---: | ---: | ---: | ---: |")
for side in sides:
    m = med[side]
    print(f"| {side} | {m[0]:,.0f} | {x_nginx(side)} | {m[1]:.3f} | {m[2]:.3f} | {m[3]:.1f} |")
o, n = med["OLD"], med["NEW"]
print(f"| NEW / OLD | {n[0]/o[0]:.2f} | | {n[1]/o[1]:.2f} | {n[2]/o[2]:.2f} | {n[3]/o[3]:.2f} |")
EOF

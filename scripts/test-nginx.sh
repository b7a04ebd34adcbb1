#!/usr/bin/env bash
# test-nginx.sh BIN [cluster] -- two rankd processes (BIN) on one Redis (or, with `cluster`, on a
# 3-master Redis Cluster with a replica each: scripts/cluster-fixture.sh) behind a real nginx
# running the shipped schema/nginx-rankd.conf (its marked values filled in), all on free loopback
# ports and always stopped. Checks: a write through nginx is visible through both processes within the
# page TTL; 64 concurrent cold requests through nginx, spread over both processes, compute the
# page about once (one computation: one ZRANGE in Redis' commandstats; at most one more where a
# lock expires on a loaded machine); with
# one process killed, reads through nginx keep answering; a POST is never retried by nginx;
# /metrics and /admin/ are 404 through it (however spelt); limit_req answers 429 past its bursts.
# Ends with one line: "nginx: N passed, M failed" ("nginx-cluster: ..." on the cluster).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/rankd}
MODE=${2:-single}
. scripts/redis-fixture.sh
. scripts/cluster-fixture.sh

CHECKS_NAME=nginx
[ "$MODE" = cluster ] && CHECKS_NAME=nginx-cluster
. scripts/checks.sh

[ -x "$BIN" ] || die "no rankd binary at '$BIN' (run make first)"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
[ -x "$NGINX" ] || { scripts/deps.sh nginx-light && NGINX=$(command -v nginx || echo /usr/sbin/nginx); } ||
    die "nginx is missing"

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rankd-nginx.XXXXXX")
PIDS=() NGINX_UP=
cleanup() {
    trap - EXIT INT TERM
    [ -n "$NGINX_UP" ] && "$NGINX" -p "$WORK/nginx" -c nginx.conf -s stop 2>/dev/null
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    redis_stop
    [ "$MODE" = cluster ] && cluster_stop "$WORK/cluster"
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if [ "$MODE" = cluster ]; then
    cluster_start "$WORK/cluster" >/dev/null || die "could not start the cluster"
    mapfile -t NODE_PORTS <"$WORK/cluster/ports"
    REDIS_URL="redis-cluster://127.0.0.1:${NODE_PORTS[0]},127.0.0.1:${NODE_PORTS[1]}"
else
    redis_start "$WORK/redis" || die "could not start redis-server"
    NODE_PORTS=("$REDIS_PORT")
    REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
fi
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
start_rankd() { # start_rankd N: sets PORT_N
    RANKD_WRITE_TOKEN=$TOKEN "$BIN" --listen 127.0.0.1:0 --redis "$REDIS_URL" \
        >"$WORK/rankd$1.log" 2>&1 &
    PIDS+=($!)
    local pid=$! port=
    for _ in $(seq 1 200); do
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$WORK/rankd$1.log" | head -1)
        [ -n "$port" ] && curl -fs --max-time 1 "http://127.0.0.1:$port/readyz" >/dev/null && break
        kill -0 "$pid" 2>/dev/null || { cat "$WORK/rankd$1.log" >&2; die "rankd $1 did not start"; }
        sleep 0.05
    done
    eval "PORT_$1=$port"
}
start_rankd 1
start_rankd 2
A="http://127.0.0.1:$PORT_1" B="http://127.0.0.1:$PORT_2"

# ---------------------------------------------------------------- nginx with the shipped file
mkdir -p "$WORK/nginx/logs" "$WORK/nginx/tmp"
for attempt in 1 2 3; do # a port found free can be taken before nginx binds it: try another
NGINX_PORT=$(free_port)
awk -v a="$PORT_1" -v b="$PORT_2" -v l="$NGINX_PORT" '
    /^    server 127\.0\.0\.1:8081 / { sub(/8081/, a) }
    /^    server 127\.0\.0\.1:8082 / { sub(/8082/, b) }
    /^    listen 127\.0\.0\.1:8080;/ { sub(/8080/, l) }
    { print }' schema/nginx-rankd.conf >"$WORK/nginx/rankd.conf"
[ "$(diff schema/nginx-rankd.conf "$WORK/nginx/rankd.conf" | grep -c '^>')" -eq 3 ] ||
    die "schema/nginx-rankd.conf no longer has the three marked lines the test fills in"
cat >"$WORK/nginx/nginx.conf" <<CONF
daemon on;
worker_processes 1;
pid $WORK/nginx/nginx.pid;
error_log $WORK/nginx/logs/error.log warn;
events { worker_connections 512; }
http {
    access_log $WORK/nginx/logs/access.log;
    client_body_temp_path $WORK/nginx/tmp/body;
    proxy_temp_path $WORK/nginx/tmp/proxy;
    fastcgi_temp_path $WORK/nginx/tmp/fastcgi;
    uwsgi_temp_path $WORK/nginx/tmp/uwsgi;
    scgi_temp_path $WORK/nginx/tmp/scgi;
    include $WORK/nginx/rankd.conf;
}
CONF
"$NGINX" -p "$WORK/nginx" -c nginx.conf -t >"$WORK/nginx/t.log" 2>&1 || { cat "$WORK/nginx/t.log" >&2; die "nginx -t refused the sample"; }
"$NGINX" -p "$WORK/nginx" -c nginx.conf 2>"$WORK/nginx/start.log" && { NGINX_UP=1; break; }
done
[ -n "$NGINX_UP" ] || { cat "$WORK/nginx/start.log" >&2; die "nginx did not start"; }
N="http://127.0.0.1:$NGINX_PORT"
for _ in $(seq 1 100); do curl -fs --max-time 1 "$N/healthz" >/dev/null && break; sleep 0.05; done

auth=(-H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json')
curl -fs --max-time 3 -X PUT "${auth[@]}" -d '{"page_ttl_ms":500}' "$N/boards/multi" >/dev/null ||
    die "PUT /boards/multi through nginx failed"
# ---------------------------------------------------------------- 1. a write seen by both
curl -fs --max-time 3 "${auth[@]}" -d '{"id":"p1","score":10}' "$N/boards/multi/scores" >/dev/null
curl -fs "$A/boards/multi/rank" >/dev/null # cache page 1 on A (score 10)
curl -fs "$B/boards/multi/rank" >/dev/null
curl -fs --max-time 3 "${auth[@]}" -d '{"id":"p1","score":99}' "$N/boards/multi/scores" >/dev/null
sleep 0.6 # past the 500 ms page TTL (a stale copy is served at most while one refresh runs)
curl -fs "$A/boards/multi/rank" >/dev/null
curl -fs "$B/boards/multi/rank" >/dev/null
sleep 0.1
check "write visible through process 1" grep -q '"score":99' <<<"$(curl -fs "$A/boards/multi/rank")"
check "write visible through process 2" grep -q '"score":99' <<<"$(curl -fs "$B/boards/multi/rank")"
check "member through nginx" grep -q '"score":99' <<<"$(curl -fs "$N/boards/multi/members/p1")"
ids=$(curl -fsD - -o /dev/null -H 'X-Request-Id: abc-123' "$N/boards/multi/members/p1" | tr -d '\r')
check "a client's X-Request-Id kept through nginx" grep -qi '^x-request-id: abc-123$' <<<"$ids"
ids=$(curl -fsD - -o /dev/null "$N/boards/multi/members/p1" | tr -d '\r')
check "nginx gives one to a request without" grep -qiE '^x-request-id: [0-9a-f]{32}$' <<<"$ids"
# ---------------------------------------------------------------- 2. 64 cold requests, two processes
batch=$(printf '{"id":"m%d","score":%d},' $(for i in $(seq 1 300); do echo "$i $((i * 7 % 1000))"; done))
curl -fs --max-time 5 "${auth[@]}" -d "{\"entries\":[${batch%,}]}" "$N/boards/multi/scores" >/dev/null ||
    die "batch write failed"
sleep 0.6
computed() { # page computations so far: each is one ZRANGE in Redis (page_fill.lua), summed
    # over every node (a cluster's replicas apply a script's effects, not its reads)
    local p n t=0
    for p in "${NODE_PORTS[@]}"; do
        n=$(redis-cli -p "$p" INFO commandstats | tr -d '\r' |
            sed -n 's/^cmdstat_zrange:calls=\([0-9]*\),.*/\1/p')
        t=$((t + ${n:-0}))
    done
    echo "$t"
}
c0=$(computed)
urls=()
for i in $(seq 1 64); do urls+=(-o /dev/null "$N/boards/multi/rank?page=3&size=20"); done
curl -s --parallel --parallel-immediate --parallel-max 64 -w '%{http_code} %header{x-cache}\n' \
    "${urls[@]}" >"$WORK/cold.txt" 2>/dev/null
ok=$(grep -c '^200 ' "$WORK/cold.txt")
misses=$(( $(computed) - c0 ))
check "64 cold requests answered 200 ($ok)" test "$ok" -eq 64
check "computed about once across both processes ($misses computations)" test "$misses" -ge 1 -a "$misses" -le 2
served1=$(grep -c 'GET /boards/multi/rank?page=3' "$WORK/nginx/logs/access.log")
check "nginx logged the 64 requests ($served1)" test "$served1" -ge 64

# ---------------------------------------------------------------- 3. one process down
kill "${PIDS[0]}"; wait "${PIDS[0]}" 2>/dev/null
fails=0
for i in $(seq 1 20); do curl -fs --max-time 3 "$N/boards/multi/members/m$i" >/dev/null || fails=$((fails + 1)); done
check "reads through nginx with one process down ($fails failed of 20)" test "$fails" -eq 0
for i in 1 2 3 4; do
    curl -s --max-time 3 "${auth[@]}" -d '{"id":"w1","score":5,"op":"incr"}' "$N/boards/multi/scores" >/dev/null
done
check "incr through nginx applied once per request" grep -q '"score":20' <<<"$(curl -fs "$N/boards/multi/members/w1")"

# ---------------------------------------------------------------- 4. what the sample never exposes
for path in /metrics /admin/redis //metrics /%6Detrics /admin/; do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$N$path")
    check "$path through nginx is 404 ($code)" test "$code" = 404
done
code=$(curl -s -o /dev/null -w '%{http_code}' "$B/metrics")
check "rankd itself answers /metrics (without --admin-listen): the 404 is nginx's ($code)" test "$code" = 200
# ---------------------------------------------------------------- 5. rate limits (limit_req)
# 100 writes at once from one address: past the burst of 20 (10 a second) nginx answers 429
# (any 429 shows the limit in force: on a slow machine more of them get through in time)
urls=()
for i in $(seq 1 100); do urls+=(-o /dev/null -X DELETE "$N/boards/nosuch/members/x$i"); done
curl -s --parallel --parallel-immediate --parallel-max 100 -w '%{http_code}\n' "${urls[@]}" \
    >"$WORK/writes.txt" 2>/dev/null
limited=$(grep -c '^429$' "$WORK/writes.txt")
check "100 writes at once: nginx's limit_req answers 429 past the burst ($limited of 100)" \
    test "$limited" -ge 1
# 300 reads at once: past the burst of 100 (50 a second)
urls=()
for i in $(seq 1 300); do urls+=(-o /dev/null "$N/healthz"); done
curl -s --parallel --parallel-immediate --parallel-max 100 -w '%{http_code}\n' "${urls[@]}" \
    >"$WORK/reads.txt" 2>/dev/null
limited=$(grep -c '^429$' "$WORK/reads.txt")
check "300 reads at once: 429 past the burst ($limited of 300)" test "$limited" -ge 1

checks_end

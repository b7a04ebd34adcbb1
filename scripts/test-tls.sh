#!/usr/bin/env bash
# test-tls.sh BIN -- rankd (BIN) through the shipped TLS tunnel sample (schema/stunnel-redis.conf)
# to a redis-server that listens only on TLS; both started here on free loopback ports, with a
# throwaway CA made by openssl, and always stopped. Checks that writes and reads go through, that
# the data is in the TLS-only Redis, that the plain port is closed, and that rediss:// is refused
# with the supported way. Installs stunnel4 when missing (as root; else prints the command).
# Ends with one line: "tls: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/rankd}
. scripts/redis-fixture.sh

CHECKS_NAME=tls
. scripts/checks.sh

[ -x "$BIN" ] || die "no rankd binary at '$BIN' (run make first)"
command -v stunnel4 >/dev/null || command -v stunnel >/dev/null || scripts/deps.sh stunnel4 openssl ||
    die "stunnel4 is missing"
STUNNEL=$(command -v stunnel4 || command -v stunnel)

WORK=$(mktemp -d "${TMPDIR:-/tmp}/rankd-tls.XXXXXX")
RANKD_PID= STUNNEL_PID= REDIS_PID=
cleanup() {
    trap - EXIT INT TERM
    for p in $RANKD_PID $STUNNEL_PID; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null; done
    redis_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---------------------------------------------------------------- a CA and Redis' certificate
(
    cd "$WORK" &&
        openssl req -x509 -new -nodes -newkey rsa:2048 -keyout ca.key -out ca.pem -days 2 \
            -subj "/CN=rankd test CA" &&
        openssl req -new -nodes -newkey rsa:2048 -keyout redis.key -out redis.csr \
            -subj "/CN=localhost" &&
        printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >san.ext &&
        openssl x509 -req -in redis.csr -CA ca.pem -CAkey ca.key -CAcreateserial -out redis.pem \
            -days 2 -extfile san.ext
) >"$WORK/openssl.log" 2>&1 || { cat "$WORK/openssl.log" >&2; die "openssl could not make the certificates"; }

# ---------------------------------------------------------------- a TLS-only redis-server
mkdir -p "$WORK/redis"
# a port free_port found may still be taken by the time redis-server binds it (another test's
# server, or an outgoing connection's ephemeral port): up to five ports, as redis_start does
for _attempt in 1 2 3 4 5; do
    TLS_PORT=$(free_port)
    rm -f "$WORK/redis/redis.pid"
    redis-server --port 0 --tls-port "$TLS_PORT" --bind 127.0.0.1 --tls-cert-file "$WORK/redis.pem" \
        --tls-key-file "$WORK/redis.key" --tls-ca-cert-file "$WORK/ca.pem" --tls-auth-clients no \
        --dir "$WORK/redis" --pidfile "$WORK/redis/redis.pid" --logfile "$WORK/redis/redis.log" \
        --save "" --appendonly no --daemonize yes || die "redis-server with --tls-port did not start"
    RCLI=(redis-cli -h 127.0.0.1 -p "$TLS_PORT" --tls --cacert "$WORK/ca.pem")
    for _ in $(seq 1 100); do
        "${RCLI[@]}" ping 2>/dev/null | grep -q PONG && break
        grep -q 'Address already in use' "$WORK/redis/redis.log" 2>/dev/null && break
        sleep 0.05
    done
    REDIS_PID=$(cat "$WORK/redis/redis.pid" 2>/dev/null)
    "${RCLI[@]}" ping 2>/dev/null | grep -q PONG && break
    [ -n "$REDIS_PID" ] && kill "$REDIS_PID" 2>/dev/null
    grep -q 'Address already in use' "$WORK/redis/redis.log" 2>/dev/null || break
    mv "$WORK/redis/redis.log" "$WORK/redis/redis.log.$_attempt"
done
"${RCLI[@]}" ping 2>/dev/null | grep -q PONG || die "the TLS redis-server does not answer (redis.log: $(tail -3 "$WORK/redis/redis.log"))"

# ---------------------------------------------------------------- the shipped tunnel sample
TUN_PORT=$(free_port)
sed -e "s|^accept = .*|accept = 127.0.0.1:$TUN_PORT|" -e "s|^connect = .*|connect = 127.0.0.1:$TLS_PORT|" \
    -e "s|^CAfile = .*|CAfile = $WORK/ca.pem|" -e "s|^checkHost = .*|checkHost = localhost|" \
    schema/stunnel-redis.conf >"$WORK/stunnel.conf"
# the test changes only the four marked values
[ "$(diff schema/stunnel-redis.conf "$WORK/stunnel.conf" | grep -c '^>')" -eq 4 ] ||
    die "schema/stunnel-redis.conf no longer has the four marked lines the test fills in"
"$STUNNEL" "$WORK/stunnel.conf" >"$WORK/stunnel.log" 2>&1 &
STUNNEL_PID=$!
for _ in $(seq 1 100); do
    redis-cli -h 127.0.0.1 -p "$TUN_PORT" ping 2>/dev/null | grep -q PONG && break
    sleep 0.05
done
redis-cli -h 127.0.0.1 -p "$TUN_PORT" ping 2>/dev/null | grep -q PONG ||
    { cat "$WORK/stunnel.log" >&2; die "no PONG through the tunnel"; }

# ---------------------------------------------------------------- rankd through the tunnel
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
RANKD_WRITE_TOKEN=$TOKEN "$BIN" --listen 127.0.0.1:0 --redis "redis://127.0.0.1:$TUN_PORT/0" \
    >"$WORK/rankd.log" 2>&1 &
RANKD_PID=$!
PORT=
for _ in $(seq 1 200); do
    PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$WORK/rankd.log" | head -1)
    [ -n "$PORT" ] && curl -fs --max-time 1 "http://127.0.0.1:$PORT/readyz" >/dev/null && break
    kill -0 "$RANKD_PID" 2>/dev/null || { cat "$WORK/rankd.log" >&2; die "rankd did not start"; }
    sleep 0.05
done
URL="http://127.0.0.1:$PORT"
curl -fs --max-time 2 "$URL/readyz" >/dev/null || { cat "$WORK/rankd.log" >&2; die "rankd not ready through the tunnel"; }

write() {
    curl -fs --max-time 3 -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' \
        -d "$1" "$URL/boards/tls/scores" >/dev/null
}
check "write through the tunnel" write '{"id":"alice","score":42,"record":{"name":"Alice"}}'
check "batch through the tunnel" write '{"entries":[{"id":"bob","score":40},{"id":"carol","score":44}]}'
member=$(curl -fs --max-time 3 "$URL/boards/tls/members/alice")
check "member read back" grep -q '"rank":2' <<<"$member"
page=$(curl -fs --max-time 3 "$URL/boards/tls/rank?page=1&size=3")
check "page order" grep -q '"id":"carol".*"id":"alice".*"id":"bob"' <<<"$page"
check "the data is in the TLS Redis" test "$("${RCLI[@]}" --scan --pattern 'rankd*tls*' | wc -l)" -ge 1
check "Redis has no plain port" bash -c "! redis-cli -h 127.0.0.1 -p $TLS_PORT ping 2>/dev/null | grep -q PONG"
refused=$("$BIN" --redis "rediss://:pw@127.0.0.1:$TLS_PORT/0" 2>&1 >/dev/null)
code=$?
check "rediss:// exits 2" test "$code" -eq 2
check "rediss:// names the tunnel" grep -q 'stunnel4.*schema/stunnel-redis.conf' <<<"$refused"

checks_end

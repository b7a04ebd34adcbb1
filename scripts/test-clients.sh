#!/usr/bin/env bash
# test-clients.sh BIN -- the JS client tests (clients/js/test) and the browser tests of the web
# frontend (test/browser: playwright-core driving Debian's chromium), against a real rankd (BIN)
# and a throwaway redis-server, both started here on free loopback ports and always stopped.
#
# Installs what is missing: Debian's chromium (as root; otherwise it prints the apt-get line and
# fails) and test/browser/node_modules (npm ci). The tests seed their own boards through rankd's
# write API with the token generated here. Screenshots go to build/screenshots/, the npm pack
# tarball of clients/js to build/npm/.
# Ends with one line: "clients: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=${1:-build/rankd}
. scripts/redis-fixture.sh
T0=$(date +%s)

die() { echo "test-clients: $*" >&2; echo "clients: 0 passed, 1 failed"; exit 1; }

[ -x "$BIN" ] || die "no rankd binary at '$BIN' (run make first)"

# ---------------------------------------------------------------- 1. what the tests need
missing=()
command -v redis-server >/dev/null || missing+=(redis-server)
{ command -v node >/dev/null && command -v npm >/dev/null; } || missing+=(nodejs npm)
[ -x /usr/bin/chromium ] || missing+=(chromium fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -ne 0 ]; then
        echo "the client tests need these Debian packages: ${missing[*]}" >&2
        echo "install them with:  sudo apt-get update && sudo apt-get install -y ${missing[*]}" >&2
        die "missing packages"
    fi
    echo "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; } ||
        die "apt-get install ${missing[*]} failed"
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 20 ] || die "node $(node --version) is too old: playwright-core needs 20 or newer"
if [ ! -f test/browser/node_modules/playwright-core/package.json ]; then
    echo "installing test/browser/node_modules (npm ci)"
    (cd test/browser && npm ci --no-audit --no-fund --loglevel=error) || die "npm ci in test/browser failed"
fi

# ---------------------------------------------------------------- 2. redis-server and rankd
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rankd-clients.XXXXXX")
RANKD_PID=
cleanup() {
    trap - EXIT INT TERM
    [ -n "$RANKD_PID" ] && kill "$RANKD_PID" 2>/dev/null && wait "$RANKD_PID" 2>/dev/null
    # The browser tests stop and restart Redis: the pid file names the one running now.
    [ -f "$WORK/redis/redis.pid" ] && REDIS_PID=$(cat "$WORK/redis/redis.pid")
    redis_stop
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

redis_start "$WORK/redis" || die "could not start redis-server"
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
# Port 0: the kernel picks a free port and rankd logs it ("listening on 127.0.0.1:PORT").
"$BIN" --listen 127.0.0.1:0 --redis "redis://127.0.0.1:$REDIS_PORT/0" --write-token "$TOKEN" \
    --static-dir clients/web --default-board cities >"$WORK/rankd.log" 2>&1 &
RANKD_PID=$!
RANKD_PORT=
for _ in $(seq 1 600); do # up to 30 s: a loaded CI machine can be slow
    RANKD_PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$WORK/rankd.log" | head -1)
    [ -n "$RANKD_PORT" ] && curl -fs --max-time 1 "http://127.0.0.1:$RANKD_PORT/readyz" >/dev/null && break
    kill -0 "$RANKD_PID" 2>/dev/null || { cat "$WORK/rankd.log" >&2; die "rankd did not start"; }
    sleep 0.05
done
[ -n "$RANKD_PORT" ] && curl -fs --max-time 2 "http://127.0.0.1:$RANKD_PORT/readyz" >/dev/null ||
    { cat "$WORK/rankd.log" >&2; die "rankd did not become ready"; }
served=
for _ in 1 2 3; do # a loaded CI machine can be slow to answer the first request
    if curl -fs --max-time 5 "http://127.0.0.1:$RANKD_PORT/" -o "$WORK/index.html"; then
        served=1
        break
    fi
    sleep 0.5
done
{ [ -n "$served" ] && grep -q '<html' "$WORK/index.html"; } ||
    { tail -20 "$WORK/rankd.log" >&2; die "rankd does not serve clients/web at / (--static-dir)"; }
echo "redis-server on 127.0.0.1:$REDIS_PORT, rankd on 127.0.0.1:$RANKD_PORT ($(( $(date +%s) - T0 )) s)"

export RANKD_URL="http://127.0.0.1:$RANKD_PORT"
export RANKD_WRITE_TOKEN=$TOKEN
export RANKD_TEST_REDIS_PORT=$REDIS_PORT          # the browser tests stop and restart this Redis
export RANKD_TEST_REDIS_DIR="$WORK/redis"
export RANKD_FIXTURE="$PWD/test/fixtures/cities-2000.ndjson"
export RANKD_SCREENSHOT_DIR="$PWD/build/screenshots"
mkdir -p "$RANKD_SCREENSHOT_DIR"

# ---------------------------------------------------------------- 3. the two suites
passed=0
failed=0
status=0
# cpu: CPU_MS = the CPU time (user + system, ms) of this script's children that have ended so far
# (called as a command, never in $(...): a subshell's `times` counts only its own children)
cpu() {
    times >"$WORK/times"
    CPU_MS=$(awk 'function ms(x, m) { m = x; sub(/m.*/, "", m); sub(/^[0-9]*m/, "", x)
        sub(/s$/, "", x); return int((m * 60 + x) * 1000) } NR == 2 { print ms($1) + ms($2) }' \
        "$WORK/times")
}
# run NAME FILES...: node --test with the spec reporter on stdout and TAP in a file for the counts.
run() {
    local name=$1 t=$(date +%s) c0
    cpu
    c0=$CPU_MS
    shift
    echo
    echo "== $name: node --test $*"
    # A guard against a hung runner, not a judge of speed: the browser run takes ~60 s on a quiet
    # 2-core machine and was cut at 152 s (150 s then) at load 20, its tests all passing.
    timeout -k 5 900 node --test --test-reporter=spec --test-reporter-destination=stdout \
        --test-reporter=tap --test-reporter-destination="$WORK/$name.tap" "$@"
    local rc=$?
    local p f c
    p=$(sed -n 's/^# pass \([0-9]*\)$/\1/p' "$WORK/$name.tap" 2>/dev/null | tail -1)
    f=$(sed -n 's/^# fail \([0-9]*\)$/\1/p' "$WORK/$name.tap" 2>/dev/null | tail -1)
    c=$(sed -n 's/^# cancelled \([0-9]*\)$/\1/p' "$WORK/$name.tap" 2>/dev/null | tail -1)
    p=${p:-0} f=$(( ${f:-0} + ${c:-0} ))
    [ "$rc" -ne 0 ] && [ "$f" -eq 0 ] && f=1 # the runner itself failed (a crash, the timeout)
    cpu
    local c=$((CPU_MS - c0))
    echo "-- $name summary (node --test, $(( $(date +%s) - t )) s, CPU $((c / 1000)).$((c % 1000 / 100)) s):"
    grep -E '^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) ' "$WORK/$name.tap" 2>/dev/null | tail -8
    passed=$(( passed + p ))
    failed=$(( failed + f ))
    [ "$rc" -eq 0 ] || status=1
}
run js clients/js/test/*.test.js
# one file at a time: frontend.test.js stops and restarts the Redis every browser test reads
run browser --test-concurrency=1 test/browser/*.test.js

if [ "$status" -ne 0 ] || [ "$failed" -ne 0 ]; then
    echo
    echo "-- rankd log (last 30 lines):"
    tail -n 30 "$WORK/rankd.log"
    status=1
fi
echo
echo "screenshots: $(ls "$RANKD_SCREENSHOT_DIR"/*.png 2>/dev/null | tr '\n' ' ')"
cpu
c=$CPU_MS
echo "took $(( $(date +%s) - T0 )) s, the tests' CPU $((c / 1000)).$((c % 1000 / 100)) s (without rankd and Redis; load average $(cut -d' ' -f1-3 /proc/loadavg))"
echo "clients: $passed passed, $failed failed"
exit "$status"

#!/usr/bin/env bash
# test-all.sh TIER -- the test jobs of one tier, run by scripts/test-run.sh (TEST_JOBS at once,
# default one more than the cores; each job a process of its own with its own servers on free
# loopback ports; a job's output shown when it fails; each job's time, slowest first, at the end).
# The Makefile builds what a tier needs, then calls this (test/README.md says what each job is):
#
#   check        the edit loop: unit tests and fuzz seed replays, and the fast integration suites
#                (every suite but SLOW_SUITES), on the plain build in BUILD (default build)
#   test         everything: unit tests (plain and under ASan/UBSan), every integration suite once
#                under ASan/UBSan (build/asan), the cluster run's suites there too, the fuzz
#                targets (build/fuzz, FUZZ_SECONDS each), the package, the JS client and the
#                browser, TLS and nginx checks on the plain build/rankd
#   integration  every integration suite on the plain build   (make test-integration)
#   cluster      the cluster run's suites on the plain build    (make test-integration-cluster)
#   sanitize     unit tests and every integration suite, both runs, under ASan/UBSan (make sanitize)
#
# Environment: BUILD (the plain build's directory), TEST_JOBS, FUZZ_SECONDS, PACKAGE_CHECKS
# (install or all), ASAN_OPTIONS (default quarantine_size_mb=32: see the Makefile's sanitize).
set -euo pipefail
cd "$(dirname "$0")/.."
tier=${1:?usage: $0 check|test|integration|cluster|sanitize}
BUILD=${BUILD:-build}
ASAN=build/asan
FUZZ_SECONDS=${FUZZ_SECONDS:-5}
FUZZ_TARGETS=${FUZZ_TARGETS:-path entry settings ndjson score_codec json_number}
PACKAGE_CHECKS=${PACKAGE_CHECKS:-install}
export ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=32}
# Check's timeouts are hang guards, not the contract (each test judges its own bounds): doubled,
# as libuv's UV_TEST_TIMEOUT_MULTIPLIER does, for the sanitizers and a machine that is busy.
export CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-2}

# The suites make check leaves out: each takes over 40 s alone (test/README.md has the times), or
# starts a fixture of several servers per test (sentinel, sentinel_replicas).
SLOW_SUITES="sentinel sentinel_replicas faults page_cache lifecycle ordering export"
# Started first, slowest first, so that the run's wall time is not one long job started last.
# (measured at load average 18-28: clients-js 389 s; sentinel 323 s; cluster-export 224 s;
# ordering and export 192 s. unit-asan took 355 s too while Check forked each of its 730 tests:
# now only the suites that need it fork, test/unit/main.c, and it takes about 10 s)
FIRST="clients-js sentinel cluster-export export ordering lifecycle faults
    cluster-page_cache page_cache sentinel_replicas cluster-api cluster-cluster cluster-reads"
FIRST=$(echo $FIRST) # one space between names

jobs=()
add() { jobs+=("$1=$2"); }
# suites BIN [cluster]: one job per integration suite of BIN's run (single, or cluster: named cluster-SUITE)
suites() {
    local bin=$1 on=${2:-} s prefix="" env=""
    if [ "$on" = cluster ]; then
        prefix=cluster- env="RANKD_TEST_CLUSTER=1 "
    fi
    for s in $(env ${env} "$bin" --list); do
        if [ "$tier" = check ] && [[ " $SLOW_SUITES " == *" $s "* ]]; then
            continue
        fi
        add "$prefix$s" "${env}CK_RUN_SUITE=$s $bin"
    done
}
unit() { # unit BUILDDIR: the unit tests and the fuzz targets' seed replays
    local replays="" t
    for t in $FUZZ_TARGETS; do
        [ -x "$1/fuzz-replay/$t" ] && replays+=" && $1/fuzz-replay/$t test/fuzz/corpus/$t"
    done
    echo "$1/test-unit$replays"
}

# What cannot drift: the include direction between service/'s folders, the error codes against
# openapi and docs/api.md, the options against --help, the man page and docs/operating.md.
drift="scripts/check-layers.sh && scripts/check-errors.sh && scripts/docs-options.sh $BUILD/rankd check"

case $tier in
check)
    add unit "$(unit "$BUILD")"
    add drift "$drift"
    suites "$BUILD/test-integration"
    ;;
integration) suites "$BUILD/test-integration" ;;
cluster) suites "$BUILD/test-integration" cluster ;;
sanitize | test)
    add unit-asan "$(unit "$ASAN")"
    suites "$ASAN/test-integration"
    suites "$ASAN/test-integration" cluster
    if [ "$tier" = test ]; then
        add unit "$(unit "$BUILD")"
        add drift "$drift"
        add fuzz "test/fuzz/run.sh $FUZZ_SECONDS $FUZZ_TARGETS"
        add package "scripts/test-package.sh $BUILD $PACKAGE_CHECKS"
        add clients-js "scripts/test-clients.sh $BUILD/rankd"
        add tls "scripts/test-tls.sh $BUILD/rankd"
        add nginx "scripts/test-nginx.sh $BUILD/rankd"
        add nginx-cluster "scripts/test-nginx.sh $BUILD/rankd cluster"
    fi
    ;;
*)
    echo "test-all.sh: unknown tier '$tier' (check, test, integration, cluster, sanitize)" >&2
    exit 2
    ;;
esac

# The slow ones first (in FIRST's order), then the rest in the order above.
ordered=()
for f in $FIRST; do
    for j in "${jobs[@]}"; do
        [ "${j%%=*}" = "$f" ] && ordered+=("$j")
    done
done
for j in "${jobs[@]}"; do
    [[ " $FIRST " == *" ${j%%=*} "* ]] || ordered+=("$j")
done
exec scripts/test-run.sh -d "$BUILD/test-logs/$tier" "${ordered[@]}"

#!/usr/bin/env bash
# valgrind.sh BINARY -- `make valgrind`: the integration suite once under valgrind's memcheck.
#
# Check's fork mode (one process per test, as in every other run): valgrind follows the forks,
# each process writes build/valgrind/logs/memcheck.<pid>.log, and a test whose process had a
# memory error or a definite leak exits 3 (--error-exitcode), which Check reports under the
# test's own name. Not CK_FORK=no: there a failed assertion in a test that started threads
# returns from the test while its threads still write into the test's stack frame, and the rest
# of the run is corrupted (seen: invalid writes from test_page_cache.c's job threads, then a
# SIGSEGV). Check's 30 s per test is stretched (CK_TIMEOUT_MULTIPLIER, default 10): memcheck
# runs rankd 10-50 times slower. redis-server and build/rankd (exec'd by tests) run natively.
#
# The verdict: no memcheck error and no definite leak in any process, and no failed test but
# those below. These measure time or depend on it (a deadline, a pause that must still hold, a
# refresh within a window) and fail only because memcheck makes rankd 10-50 times slower; they
# pass in make test. They still run here, so their code paths are checked for memory errors.
# A failure of any other test fails make valgrind. Prints the wall time.
TIMING_TESTS="slow_redis stall write_pause stale_two_processes maxmemory xfetch batched_hits
many_keys"
set -uo pipefail
bin=$1
logs=build/valgrind/logs
rm -rf "$logs"
mkdir -p "$logs"
t0=$(date +%s)
CK_FORK=yes CK_TIMEOUT_MULTIPLIER=${CK_TIMEOUT_MULTIPLIER:-10} \
    valgrind --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --error-exitcode=3 --num-callers=30 --suppressions=test/valgrind.supp \
    --log-file="$logs/memcheck.%p.log" "$bin" 2>&1 | tee build/valgrind/run.log
rc=${PIPESTATUS[0]}
secs=$(($(date +%s) - t0))
bad=$(grep -l -E "ERROR SUMMARY: [1-9]|definitely lost: [1-9]" "$logs"/*.log 2>/dev/null)
nlogs=$(find "$logs" -name 'memcheck.*.log' | wc -l)
if [ -n "$bad" ]; then
    for f in $bad; do
        echo "--- $f" >&2
        grep -v '^==[0-9]*== *$' "$f" | head -n 60 >&2
    done
    echo "valgrind: memory errors or definite leaks in $(echo "$bad" | wc -w) of $nlogs" \
        "processes (logs above, all in $logs); suite exit $rc; ${secs} s" >&2
    exit 1
fi
failed=$(sed -n 's/^[^:]*:[0-9]*:[FE]:\([^:]*\):.*/\1/p' build/valgrind/run.log | sort -u)
timing="" other=""
for t in $failed; do
    case " $(echo $TIMING_TESTS) " in
    *" $t "*) timing="$timing $t" ;;
    *) other="$other $t" ;;
    esac
done
echo "valgrind: no memcheck error and no definite leak in $nlogs processes; ${secs} s" \
    "($((secs / 60)) min)${timing:+; failed by the slowdown alone (timing tests):$timing}"
if [ -n "$other" ]; then
    echo "valgrind: tests failed under valgrind:$other" >&2
    exit 1
fi
if [ "$rc" -ne 0 ] && [ -z "$timing" ]; then
    echo "valgrind: the suite exited $rc" >&2
    exit 1
fi
exit 0

#!/usr/bin/env bash
# run.sh SECONDS TARGET... -- run each fuzz target build/fuzz/fuzz_<target> for SECONDS from its
# committed seed corpus (test/fuzz/corpus/<target>/, read only) and the inputs earlier runs found
# (build/fuzz/corpus/<target>/, where new ones go). One line per target; on a failure the log's
# end, the saved input (build/fuzz/crashes/) and exit 1. `make fuzz` calls it.
set -euo pipefail
secs=$1
shift
mkdir -p build/fuzz/crashes
for t in "$@"; do
    work=build/fuzz/corpus/$t
    log=build/fuzz/$t.log
    mkdir -p "$work"
    dict=()
    case $t in
    entry | settings) dict=(-dict=test/fuzz/json.dict) ;;
    path) dict=(-dict=test/fuzz/path.dict) ;;
    esac
    if ! "build/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
        -max_len=4096 -print_final_stats=1 "${dict[@]}" -artifact_prefix="build/fuzz/crashes/$t-" \
        "$work" "test/fuzz/corpus/$t" >"$log" 2>&1; then
        tail -n 40 "$log" >&2
        echo "fuzz $t: FAILED (log $log); the input is in build/fuzz/crashes/: replay it with" \
            "build/fuzz/fuzz_$t FILE and make it a unit test" >&2
        exit 1
    fi
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | cut -d' ' -f2)
    echo "fuzz $t: ${runs:-?} inputs in ${secs} s, coverage ${cov:-?} edges, no failure" \
        "(corpus: $(find "test/fuzz/corpus/$t" -type f | wc -l) seeds," \
        "$(find "$work" -type f | wc -l) found)"
done

#!/usr/bin/env bash
# checks.sh -- result lines for the shell test scripts (test-tls.sh, test-nginx.sh). Source it
# after setting CHECKS_NAME (the summary's label); then:
#   check NAME COMMAND...   runs COMMAND, prints "ok   NAME" or "FAIL NAME", counts it
#   die MESSAGE             a set-up failure: the message, the summary, exit 1
#   checks_end              the summary line "NAME: N passed, M failed"; status 0 when none failed
passed=0
failed=0
check() {
    if "${@:2}"; then passed=$((passed + 1)); echo "ok   $1"; else failed=$((failed + 1)); echo "FAIL $1"; fi
}
die() {
    echo "test-$CHECKS_NAME: $*" >&2
    echo "$CHECKS_NAME: $passed passed, $((failed + 1)) failed"
    exit 1
}
checks_end() {
    echo "$CHECKS_NAME: $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
}

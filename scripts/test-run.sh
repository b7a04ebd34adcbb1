#!/usr/bin/env bash
# test-run.sh -- run test jobs as processes of their own, N at a time (as redis's test_helper.tcl
# runs its clients), each job's output in a file of its own, shown when the job fails; at the end
# each job's time, slowest first, and "N passed, N failed".
#
#   scripts/test-run.sh [-j N] [-d LOGDIR] NAME=COMMAND...
#
# NAME=COMMAND: a job (COMMAND runs under bash -c; its output goes to LOGDIR/NAME.log). Jobs start
# in the order given (give the slowest first: the run ends soonest that way). -j N: jobs at once
# (default TEST_JOBS, else the number of cores). -d LOGDIR: where the logs go (default
# build/test-logs; emptied first). A job's exit status 77 counts as skipped (a missing tool).
# Exit status: 0 when every job passed, 1 otherwise. Ctrl-C or a TERM stops every job started
# (each job is a process group of its own; its fixtures stop with it).
set -u

jobs_max=${TEST_JOBS:-$(nproc 2>/dev/null || echo 2)}
logdir=build/test-logs
while getopts "j:d:" opt; do
    case $opt in
    j) jobs_max=$OPTARG ;;
    d) logdir=$OPTARG ;;
    *)
        echo "usage: $0 [-j N] [-d LOGDIR] NAME=COMMAND..." >&2
        exit 2
        ;;
    esac
done
shift $((OPTIND - 1))
[ "$jobs_max" -ge 1 ] 2>/dev/null || jobs_max=1
mkdir -p "$logdir"
rm -f "$logdir"/*.log "$logdir"/*.rc

names=() cmds=()
for spec in "$@"; do
    names+=("${spec%%=*}")
    cmds+=("${spec#*=}")
done

declare -A pid_of name_of start_of usecs_of rc_of
running=0 next=0 passed=0 failed=0 skipped=0
t_start=${EPOCHREALTIME/./}

# A job: a process group of its own (setsid), its output in its log.
start_job() {
    local i=$1 name=${names[$1]}
    setsid bash -c "${cmds[$i]}" >"$logdir/$name.log" 2>&1 </dev/null &
    pid_of[$name]=$!
    name_of[$!]=$name
    start_of[$name]=${EPOCHREALTIME/./}
    running=$((running + 1))
    printf '[start] %s\n' "$name"
}

stop_all() {
    for name in "${!pid_of[@]}"; do
        kill -TERM -- "-${pid_of[$name]}" 2>/dev/null
    done
    wait
    echo "test-run: interrupted" >&2
    exit 130
}
trap stop_all INT TERM

secs() { printf '%d.%d' $(($1 / 1000000)) $(($1 % 1000000 / 100000)); }

# Wait for a job to end, and account for it.
reap() {
    local pid rc name
    wait -n -p pid
    rc=$?
    [ -n "${pid:-}" ] || return
    name=${name_of[$pid]}
    unset "pid_of[$name]"
    running=$((running - 1))
    usecs_of[$name]=$((${EPOCHREALTIME/./} - ${start_of[$name]}))
    rc_of[$name]=$rc
    local t
    t=$(secs "${usecs_of[$name]}")
    if [ "$rc" -eq 0 ]; then
        passed=$((passed + 1))
        printf '[ok]    %s (%s s)\n' "$name" "$t"
    elif [ "$rc" -eq 77 ]; then
        skipped=$((skipped + 1))
        printf '[skip]  %s (%s s)\n' "$name" "$t"
    else
        failed=$((failed + 1))
        printf '[FAIL]  %s (%s s, exit %d): its output (%s/%s.log):\n' "$name" "$t" "$rc" \
            "$logdir" "$name"
        sed 's/^/    | /' "$logdir/$name.log"
    fi
}

while [ "$next" -lt "${#names[@]}" ] || [ "$running" -gt 0 ]; do
    if [ "$next" -lt "${#names[@]}" ] && [ "$running" -lt "$jobs_max" ]; then
        start_job "$next"
        next=$((next + 1))
        continue
    fi
    reap
done

total=$((${EPOCHREALTIME/./} - t_start))
echo
echo "== each job's time, slowest first (wall $(secs "$total") s, $jobs_max at once," \
    "load average $(cut -d' ' -f1-3 /proc/loadavg)):"
for name in "${names[@]}"; do
    case ${rc_of[$name]} in
    0) st=ok ;;
    77) st=skipped ;;
    *) st=FAILED ;;
    esac
    printf '%8s s  %-8s %s\n' "$(secs "${usecs_of[$name]}")" "$st" "$name"
done | sort -rn
# Check's own summary lines ("NN%: Checks: N, Failures: N, Errors: N"), one per job that has one
grep -H '^[0-9]*%: Checks:' "$logdir"/*.log 2>/dev/null | sed -e "s|^$logdir/||" -e 's|\.log:|: |'
echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$failed" -eq 0 ]

#!/usr/bin/env bash
# soak.sh -- `make soak`: rankd under a steady mixed load for a long time, to show it holds: no
# errors, no memory growth, no latency drift (issue 13, "Prove it").
#
#   1. its own redis-server (schema/redis.conf, persistence off) and build/rankd on free loopback
#      ports (never 6379); a 100,000-member board with records (bench/gen, redis-cli --pipe);
#   2. capacity, measured first in the same run: SOAK_CAP_SECONDS (15) of the mix in a closed loop
#      on 64 connections (after 2 s of warm-up);
#   3. the soak: SOAK_SECONDS (300) of the same mix paced at SOAK_LOAD (0.8) of that capacity:
#      readers on a schedule (bench/loadgen --rate: latency from the scheduled time, no
#      coordinated omission), 10% of all requests writes (incr of an existing member, 8
#      connections); rankd's RSS (and Redis' used_memory) every 10 s;
#   4. bench/results/soak.md (SOAK_OUT): the run, per-minute latency of the reads, the RSS
#      samples, errors, and the verdict: errors 0 and the last minute's p99 at most 2 x the
#      first's + 1 ms. Exit 1 when the verdict fails.
#
# The mix: 90% pages (80% of them pages 1-5, cached with page_ttl_ms 1000; 20% uniform over all
# 5,000 pages) and 10% member lookups, plus the writes. Run it on a quiet machine: the load
# average (uptime) before and after and the CPU other processes used during the soak are in the
# result. The script runs itself, rankd, Redis and loadgen at nice -19 when it may (bench_priority
# in bench/lib.sh; BENCH_PRIORITY=0 turns it off), and samples every second the CPU of its own
# processes and of the rest of the machine, so that a second that fell behind can be told apart:
# the result lists the worst seconds with the CPU others took in them.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
T_START=$(date +%s)
BENCH_TAG=soak
BIN=$ROOT/build/bench
# shellcheck source=bench/lib.sh
. bench/lib.sh
# shellcheck source=scripts/redis-fixture.sh
. scripts/redis-fixture.sh

SECS=${SOAK_SECONDS:-300}
LOAD=${SOAK_LOAD:-0.8}
CAP_SECS=${SOAK_CAP_SECONDS:-15}
OUT=${SOAK_OUT:-bench/results/soak.md}
N=100000
WRITE_FRAC=0.1
CONNS=64
RANKD=$ROOT/build/rankd
[ -x "$RANKD" ] || die "build first: make"
build_tool loadgen -lm
build_tool gen

WORK=$(mktemp -d /tmp/rankd-soak.XXXXXX)
RK_PID=
SAMPLER=
CPU_SAMPLER=
cleanup() {
    [ -n "$SAMPLER" ] && kill "$SAMPLER" 2>/dev/null
    [ -n "$CPU_SAMPLER" ] && kill "$CPU_SAMPLER" 2>/dev/null
    [ -n "$RK_PID" ] && kill "$RK_PID" 2>/dev/null && wait "$RK_PID" 2>/dev/null
    redis_stop
    [ "${SOAK_KEEP:-0}" = 1 ] && say "kept $WORK" || rm -rf "$WORK"
    bench_priority_restore
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

bench_priority
say "priority: $PRIORITY"
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
cat > "$WORK/redis.conf" <<CONF
include $ROOT/schema/redis.conf
appendonly no
save ""
CONF
redis_start "$WORK/redis" "$WORK/redis.conf" || die "redis-server did not start"
bench_boost "$REDIS_PID"
RP=$REDIS_PORT
"$BIN/gen" resp "$N" soak u rankd 1000 1 | redis-cli -p "$RP" --pipe > /dev/null
TOKEN=$(od -An -tx1 -N16 /dev/urandom | tr -d ' \n')
for _ in 1 2 3; do
    HP=$(free_port)
    "$RANKD" --listen "127.0.0.1:$HP" --redis "redis://127.0.0.1:$RP/0" --write-token "$TOKEN" \
        --log-level warn > "$WORK/rankd.log" 2>&1 &
    RK_PID=$!
    for _ in $(seq 1 200); do
        curl -fs --max-time 1 -o /dev/null "http://127.0.0.1:$HP/readyz" && break
        kill -0 "$RK_PID" 2>/dev/null || break
        sleep 0.05
    done
    curl -fs --max-time 1 -o /dev/null "http://127.0.0.1:$HP/readyz" && break
    kill "$RK_PID" 2>/dev/null || true
    RK_PID=
done
[ -n "$RK_PID" ] || die "rankd did not start ($WORK/rankd.log)"
say "redis on :$RP, rankd on :$HP, board soak: $N members; load average $LOAD_BEFORE"

MIX=(--port "$HP" --conns "$CONNS" --url '/boards/soak/rank?page={p}' --pages $((N / 20))
     --hot-pages 5 --hot-frac 0.8 --member-url '/boards/soak/members/u{m}' --members "$N"
     --member-frac 0.1 --write-port "$HP" --write-path /boards/soak/scores --token "$TOKEN"
     --write-frac "$WRITE_FRAC" --write-conns 8 --id-prefix u --drain 5)

say "capacity: ${CAP_SECS} s closed loop"
"$BIN/loadgen" --label capacity "${MIX[@]}" --warmup 2 --duration "$CAP_SECS" > "$WORK/capacity.json"
CAP=$(python3 -c "
import json; d = json.load(open('$WORK/capacity.json'))
w = d['by_class'].get('write', {'rps': 0})
print('%.0f' % (d['all']['rps'] + w['rps']))")
RATE=$(python3 -c "print('%.0f' % ($CAP * $LOAD * (1 - $WRITE_FRAC)))")
say "capacity $CAP req/s (reads + writes); soak: reads paced at $RATE/s, writes ${WRITE_FRAC} of all, ${SECS} s"

sample() { # seconds, rankd VmRSS kB, Redis used_memory bytes, busy CPU us of all cores, CPU us
    # of rankd + Redis + loadgen (the difference is what other processes used)
    printf '%s %s %s %s %s\n' $(($(date +%s) - SOAK_T0)) \
        "$(awk '/^VmRSS:/ {print $2}' "/proc/$RK_PID/status")" \
        "$(redis-cli -p "$RP" info memory | tr -d '\r' | sed -n 's/^used_memory://p')" \
        "$(busy_us)" \
        $(($(proc_cpu_us "$RK_PID") + $(proc_cpu_us "$REDIS_PID") + $(proc_cpu_us "${LG_PID:-}")))
}
rss_sampler() { # every 10 s until stopped
    while kill -0 "$RK_PID" 2>/dev/null; do
        sample
        sleep 10
    done
}
cpu_sampler() { # every second until stopped: ms since SOAK_T0, busy CPU us of all cores, CPU us of
    # rankd + Redis + loadgen
    while kill -0 "$RK_PID" 2>/dev/null; do
        printf '%s %s %s\n' $(($(now_ms) - SOAK_T0_MS)) "$(busy_us)" \
            $(($(proc_cpu_us "$RK_PID") + $(proc_cpu_us "$REDIS_PID") + $(proc_cpu_us "${LG_PID:-}")))
        sleep 1
    done
}
ours_us() { echo $(( $(proc_cpu_us "$RK_PID") + $(proc_cpu_us "$REDIS_PID") + $(children_cpu_us) )); }
cpu_mark
SOAK_T0=$(date +%s)
SOAK_T0_MS=$(now_ms)
"$BIN/loadgen" --label soak "${MIX[@]}" --rate "$RATE" --warmup 0 --duration "$SECS" \
    --timeline "$WORK/timeline.csv" > "$WORK/soak.json" &
LG_PID=$!
rss_sampler > "$WORK/rss.txt" &
SAMPLER=$!
cpu_sampler > "$WORK/cpu.txt" &
CPU_SAMPLER=$!
wait "$LG_PID" || die "loadgen failed"
sample >> "$WORK/rss.txt" # the end (loadgen's CPU: counted by cpu_foreign as a waited child)
LG_PID=
cpu_foreign
kill "$SAMPLER" "$CPU_SAMPLER" 2>/dev/null || true
wait "$SAMPLER" "$CPU_SAMPLER" 2>/dev/null || true
SAMPLER=
CPU_SAMPLER=
LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
say "soak done; load average $LOAD_AFTER, other processes used ${FOREIGN}% of the CPU"

mkdir -p "$(dirname "$OUT")"
set +e
python3 - "$WORK" "$OUT" <<PY
import json, sys, os
work, out = sys.argv[1], sys.argv[2]
cap = json.load(open(os.path.join(work, 'capacity.json')))
soak = json.load(open(os.path.join(work, 'soak.json')))
mins = {}
secs = {}
for line in open(os.path.join(work, 'timeline.csv')):
    parts = line.strip().split(',')
    try:
        t, lat, st = float(parts[0]), int(parts[1]), int(parts[2])
    except (ValueError, IndexError):
        continue
    secs.setdefault(int(t // 1000), []).append(lat)
    m = mins.setdefault(int(t // 60000), [[], 0])
    m[0].append(lat)
    if not 200 <= st < 400:
        m[1] += 1
def q(v, p):
    return v[min(len(v) - 1, max(0, int(-(-p * len(v) // 1)) - 1))] / 1000.0
rows = []
for k in sorted(mins):
    v, bad = mins[k]
    v.sort()
    rows.append((k + 1, len(v), bad, q(v, .5), q(v, .99), q(v, .999), v[-1] / 1000.0))
rows = [r for r in rows if r[0] <= int($SECS) // 60] or rows  # whole minutes (if any)
rss = [l.split() for l in open(os.path.join(work, 'rss.txt')) if len(l.split()) == 5]
ncpu = os.cpu_count()
def foreign(a, b):  # % of all cores other processes used between two samples
    dt = (int(b[0]) - int(a[0])) * 1e6 * ncpu
    if dt <= 0 or int(b[4]) < int(a[4]):  # loadgen's CPU leaves the sum when it ends
        return None
    return max(0.0, 100.0 * ((int(b[3]) - int(a[3])) - (int(b[4]) - int(a[4]))) / dt)
fmin = {}
for a, b in zip(rss, rss[1:]):
    f = foreign(a, b)
    if f is not None:
        fmin.setdefault(int(b[0]) // 60 if int(b[0]) % 60 else int(b[0]) // 60 - 1, []).append(f)
cpu = [l.split() for l in open(os.path.join(work, 'cpu.txt')) if len(l.split()) == 3]
sec_foreign = {}  # second -> % of all cores others used in the sample interval ending in it
for a, b in zip(cpu, cpu[1:]):
    dt = (int(b[0]) - int(a[0])) * 1000.0 * ncpu
    if dt > 0 and int(b[2]) >= int(a[2]):
        sec_foreign[int(b[0]) // 1000] = max(0.0, 100.0 * ((int(b[1]) - int(a[1])) - (int(b[2]) - int(a[2]))) / dt)
sec_rows = []
for k in sorted(secs):
    v = sorted(secs[k])
    sec_rows.append((k, q(v, .5), q(v, .99), v[-1] / 1000.0))
med_p99 = sorted(r[2] for r in sec_rows)[len(sec_rows) // 2] if sec_rows else 0
def others(k):  # the most others took in this second or the one before (a backlog lags its cause)
    f = [sec_foreign[j] for j in (k - 1, k) if j in sec_foreign]
    return max(f) if f else None
slow = [r for r in sec_rows if r[2] > 10 * med_p99 + 1.0]
slow_busy = [r for r in slow if (others(r[0]) or 0) > 100 - 100 * $LOAD]
w = soak['by_class'].get('write', {'n': 0, 'non2xx': 0, 'rps': 0, 'p50_ms': 0, 'p99_ms': 0, 'max_ms': 0})
reads = soak['all']
errors = soak['errors'] + soak['timeouts'] + reads['non2xx'] + w['non2xx']
total = reads['n'] + w['n']
first, last = rows[0], rows[-1]
stable = last[4] <= 2 * first[4] + 1.0
rss0, rss1 = int(rss[0][1]), int(rss[-1][1])
ok = errors == 0 and stable
L = []
L.append('# Soak: %d s of mixed reads and writes at %.0f%% of measured capacity' % ($SECS, 100 * $LOAD))
L.append('')
L.append('\`make soak\` (bench/soak.sh), %s UTC, rankd \`%s\`, on %s cores (%s), Redis %s.' % (
    os.popen('date -u "+%Y-%m-%d %H:%M"').read().strip(), os.popen('git rev-parse --short HEAD').read().strip(),
    os.cpu_count(), os.popen("sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -1").read().strip(),
    os.popen("redis-server --version | sed -n 's/.*v=\\\\([^ ]*\\\\).*/\\\\1/p'").read().strip()))
L.append('Machine load: load average %s before, %s after; other processes used %s%% of all cores during the soak.' % (
    '$LOAD_BEFORE', '$LOAD_AFTER', '$FOREIGN'))
L.append('')
L.append('Board \`soak\`: %d members with ~110-byte records, page_ttl_ms 1000. Mix: 90%% pages (80%% of them pages 1-5, 20%% uniform over %d pages), 10%% member lookups, and writes (\`incr\` of an existing member) as %d%% of all requests; 64 reader connections, 8 writer connections, keep-alive, loopback.' % ($N, $N // 20, 100 * $WRITE_FRAC))
L.append('')
L.append('| | value |')
L.append('| --- | ---: |')
L.append('| capacity (closed loop, %d s after 2 s warm-up): reads + writes | %s req/s (reads %.0f, p99 %.2f ms; writes %.0f) |' % (
    $CAP_SECS, '{:,}'.format(int($CAP)), cap['all']['rps'], cap['all']['p99_ms'], cap['by_class'].get('write', {'rps': 0})['rps']))
L.append('| soak: reads paced at | %s req/s (%.0f%% of capacity with the writes) |' % ('{:,}'.format(int($RATE)), 100 * $LOAD))
L.append('| soak: reads served | %s (%.0f req/s; p50 %.3f ms, p99 %.3f ms, p99.9 %.3f ms, max %.1f ms) |' % (
    '{:,}'.format(reads['n']), reads['rps'], reads['p50_ms'], reads['p99_ms'], reads['p999_ms'], reads['max_ms']))
L.append('| soak: writes served | %s (%.0f req/s; p50 %.3f ms, p99 %.3f ms, max %.1f ms) |' % (
    '{:,}'.format(w['n']), w['rps'], w['p50_ms'], w['p99_ms'], w['max_ms']))
L.append('| errors (non-2xx, connection errors, timeouts) | %d of %s (%s) |' % (errors, '{:,}'.format(total), 'rate 0' if errors == 0 else 'rate %.2g' % (errors / total)))
L.append('| X-Cache of reads: hit / miss / stale / none | %d / %d / %d / %d |' % (
    soak['xcache']['hit'], soak['xcache']['miss'], soak['xcache']['stale'], soak['xcache']['none']))
L.append('| rankd RSS: first sample, last, max | %.1f MB, %.1f MB, %.1f MB |' % (rss0 / 1024, rss1 / 1024, max(int(r[1]) for r in rss) / 1024))
L.append('| p99 of reads: first minute, last minute | %.3f ms, %.3f ms (%s: last <= 2 x first + 1 ms) |' % (first[4], last[4], 'stable' if stable else 'NOT stable'))
L.append('| priority of the soak\'s processes (bench_priority) | %s |' % '$PRIORITY')
L.append('| seconds whose p99 exceeds 10 x the median second\'s (%.3f ms) + 1 ms | %d of %d; %d of them with other processes taking over %.0f%% of the CPU in that second or the one before |' % (
    med_p99, len(slow), len(sec_rows), len(slow_busy), 100 - 100 * $LOAD))
L.append('| verdict | %s |' % ('pass' if ok else 'FAIL'))
L.append('')
L.append('The machine is shared: at %.0f%% of capacity, other processes taking more than the remaining %.0f%% of the CPU push the paced load past what is left, the schedule falls behind and every later request is charged the backlog (latency counts from the scheduled time). The CPU column below tells such minutes from a drift of rankd\'s own (an upper bound: loopback work the kernel charges to no process counts there too).' % (100 * $LOAD, 100 - 100 * $LOAD))
L.append('')
L.append('Reads per minute (latency from the scheduled send time):')
L.append('')
L.append('| minute | reads | non-2xx | p50 ms | p99 ms | p99.9 ms | max ms | other processes\' CPU |')
L.append('| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |')
for r in rows:
    f = fmin.get(r[0] - 1)
    L.append('| %d | %s | %d | %.3f | %.3f | %.3f | %.1f | %s |' % (r[0], '{:,}'.format(r[1]), r[2], r[3], r[4], r[5], r[6],
             '%.0f%%' % (sum(f) / len(f)) if f else 'n/a'))
L.append('')
L.append('The worst seconds by p99 (latency from the scheduled send time; the CPU others took, % of all cores, sampled every second):')
L.append('')
L.append('| second | p50 ms | p99 ms | max ms | other processes\' CPU (that second, the one before) |')
L.append('| ---: | ---: | ---: | ---: | ---: |')
def pct(k):
    return '%.0f%%' % sec_foreign[k] if k in sec_foreign else 'n/a'
for r in sorted(sec_rows, key=lambda r: -r[2])[:8]:
    L.append('| %d | %.3f | %.3f | %.1f | %s, %s |' % (r[0], r[1], r[2], r[3], pct(r[0]), pct(r[0] - 1)))
L.append('')
L.append('rankd RSS, Redis memory and the CPU other processes used (% of all cores, over the 10 s before), every 10 s:')
L.append('')
L.append('| s | rankd RSS MB | Redis used_memory MB | other processes\' CPU |')
L.append('| ---: | ---: | ---: | ---: |')
prev = None
for row in rss:
    f = foreign(prev, row) if prev else None
    L.append('| %s | %.1f | %.1f | %s |' % (row[0], int(row[1]) / 1024, int(row[2]) / 1048576, '%.0f%%' % f if f is not None else ''))
    prev = row
open(out, 'w').write('\n'.join(L) + '\n')
print('soak: %s; errors %d of %d; p99 first/last minute %.3f/%.3f ms; RSS %.1f -> %.1f MB; written to %s' % (
    'pass' if ok else 'FAIL', errors, total, first[4], last[4], rss0 / 1024, rss1 / 1024, out))
sys.exit(0 if ok else 1)
PY
rc=$?
set -e
exit $rc

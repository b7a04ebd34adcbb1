#!/usr/bin/env bash
# eval-cost.sh -- what Redis pays for the parts of a script call: redis-server (its own, on a free
# loopback port, never 6379) under valgrind's callgrind, each probe run N times by
# `redis-benchmark -c 1` with instrumentation on only around it, printed as instructions per call
# (load-independent, unlike usec on a shared machine). A probe line is "NAME|COMMAND ARGS..."
# (shell words); "@file.lua@" in it is replaced by that file's SHA after SCRIPT LOAD.
#
#   bench/eval-cost.sh [probes-file]   (default: the probes below: an empty EVALSHA by argument
#                                      count, one redis.call, ten tonumber, ten string.format('%d'),
#                                      a reply of 9 numbers and write.lua's nested 17-element one)
#   N (2000) calls a probe.
set -uo pipefail
N=${N:-2000}
RP=$(python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])')
D=$(mktemp -d /tmp/rankd-eval-cost.XXXXXX)
valgrind --tool=callgrind --instr-atstart=no "--callgrind-out-file=$D/cg.out" redis-server \
  --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$D" > "$D/vg.log" 2>&1 &
VG=$!
cleanup() { redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1; sleep 0.5; kill "$VG" 2>/dev/null; rm -rf "$D"; }
trap cleanup EXIT
for _ in $(seq 300); do redis-cli -p "$RP" ping >/dev/null 2>&1 && break; sleep 0.1; done
if [ $# -ge 1 ]; then
  PROBES=$(cat "$1")
else
  echo 'return 0' > "$D/e0.lua"
  echo "redis.call('HINCRBY', KEYS[1], 'version', '1') return 0" > "$D/call1.lua"
  echo "redis.call('HINCRBY', KEYS[1], 'version', '1') redis.call('HINCRBY', KEYS[1], 'version', '1') return 0" > "$D/call2.lua"
  echo "local x = tonumber(ARGV[1]) local s for i = 1, 10 do s = string.format('%d', x + i) end return 0" > "$D/fmt.lua"
  echo "local x for i = 1, 10 do x = tonumber(ARGV[1]) end return 0" > "$D/ton.lua"
  echo "return {0, 17, 0, 123456789012, 4321, 1, 123456789000, 4000, 0}" > "$D/reply9.lua"
  echo "return {0, 1, '', 0, 0, {0, 17, 2097152, 'desc', 0, 0, 0, 123456789012, 4321, 1, 123456789000, 4000}}" > "$D/reply17.lua"
  A17='6 rankd:{sw}:z rankd:{sw}:meta rankd:{sw}:dense rankd:{sw}:upd rankd:items rankd:{sw}:periods "desc|first|0|none|0|packed|0" 3 1048576 2097152 4294967295 i1234 set "{\"w\":1}" 1234567 "" ""'
  PROBES="ping|ping
hincrby|hincrby h version 1
empty EVALSHA, 0 arguments|evalsha @$D/e0.lua@ 0
empty EVALSHA, 3 arguments|evalsha @$D/e0.lua@ 1 k a b
empty EVALSHA, 17 arguments|evalsha @$D/e0.lua@ $A17
one redis.call HINCRBY (1 key)|evalsha @$D/call1.lua@ 1 h
two redis.call HINCRBY (1 key)|evalsha @$D/call2.lua@ 1 h
ten string.format('%d') (1 arg)|evalsha @$D/fmt.lua@ 0 1234567
ten tonumber (1 arg)|evalsha @$D/ton.lua@ 0 1234567
reply of 9 numbers|evalsha @$D/reply9.lua@ 0
reply nested, 17 elements|evalsha @$D/reply17.lua@ 0"
fi
while IFS= read -r line; do
  [ -z "$line" ] && continue
  name=${line%%|*}; cmd=${line#*|}
  while [[ $cmd =~ @([^@]+)@ ]]; do
    f=${BASH_REMATCH[1]}; sha=$(redis-cli -p "$RP" script load "$(cat "$f")"); cmd=${cmd/@$f@/$sha}
  done
  eval "set -- $cmd"
  redis-benchmark -p "$RP" -c 1 -n 50 "$@" >/dev/null 2>&1
  callgrind_control -z "$VG" >/dev/null 2>&1; callgrind_control -i on "$VG" >/dev/null
  redis-benchmark -p "$RP" -c 1 -n "$N" "$@" >/dev/null 2>&1
  callgrind_control -i off "$VG" >/dev/null; callgrind_control -d "$VG" >/dev/null
  f=""; for _ in $(seq 200); do f=$(ls -t "$D"/cg.out.* 2>/dev/null | head -1); [ -n "$f" ] && grep -qs '^totals:' "$f" && break; sleep 0.1; done
  ir=$(awk '/^totals:/ {print $2; exit}' "$f")
  printf '%-40s %9d instructions a call\n' "$name" $((ir / N))
  rm -f "$f"
done <<< "$PROBES"

#!/usr/bin/env bash
# wide-bytes.sh -- bytes per member of the `packed` and `wide` score layouts, of sub-scores
# (schema/score-layout.md, "Cost: bytes per member", "Sub-scores") and of `track_updated_at` (the
# updated_at hash, schema/redis-keys.md): its own redis-server (no persistence) and rankd on free
# loopback ports, the same N members (default 100,000; BENCH_WIDE_N) written to a packed, a wide,
# a tracked board and wide boards with 1 and 2 sub-scores (random integers 0..1000) through
# POST /boards/{b}/scores in batches of 1000, then
# MEMORY USAGE <key> SAMPLES 0 of each board's keys, printed per key and per member.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${BENCH_WIDE_N:-100000}
WORK=$(mktemp -d /tmp/rankd-wide-bytes.XXXXXX)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
RP=$(free_port)
HP=$(free_port)
TOKEN=wide-bytes-$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
printf '%s\n' "$TOKEN" > "$WORK/token"
chmod 600 "$WORK/token"
redis-server --port "$RP" --bind 127.0.0.1 --save '' --appendonly no --dir "$WORK" \
    --logfile "$WORK/redis.log" --daemonize yes --pidfile "$WORK/redis.pid"
build/rankd --listen="127.0.0.1:$HP" --redis="redis://127.0.0.1:$RP" \
    --write-token-file="$WORK/token" > "$WORK/rankd.log" 2>&1 &
RANKD=$!
cleanup() { kill "$RANKD" 2>/dev/null || true; redis-cli -p "$RP" shutdown nosave >/dev/null 2>&1 || true; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq 50); do curl -sf "127.0.0.1:$HP/healthz" >/dev/null && break; sleep 0.1; done
auth="Authorization: Bearer $TOKEN"
curl -sf -H "$auth" -X PUT "127.0.0.1:$HP/boards/packed" -d '{}' >/dev/null
curl -sf -H "$auth" -X PUT "127.0.0.1:$HP/boards/wide" -d '{"score_layout":"wide"}' >/dev/null
curl -sf -H "$auth" -X PUT "127.0.0.1:$HP/boards/tracked" -d '{"track_updated_at":true}' >/dev/null
curl -sf -H "$auth" -X PUT "127.0.0.1:$HP/boards/sub1" -d '{"subscores":["desc"]}' >/dev/null
curl -sf -H "$auth" -X PUT "127.0.0.1:$HP/boards/sub2" -d '{"subscores":["desc","asc"]}' >/dev/null
python3 - "$HP" "$TOKEN" "$N" <<'PY'
import json, random, sys, urllib.request
port, token, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for board, nsub in (("packed", 0), ("wide", 0), ("tracked", 0), ("sub1", 1), ("sub2", 2)):
    random.seed(7)
    for start in range(0, n, 1000):
        entries = [{"id": "player-%06d" % i, "score": random.randint(0, 1000000)}
                   for i in range(start, min(n, start + 1000))]
        for e in entries:
            if nsub:
                e["subscores"] = [random.randint(0, 1000) for _ in range(nsub)]
        req = urllib.request.Request("http://127.0.0.1:%s/boards/%s/scores" % (port, board),
                                     data=json.dumps({"entries": entries}).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + token})
        urllib.request.urlopen(req).read()
PY
printf '%-22s %12s %10s\n' key bytes per_member
for k in 'rankd:{packed}:z' 'rankd:{packed}:dense' 'rankd:{wide}:z' 'rankd:{wide}:ids' 'rankd:{wide}:dense' \
    'rankd:{tracked}:z' 'rankd:{tracked}:upd' \
         'rankd:{sub1}:z' 'rankd:{sub1}:ids' 'rankd:{sub1}:dense' \
         'rankd:{sub2}:z' 'rankd:{sub2}:ids' 'rankd:{sub2}:dense'; do
    b=$(redis-cli -p "$RP" MEMORY USAGE "$k" SAMPLES 0)
    printf '%-22s %12s %10.1f\n' "$k" "$b" "$(echo "$b / $N" | bc -l)"
done

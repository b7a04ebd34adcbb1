#!lua
-- write.lua -- a batch of score writes (set | best | incr) applied in order, O(k log N) for k
-- entries in few commands: one ZMSCORE of every member, at most one bounded ZRANGE BYSCORE
-- LIMIT 0 1 per tie group the batch enters, then one variadic ZADD and one HSET (and ZRANK when
-- asked). Each redis.call costs Lua about 4 us beyond its command, so per-entry calls were two
-- thirds of a batch's time. Callers bound a call's entries and bytes so it stays short.
-- Flagged (no allow-oom): at maxmemory Redis refuses the whole call before it runs, so a write
-- refused for memory wrote nothing.
-- Layout (service/score_codec.h): stored = key * 2^T + tie; a smaller key is a better score.
-- KEYS[1] board sorted set, KEYS[2] board settings hash, KEYS[3] records hash, KEYS[4] registry set,
-- KEYS[5] the board's period index (schema/redis-keys.md). On Redis Cluster the records and the
-- registry are in other slots: KEYS[3] and KEYS[4] are KEYS[2] again, and the caller writes the
-- records of the entries applied and adds a board this call created to the registry.
-- ARGV[1] 2^T   ARGV[2] tiebreak   ARGV[3] tie cap   ARGV[4] largest |key|
-- ARGV[5] order   ARGV[6] score_decimals   ARGV[7] default page_size   ARGV[8] default page_ttl_ms
-- ARGV[9] board name   ARGV[10] '1' to return ranks   ARGV[11] entry count n
-- ARGV[12] '1': all or nothing (an entry whose result leaves the range refuses the whole call),
--          '0': such an entry is refused alone (NDJSON lines)
-- ARGV[13] a new, unique board generation, stored if this call creates the board
-- ARGV[14] period kind, ARGV[15] UTC offset (minutes): checked like order/tiebreak/decimals;
-- KEYS[1] is then the current period's set. ARGV[16] '1' for a periodic board and ARGV[17] the
-- current period's start (ms): the set is listed in the period index with that score (ZADD NX),
-- in the same call as its first write, so every period set is listed while it exists. Board data
-- never carries a TTL (it would make it evictable); sweep.lua removes the sets of periods no
-- longer readable, and this call says when to run it: when it listed a new set.
-- then per entry 4 values: member, op, key (or key delta for incr), record JSON or ''.
-- Reply {status, done, listed (1: this call listed a new period set), created (1: this call
-- created the board), results...}; results hold
-- 4 values per applied or refused entry:
--   code (0 applied or unchanged, 2 key out of range: nothing written for it), stored, rank0, updated.
-- status 0: all n entries handled; 1: the board's settings differ from ARGV (or the board is
-- gone and ARGV are not the defaults), nothing written; 2 (all or nothing): entry done+1 would
-- leave the range, nothing written; 3: entry done+1 found its tie group full: nothing written
-- for it or after it, and the reply's last value is that group's key (compact, resume).
local z, meta, items, registry = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local base, tiebreak, cap, kmax = tonumber(ARGV[1]), ARGV[2], tonumber(ARGV[3]), tonumber(ARGV[4])
local want_rank, n = ARGV[10] == '1', tonumber(ARGV[11])
local fmt = '%.17g'

local created = 0
local m = redis.call('HMGET', meta, 'order', 'tiebreak', 'score_decimals', 'period', 'timezone')
if not m[1] then
  -- a new board gets the defaults; settings read before a concurrent delete must not revive it
  if ARGV[5] ~= 'desc' or tiebreak ~= 'first' or ARGV[6] ~= '0' or ARGV[7] ~= '20' or
     ARGV[8] ~= '1000' or ARGV[14] ~= 'none' or ARGV[15] ~= '0' then
    return {1, 0, 0, 0}
  end
  redis.call('HSET', meta, 'order', ARGV[5], 'tiebreak', tiebreak, 'score_decimals', ARGV[6],
             'page_size', ARGV[7], 'page_ttl_ms', ARGV[8], 'gen', ARGV[13])
  if registry ~= meta then redis.call('SADD', registry, ARGV[9]) end
  created = 1
elseif m[1] ~= ARGV[5] or m[2] ~= tiebreak or m[3] ~= ARGV[6] or (m[4] or 'none') ~= ARGV[14] or
       (m[5] or '0') ~= ARGV[15] then
  return {1, 0, 0, 0}
end
local out = {0, 0, 0, created}
local function seal()
  if ARGV[16] == '1' and out[3] == 0 and redis.call('ZADD', KEYS[5], 'NX', ARGV[17], z) == 1 then
    out[3] = 1
    redis.call('PERSIST', z) -- a set an older rankd wrote carries a TTL: it must not expire
  end
end

local function result_key(op, arg, oldkey)
  if op == 'incr' then return (oldkey or 0) + arg end
  if op == 'best' and oldkey and oldkey <= arg then return oldkey end
  return arg
end

-- The current stored value of every member, in one ZMSCORE (members repeated in the batch read
-- their own earlier results from `cur` as the loop goes).
local members, seen = {}, {}
for i = 0, n - 1 do
  local member = ARGV[18 + i * 4]
  if not seen[member] then
    seen[member] = true
    members[#members + 1] = member
  end
end
local cur = {} -- member -> stored value (number) or false
if #members > 0 then
  local got = redis.call('ZMSCORE', z, unpack(members))
  for i = 1, #members do cur[members[i]] = got[i] and tonumber(got[i]) or false end
end

if ARGV[12] == '1' then
  -- first pass: would any entry leave the range? (members repeated in the batch included)
  local keys = {}
  for i = 0, n - 1 do
    local a = 18 + i * 4
    local member = ARGV[a]
    if keys[member] == nil then
      keys[member] = cur[member] and math.floor(cur[member] / base) or false
    end
    local key = result_key(ARGV[a + 1], tonumber(ARGV[a + 2]), keys[member] or nil)
    if key > kmax or key < -kmax then return {2, i, 0, created} end
    keys[member] = key
  end
end

-- Tie groups: the tie just after the group's last entry (first) or just before its first (last),
-- read once per group with one bounded ZRANGE and then kept here as entries join it. A member
-- leaving a group is not subtracted: the next arrival still goes after every entry, so the order
-- holds (a gap in the numbering is harmless).
local edge = {} -- key -> the tie an arrival takes next
local function next_tie(key, lo)
  local t = edge[key]
  if t == nil then
    if tiebreak == 'first' then
      local r = redis.call('ZRANGE', z, lo + cap - 1, lo, 'BYSCORE', 'REV', 'LIMIT', 0, 1, 'WITHSCORES')
      t = r[2] and tonumber(r[2]) - lo + 1 or 0
    elseif tiebreak == 'last' then
      local r = redis.call('ZRANGE', z, lo, lo + cap - 1, 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
      t = r[2] and tonumber(r[2]) - lo - 1 or cap - 1
    else
      t = 0
    end
  end
  return t
end

-- The writes of the entries handled so far go out in two variadic commands (ZADD applies its
-- pairs in order, HSET its fields: a member given twice ends as its last entry, as one by one).
local adds, records = {}, {}
local function flush()
  if #adds > 0 then
    redis.call('ZADD', z, unpack(adds))
    seal()
  end
  if #records > 0 and items ~= meta then redis.call('HSET', items, unpack(records)) end
  adds, records = {}, {}
end

local results = {} -- per entry: code, stored, member (for its rank) or false, updated
-- Write what was handled, then the ranks asked for (after every write of the call: ranks are
-- asked for single entries only), into the reply.
local function finish()
  flush()
  for k = 1, #results, 4 do
    local m = results[k + 2]
    results[k + 2] = m and redis.call('ZRANK', z, m) or 0
  end
  for k = 1, #results do out[#out + 1] = results[k] end
end
for i = 0, n - 1 do
  local a = 18 + i * 4
  local member, op, arg, record = ARGV[a], ARGV[a + 1], tonumber(ARGV[a + 2]), ARGV[a + 3]
  local old = cur[member] or nil
  local oldkey = old and math.floor(old / base) or nil
  local key = result_key(op, arg, oldkey)
  local code, stored, updated = 0, old, 0
  if key > kmax or key < -kmax then
    code = 2
  elseif not (old and key == oldkey) then
    local lo = key * base
    local tie = next_tie(key, lo)
    if tie >= cap or tie < 0 then
      finish()
      out[1] = 3
      out[#out + 1] = string.format(fmt, key)
      return out
    end
    edge[key] = tiebreak == 'last' and tie - 1 or (tiebreak == 'first' and tie + 1 or 0)
    stored = lo + tie
    updated = 1
    cur[member] = stored
    adds[#adds + 1] = stored
    adds[#adds + 1] = member
  end
  if code == 0 and record ~= '' then
    records[#records + 1] = member
    records[#records + 1] = record
  end
  results[#results + 1] = code
  results[#results + 1] = stored and string.format(fmt, stored) or ''
  results[#results + 1] = (code == 0 and want_rank) and member or false
  results[#results + 1] = updated
  out[2] = i + 1
end
finish()
return out

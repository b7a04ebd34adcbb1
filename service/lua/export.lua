#!lua
-- export.lua -- a point-in-time snapshot of a board's set Z for GET /boards/{board}/export, taken
-- without blocking Redis: Z is copied in rank chunks into a temporary set while writes go on,
-- then read back in rank chunks. Every step is one short call, O(log N + chunk).
--
-- The copy. `start` lists the export in the settings hash's `exports` field (a lease the copy
-- renews, with the edge below), so that every script that changes members of Z while the export
-- lives records them first (prelude_export.lua): each member in :rows with ZADD NX at its value
-- before the change (+inf when it was not in Z), and in :moves how many of them had the edge
-- value. `copy` goes through Z in order, from where the last chunk ended: the edge, a stored
-- value v and how many members of value v it has taken (off, in member order; values are
-- unique on first/last boards, groups of equal value exist on id boards). Each chunk is the
-- ranks from (ZCOUNT Z -inf (v) + off - moves on, added to :rows with ZADD NX. So :rows ends
-- as Z was at `start` (its members at +inf aside): a member that never changed keeps its one
-- value, and is reached: one above v comes after every member of value v, one of value v had at
-- most `moves` members before it leave the group; a window that meets it twice adds the same
-- value. A member that changed holds its value before its first change (NX: neither a later
-- change nor the copy replaces it); one added after `start` is at +inf, after every snapshot
-- row. The copy ends with a chunk that reached the end of Z, and :rows must then hold exactly as
-- many snapshot rows as Z had members at `start` (else something changed Z without recording
-- it, and the export is interrupted rather than wrong). Each chunk moves on by at least its
-- size less the members of the edge value that changed meanwhile: a writer cannot stall it.
-- A reset, a delete or a layout change of the board (a new generation, or no settings hash), a
-- lapsed lease, or the sweep of the period's set (a past period's set only ever goes whole, by
-- UNLINK: the count above catches it) ends the export as interrupted.
-- The read is plain ZRANGE and HMGET of the snapshot, the end three UNLINKs (export.h).
--
-- Flagged (no allow-oom): at maxmemory Redis refuses it whole (a copy grows memory).
-- KEYS[1] Z, KEYS[2] the settings hash, KEYS[3] :rows, KEYS[4] :moves (both
-- P:{board}:export:<token>:...; :moves exists while the copy runs, and prelude_export.lua
-- records nothing for an export without it, so no key outlives an export that ended)
-- ARGV[1] step: start | copy   ARGV[2] token   ARGV[3] the generation at start ('' at start)
-- ARGV[4] the edge value ('' before the first chunk)   ARGV[5] off   ARGV[6] chunk
-- ARGV[7] lease (ms)   ARGV[8] the keys' TTL (ms): a safety net for an export whose process
-- died; renewed by each step   ARGV[9] Z's size at start ('' at start)
-- Replies: start {'ok', gen, size} or {'gone'}; copy {'more', edge, off}, {'done', rows} (the
-- snapshot's rows: ranks 0..rows-1 of :rows) or {'interrupted'}.
--@prelude export
local z, meta, rows, moves = KEYS[1], KEYS[2], KEYS[3], KEYS[4]
local step, token = ARGV[1], ARGV[2]

-- The `exports` field without this export's entry (and without lapsed ones), plus `add`.
local function relist(add)
  local kept = {}
  for _, e in ipairs(export_entries(redis.call('HGET', meta, 'exports'))) do
    if e[1] ~= token then kept[#kept + 1] = e[1] .. '|' .. e[2] .. '|' .. e[3] end
  end
  if add then kept[#kept + 1] = add end
  if #kept == 0 then
    redis.call('HDEL', meta, 'exports')
  else
    redis.call('HSET', meta, 'exports', table.concat(kept, ' '))
  end
end

local function lease(edge)
  return token .. '|' .. string.format('%d', export_now() + tonumber(ARGV[7])) .. '|' .. z .. '|' ..
         edge
end

if step == 'start' then
  local gen = redis.call('HGET', meta, 'gen')
  if not gen then return {'gone'} end
  relist(lease(''))
  redis.call('SET', moves, '0', 'PX', ARGV[8])
  return {'ok', gen, redis.call('ZCARD', z)}
end

-- copy
local live = false
for _, e in ipairs(export_entries(redis.call('HGET', meta, 'exports'))) do
  if e[1] == token then live = true end
end
local moved = redis.call('GET', moves)
if not live or not moved or redis.call('HGET', meta, 'gen') ~= ARGV[3] then
  if redis.call('EXISTS', meta) == 1 then relist(nil) end
  redis.call('UNLINK', rows, moves)
  return {'interrupted'}
end
local chunk = tonumber(ARGV[6])
local from = math.max(0, tonumber(ARGV[5]) - tonumber(moved))
-- the rank the chunk starts at: members below the edge value, plus `from` of the edge's group
-- (a rank range, not LIMIT from: an offset is walked, a rank is found in O(log N))
local start = from
if ARGV[4] ~= '' then start = redis.call('ZCOUNT', z, '-inf', '(' .. ARGV[4]) + from end
local got = redis.call('ZRANGE', z, start, start + chunk - 1, 'WITHSCORES')
local add = {}
for i = 1, #got, 2 do
  add[i] = got[i + 1]
  add[i + 1] = got[i]
end
if #add > 0 then redis.call('ZADD', rows, 'NX', unpack(add)) end
if #got < 2 * chunk then -- the end of Z
  relist(nil)
  redis.call('UNLINK', moves)
  local n = redis.call('ZCARD', rows) - redis.call('ZCOUNT', rows, '+inf', '+inf')
  if n ~= tonumber(ARGV[9]) then
    redis.call('UNLINK', rows)
    return {'interrupted'}
  end
  redis.call('PEXPIRE', rows, ARGV[8])
  return {'done', n}
end
-- the new edge: the last value read, and how many members of it were read (all of this chunk's
-- at that value, plus those before it when the chunk stayed in the edge's group)
local edge = got[#got]
local off = 0
for i = #got, 2, -2 do
  if got[i] ~= edge then break end
  off = off + 1
end
if off == chunk and edge == ARGV[4] then off = off + from end
relist(lease(edge))
redis.call('SET', moves, '0', 'PX', ARGV[8])
redis.call('PEXPIRE', rows, ARGV[8])
return {'more', edge, off}

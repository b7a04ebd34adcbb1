#!lua
-- export.lua -- a point-in-time snapshot of a board's set Z for GET /boards/{board}/export, taken
-- without blocking Redis: Z is copied in rank chunks into a temporary set while writes go on,
-- then read back in rank chunks. Every step is one short call, O(log N + chunk).
--
-- The copy. `start` lists the export in the settings hash's `exports` field (a lease the copy
-- renews), so that every script that changes a member of Z while the export lives records it
-- first (prelude_export.lua): the member in :seen, its value before the change in :rows, and in
-- :moves how many members of Z changed. `copy` then adds ranks [s, s + chunk) of Z to :rows,
-- skipping the members in :seen, where s is the rank asked for less the moves since the last
-- chunk. So :rows ends as Z was at `start`: a member that never changed is copied at its one
-- value (a change above it can move its rank up by at most one per changed member, which the
-- chunk start gives back, so no rank window skips it; a window that meets it twice writes the
-- same value); a member that changed is in :rows at its value before its first change, and
-- never copied; one added after `start` is in :seen only. The copy ends when s reaches the end
-- of Z: no unchanged member is left uncopied, and the export leaves `exports`.
-- A reset, a delete or a layout change of the board (a new generation, or no settings hash), a
-- lapsed lease, or the sweep of the period's set (a past period's set only ever goes whole) ends
-- the export as interrupted: its snapshot could not be completed.
-- The read is plain ZRANGE and HMGET of the snapshot, the end three UNLINKs (export.h).
--
-- Flagged (no allow-oom): at maxmemory Redis refuses it whole (a copy grows memory).
-- KEYS[1] Z, KEYS[2] the settings hash, KEYS[3] :rows, KEYS[4] :seen, KEYS[5] :moves (all
-- P:{board}:export:<token>:...; :moves exists while the copy runs, and prelude_export.lua
-- records nothing for an export without it, so no key outlives an export that ended)
-- ARGV[1] step: start | copy   ARGV[2] token   ARGV[3] the generation at start ('' at start)
-- ARGV[4] the rank (0-based) the copy goes on from   ARGV[5] chunk   ARGV[6] lease (ms)
-- ARGV[7] the keys' TTL (ms): a safety net for an export whose process died; renewed by each
-- step   ARGV[8] Z's size at start ('' at start)
-- Replies: start {'ok', gen, size} or {'gone'}; copy {'more', next rank}, {'done', rows} or
-- {'interrupted'}.
--@prelude export
local z, meta, rows, seen, moves, items = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5], KEYS[6]
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

local function lease()
  return token .. '|' .. string.format('%d', export_now() + tonumber(ARGV[6])) .. '|' .. z
end

if step == 'start' then
  local gen = redis.call('HGET', meta, 'gen')
  if not gen then return {'gone'} end
  relist(lease())
  redis.call('SET', moves, '0', 'PX', ARGV[7])
  return {'ok', gen, redis.call('ZCARD', z)}
end

-- copy
local live = false
for _, e in ipairs(export_entries(redis.call('HGET', meta, 'exports'))) do
  if e[1] == token then live = true end
end
local moved = redis.call('GET', moves)
if not live or not moved or redis.call('HGET', meta, 'gen') ~= ARGV[3] or
   (tonumber(ARGV[8]) > 0 and redis.call('EXISTS', z) == 0 and
    redis.call('EXISTS', seen) == 0) then
  if redis.call('EXISTS', meta) == 1 then relist(nil) end
  redis.call('UNLINK', rows, seen, moves)
  return {'interrupted'}
end
local s = math.max(0, tonumber(ARGV[4]) - tonumber(moved))
if s >= redis.call('ZCARD', z) then
  relist(nil)
  redis.call('UNLINK', seen, moves)
  redis.call('PEXPIRE', rows, ARGV[7])
  return {'done', redis.call('ZCARD', rows)}
end
local chunk = tonumber(ARGV[5])
local got = redis.call('ZRANGE', z, s, s + chunk - 1, 'WITHSCORES')
local ids = {}
for i = 1, #got, 2 do ids[#ids + 1] = got[i] end
local skip = redis.call('SMISMEMBER', seen, unpack(ids))
local add = {}
for i = 1, #ids do
  if skip[i] == 0 then
    add[#add + 1] = got[2 * i]
    add[#add + 1] = ids[i]
  end
end
if #add > 0 then redis.call('ZADD', rows, unpack(add)) end
relist(lease())
redis.call('SET', moves, '0', 'PX', ARGV[7])
redis.call('PEXPIRE', rows, ARGV[7])
if redis.call('EXISTS', seen) == 1 then redis.call('PEXPIRE', seen, ARGV[7]) end
return {'more', s + chunk}

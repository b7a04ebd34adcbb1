-- prelude_read.lua -- the opening every read script shares, put in place of its "--@prelude"
-- line at build time (Makefile). One KEYS/ARGV layout for all of them: KEYS[1] the board's
-- settings hash, KEYS[2] the sorted set of the period read, KEYS[3] the records hash, or KEYS[1]
-- again when the records are in other slots (Redis Cluster: the caller fetches them, and the
-- records in the reply are empty); ARGV[1] the
-- period kind, ARGV[2] the UTC offset (minutes) and ARGV[3] the retain the caller assumed when it
-- chose KEYS[2] (and judged the period readable); the script's own arguments from ARGV[4] on.
-- Checking retain here is what makes processes agree on which periods are readable: a process
-- whose retain is stale (another one changed it) is told the real one and judges again. One HGETALL, checked in Lua (a second redis.call costs more
-- than the loop). Gives `settings` (the flat HGETALL, for the reply), `s` (field -> value) and
-- page_size(asked) and page_reply(page, size); returns nil when the board does not exist and {'retry', period, offset,
-- retain} when its periods are not what the caller assumed (it learns them and calls again).
local settings = redis.call('HGETALL', KEYS[1])
if #settings == 0 then return false end
local s = {}
for i = 1, #settings, 2 do s[settings[i]] = settings[i + 1] end
if (s.period or 'none') ~= ARGV[1] or (s.timezone or '0') ~= ARGV[2] or
   (s.retain or '1') ~= ARGV[3] then
  return {'retry', s.period or 'none', s.timezone or '0', s.retain or '1'}
end
-- the size asked for, or the board's page_size for 0; a damaged hash must not read the board
local function page_size(asked)
  local size = tonumber(asked)
  if size == 0 then size = tonumber(s.page_size) or 20 end
  if not size or size < 1 or size > 100 then size = 20 end
  return size
end
-- page `page` of `size` entries: page.lua's reply {settings, total, size, {member, stored, ...},
-- {record|nil, ...}}. O(log N + size). Ascending stored order is rank order (ZRANGE, not REV).
local function page_reply(page, size)
  local total = redis.call('ZCARD', KEYS[2])
  local start = (page - 1) * size
  local range, records = {}, {}
  if start < total then
    range = redis.call('ZRANGE', KEYS[2], start, start + size - 1, 'WITHSCORES')
    local ids = {}
    for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
    if KEYS[3] ~= KEYS[1] then records = redis.call('HMGET', KEYS[3], unpack(ids)) end
  end
  return {settings, total, size, range, records}
end

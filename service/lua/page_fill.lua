-- page_fill.lua -- a page miss on an event thread, in one call: the cached page if another
-- computation stored it meanwhile, else this page's stampede lock and the page's rows (as
-- page.lua), else word that someone else holds the lock. O(log N + size). Not flagged
-- no-writes (it takes the lock), so rankd sends it on an event thread's write connection: a
-- write pause holds it, never the reads behind it.
-- KEYS[1] board settings hash, KEYS[2] board sorted set (of the period read), KEYS[3] records,
-- KEYS[4] the page's cache key, KEYS[5] its lock key
-- ARGV[1] page (1-based)   ARGV[2] size (resolved, 1..100)   ARGV[3] period kind and ARGV[4] UTC
-- offset (minutes) the caller assumed for KEYS[2]   ARGV[5] the generation the key was made for
-- ARGV[6] lock token   ARGV[7] lock TTL (ms)   ARGV[8] a cached copy made at or before this
-- (wall ms) does not count (0: any copy counts)
-- Reply: nil when the board does not exist; {'retry', period, offset, retain} (other period
--   settings); {'gen'} (a new generation: the key is stale); {'cached', value}; {'locked'};
--   else, with the lock taken, page.lua's reply {settings, total, size, range, records}
local settings = redis.call('HGETALL', KEYS[1])
if #settings == 0 then return false end
local pm = redis.call('HMGET', KEYS[1], 'period', 'timezone', 'retain', 'gen')
if (pm[1] or 'none') ~= ARGV[3] or (pm[2] or '0') ~= ARGV[4] then
  return {'retry', pm[1] or 'none', pm[2] or '0', pm[3] or '1'}
end
if (pm[4] or '0') ~= ARGV[5] then return {'gen'} end
local v = redis.call('GET', KEYS[4])
if v then
  local created = tonumber(string.match(v, '^rankd2 %-?%d+ (%d+) '))
  if created and created > tonumber(ARGV[8]) then return {'cached', v} end
end
if not redis.call('SET', KEYS[5], ARGV[6], 'NX', 'PX', ARGV[7]) then return {'locked'} end
local size = tonumber(ARGV[2])
local total = redis.call('ZCARD', KEYS[2])
local start = (tonumber(ARGV[1]) - 1) * size
local range, records = {}, {}
if start < total then
  range = redis.call('ZRANGE', KEYS[2], start, start + size - 1, 'WITHSCORES')
  local ids = {}
  for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
  records = redis.call('HMGET', KEYS[3], unpack(ids))
end
return {settings, total, size, range, records}

-- page_fill.lua -- a page miss on an event thread, in one call: the cached page if another
-- computation stored it meanwhile, else this page's stampede lock and the page's rows (as
-- page.lua), else word that someone else holds the lock. O(log N + size). Not flagged
-- no-writes (it takes the lock), so rankd sends it on an event thread's write connection: a
-- write pause holds it, never the reads behind it.
-- KEYS[1..3] and ARGV[1..3] as prelude_read.lua; KEYS[4] the page's cache key, KEYS[5] its lock
-- ARGV[4] page (1-based)   ARGV[5] size (resolved, 1..100)   ARGV[6] the generation the key was
-- made for   ARGV[7] lock token   ARGV[8] lock TTL (ms)   ARGV[9] a cached copy made at or before
-- this (wall ms) does not count (0: any copy counts)   ARGV[10] nor one whose stamp (the board's
-- write counter it was computed at) is below this (0: any)
-- Reply: nil when the board does not exist; {'retry', period, offset, retain} (prelude); {'gen'}
--   (a new generation: the key is stale); {'cached', value}; {'locked'}; else, with the lock
--   taken, page.lua's reply {settings, total, size, range, records}
--@prelude
if (s.gen or '0') ~= ARGV[6] then return {'gen'} end
local v = redis.call('GET', KEYS[4])
if v then
  local stamp, created = string.match(v, '^rankd3 %-?%d+ (%-?%d+) (%d+) ')
  if not stamp then stamp, created = '0', string.match(v, '^rankd2 %-?%d+ (%d+) ') end
  if created and tonumber(created) > tonumber(ARGV[9]) and tonumber(stamp) >= tonumber(ARGV[10]) then
    return {'cached', v}
  end
end
if not redis.call('SET', KEYS[5], ARGV[7], 'NX', 'PX', ARGV[8]) then return {'locked'} end
return page_reply(tonumber(ARGV[4]), page_size(ARGV[5]))

-- page_fill.lua -- a page miss on an event thread, in one call: the cached page if another
-- computation stored it meanwhile, else this page's stampede lock and the page's rows (as
-- page.lua), else word that someone else holds the lock. O(log N + size). Not flagged
-- no-writes (it takes the lock), so rankd sends it on an event thread's write connection: a
-- write pause holds it, never the reads behind it.
-- KEYS[1..6] and ARGV[1..4] as prelude_read.lua; KEYS[7] the page's cache key, KEYS[8] its lock
-- ARGV[5] page (1-based)   ARGV[6] size (resolved, 1..100)   ARGV[7] the generation the key was
-- made for   ARGV[8] lock token   ARGV[9] lock TTL (ms)   ARGV[10] a cached copy made at or
-- before this (wall ms) does not count (0: any copy counts)   ARGV[11] nor one whose stamp (the
-- board's write counter it was computed at) is below this (0: any)
-- Reply: nil when the board does not exist; {'retry', period, offset, retain} and
--   {'dense_unavailable'} (prelude); {'gen'} (a new generation: the key is stale); {'cached',
--   value}; {'locked'}; else, with the lock taken, page.lua's reply
--@prelude
if (s.gen or '0') ~= ARGV[7] then return {'gen'} end
local v = redis.call('GET', KEYS[7])
if v then
  local stamp, created = string.match(v, '^rankd3 %-?%d+ (%-?%d+) (%d+) ')
  if not stamp then stamp, created = '0', string.match(v, '^rankd2 %-?%d+ (%d+) ') end
  if created and tonumber(created) > tonumber(ARGV[10]) and tonumber(stamp) >= tonumber(ARGV[11]) then
    return {'cached', v}
  end
end
if not redis.call('SET', KEYS[8], ARGV[8], 'NX', 'PX', ARGV[9]) then return {'locked'} end
return page_reply_timed(tonumber(ARGV[5]), page_size(ARGV[6]))

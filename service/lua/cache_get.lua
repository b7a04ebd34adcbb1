#!lua flags=no-writes
-- cache_get.lua -- a page's cache lookup in one round trip: board state, then the cached page.
-- O(1). The page key carries the board generation, a unique value stored in the settings hash
-- when the board is created (and renewed by a reset): pages computed before a delete and
-- re-creation, or before Redis lost its data, are never found again (they expire by TTL).
-- KEYS[1] board settings hash
-- ARGV[1] page key prefix (P:{board}:page:)   ARGV[2] page   ARGV[3] size, 0 for the board's
-- ARGV[4] '1' to read the page here (cache in this Redis), '0' for the state only
-- ARGV[5] period kind and ARGV[6] UTC offset the caller assumed, ARGV[7] the period id ('-' none)
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} when the board's
-- period settings differ from ARGV, else {size, page_ttl_ms, generation, page value|nil}
local m = redis.call('HMGET', KEYS[1], 'page_size', 'page_ttl_ms', 'gen', 'period', 'timezone',
                     'retain')
if not m[1] then return false end
if (m[4] or 'none') ~= ARGV[5] or (m[5] or '0') ~= ARGV[6] then
  return {'retry', m[4] or 'none', m[5] or '0', m[6] or '1'}
end
local gen = m[3] or '0'
local size = tonumber(ARGV[3])
if size == 0 then size = tonumber(m[1]) or 20 end
if size < 1 or size > 100 then size = 20 end
local ttl = tonumber(m[2]) or 1000
local value = false
if ARGV[4] == '1' and ttl > 0 then
  value = redis.call('GET', ARGV[1] .. gen .. ':' .. ARGV[7] .. ':' .. size .. ':' .. ARGV[2])
end
return {size, ttl, gen, value}

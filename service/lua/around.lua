#!lua flags=no-writes
-- around.lua -- `size` entries centred on a member, clamped at both ends. O(log N + size).
-- KEYS[1] board settings hash, KEYS[2] board sorted set (of the period read), KEYS[3] records
-- ARGV[3] period kind and ARGV[4] UTC offset (minutes) the caller assumed for KEYS[2]
-- ARGV[1] member   ARGV[2] size, 0 for the board's page_size
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} (see above), else
--   {settings, total, size, start0 (-1 when the member is absent), range, records}
local settings = redis.call('HGETALL', KEYS[1])
if #settings == 0 then return false end
local pm = redis.call('HMGET', KEYS[1], 'period', 'timezone', 'retain')
if (pm[1] or 'none') ~= ARGV[3] or (pm[2] or '0') ~= ARGV[4] then
  -- the caller built KEYS[2] for other period settings: tell it the real ones
  return {'retry', pm[1] or 'none', pm[2] or '0', pm[3] or '1'}
end
local size = tonumber(ARGV[2])
if size == 0 then
  size = tonumber(redis.call('HGET', KEYS[1], 'page_size')) or 20
  if size < 1 or size > 100 then size = 20 end -- a damaged hash must not read the whole board
end
local total = redis.call('ZCARD', KEYS[2])
local rank = redis.call('ZRANK', KEYS[2], ARGV[1])
if not rank then return {settings, total, size, -1, {}, {}} end
local start = rank - math.floor(size / 2)
if start + size > total then start = total - size end
if start < 0 then start = 0 end
local range = redis.call('ZRANGE', KEYS[2], start, start + size - 1, 'WITHSCORES')
local ids = {}
for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
return {settings, total, size, start, range, redis.call('HMGET', KEYS[3], unpack(ids))}

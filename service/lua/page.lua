#!lua flags=no-writes
-- page.lua -- one page of a board, with its settings, total and records, in one round trip.
-- O(log N + size). Ascending stored order is rank order, so ZRANGE (not REV) reads it.
-- KEYS and ARGV[1..2] as prelude_read.lua; ARGV[3] page (1-based), ARGV[4] size (0: the board's)
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} (prelude), else
--   {settings (flat HGETALL), total, size, {member, stored, member, stored, ...}, {record|nil, ...}}
--@prelude
local size = page_size(ARGV[4])
local total = redis.call('ZCARD', KEYS[2])
local start = (tonumber(ARGV[3]) - 1) * size
local range, records = {}, {}
if start < total then
  range = redis.call('ZRANGE', KEYS[2], start, start + size - 1, 'WITHSCORES')
  local ids = {}
  for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
  records = redis.call('HMGET', KEYS[3], unpack(ids))
end
return {settings, total, size, range, records}

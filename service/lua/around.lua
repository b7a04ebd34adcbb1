#!lua flags=no-writes
-- around.lua -- `size` entries centred on a member, clamped at both ends. O(log N + size).
-- KEYS and ARGV[1..3] as prelude_read.lua; ARGV[4] member, ARGV[5] size (0: the board's)
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} (prelude), else
--   {settings, total, size, start0 (-1 when the member is absent), range, records}
--@prelude
local size = page_size(ARGV[5])
local total = redis.call('ZCARD', KEYS[2])
local rank = redis.call('ZRANK', KEYS[2], ARGV[4])
if not rank then return {settings, total, size, -1, {}, {}} end
local start = rank - math.floor(size / 2)
if start + size > total then start = total - size end
if start < 0 then start = 0 end
local range = redis.call('ZRANGE', KEYS[2], start, start + size - 1, 'WITHSCORES')
local ids = {}
for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
local records = {}
if KEYS[3] ~= KEYS[1] then records = redis.call('HMGET', KEYS[3], unpack(ids)) end
return {settings, total, size, start, range, records}

#!lua flags=no-writes
-- member.lua -- one member's stored score, rank and record, with the board settings. O(log N).
-- KEYS and ARGV[1..3] as prelude_read.lua; ARGV[4] member
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} (prelude), else
--   {settings, total, stored|nil, rank0|nil, record|nil}
--@prelude
local stored = redis.call('ZSCORE', KEYS[2], ARGV[4])
local rank = false
if stored then rank = redis.call('ZRANK', KEYS[2], ARGV[4]) end
local record = false
if KEYS[3] ~= KEYS[1] then record = redis.call('HGET', KEYS[3], ARGV[4]) end
return {settings, redis.call('ZCARD', KEYS[2]), stored, rank, record}

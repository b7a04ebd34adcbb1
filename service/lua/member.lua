#!lua flags=no-writes
-- member.lua -- one member's stored score, rank and record, with the board settings. O(log N).
-- KEYS[1] board settings hash, KEYS[2] board sorted set, KEYS[3] records hash
-- ARGV[1] member
-- Reply: nil when the board does not exist, else {settings, total, stored|nil, rank0|nil, record|nil}
local settings = redis.call('HGETALL', KEYS[1])
if #settings == 0 then return false end
local stored = redis.call('ZSCORE', KEYS[2], ARGV[1])
local rank = false
if stored then rank = redis.call('ZRANK', KEYS[2], ARGV[1]) end
return {settings, redis.call('ZCARD', KEYS[2]), stored, rank, redis.call('HGET', KEYS[3], ARGV[1])}

#!lua flags=no-writes
-- member.lua -- one member's stored score, rank and record, with the board settings. O(log N).
-- KEYS[1] board settings hash, KEYS[2] board sorted set (of the period read), KEYS[3] records
-- ARGV[2] period kind and ARGV[3] UTC offset (minutes) the caller assumed for KEYS[2]
-- ARGV[1] member
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} (see above), else {settings, total, stored|nil, rank0|nil, record|nil}
local settings = redis.call('HGETALL', KEYS[1])
if #settings == 0 then return false end
local pm = redis.call('HMGET', KEYS[1], 'period', 'timezone', 'retain')
if (pm[1] or 'none') ~= ARGV[2] or (pm[2] or '0') ~= ARGV[3] then
  -- the caller built KEYS[2] for other period settings: tell it the real ones
  return {'retry', pm[1] or 'none', pm[2] or '0', pm[3] or '1'}
end
local stored = redis.call('ZSCORE', KEYS[2], ARGV[1])
local rank = false
if stored then rank = redis.call('ZRANK', KEYS[2], ARGV[1]) end
return {settings, redis.call('ZCARD', KEYS[2]), stored, rank, redis.call('HGET', KEYS[3], ARGV[1])}

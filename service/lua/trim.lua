#!lua flags=allow-oom
-- trim.lua -- remove one chunk of a board's tail, for trimming to the top N or below a score.
-- O(log N + chunk): the caller repeats it until a chunk removes fewer than `chunk` members, so
-- other clients interleave between chunks. allow-oom: removing frees memory.
-- KEYS[1] board sorted set
-- ARGV[1] 'rank': remove ranks ARGV[2] (0-based) .. ARGV[2] + chunk - 1
--         'score': remove members whose stored value is >= ARGV[2] (the tail of the board)
-- ARGV[3] chunk
-- Reply: members removed
local chunk = tonumber(ARGV[3])
if ARGV[1] == 'rank' then
  local start = tonumber(ARGV[2])
  return redis.call('ZREMRANGEBYRANK', KEYS[1], start, start + chunk - 1)
end
local ids = redis.call('ZRANGE', KEYS[1], ARGV[2], '+inf', 'BYSCORE', 'LIMIT', 0, chunk)
if #ids == 0 then return 0 end
return redis.call('ZREM', KEYS[1], unpack(ids))

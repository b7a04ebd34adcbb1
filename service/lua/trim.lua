#!lua flags=allow-oom
-- trim.lua -- remove one chunk of a board's tail, for trimming to the top N or below a score.
-- O(log N + chunk): the caller repeats it until a chunk removes fewer than `chunk` members, so
-- other clients interleave between chunks. allow-oom: removing frees memory.
-- KEYS[1] board sorted set, KEYS[2] the board's settings hash (its exports: an export copying
-- the set sees the removed members as they were, prelude_export.lua)
-- ARGV[1] 'rank': remove ranks ARGV[2] (0-based) .. ARGV[2] + chunk - 1
--         'score': remove members whose stored value is >= ARGV[2] (the tail of the board)
-- ARGV[3] chunk
-- Reply: members removed
--@prelude export
local chunk = tonumber(ARGV[3])
local exports = redis.call('HGET', KEYS[2], 'exports')
local function note(pairs_)
  local before = {}
  for i = 1, #pairs_, 2 do before[pairs_[i]] = tonumber(pairs_[i + 1]) end
  export_note(KEYS[2], exports, KEYS[1], before)
end
if ARGV[1] == 'rank' then
  local start = tonumber(ARGV[2])
  if exports then note(redis.call('ZRANGE', KEYS[1], start, start + chunk - 1, 'WITHSCORES')) end
  return redis.call('ZREMRANGEBYRANK', KEYS[1], start, start + chunk - 1)
end
local got = redis.call('ZRANGE', KEYS[1], ARGV[2], '+inf', 'BYSCORE', 'LIMIT', 0, chunk, 'WITHSCORES')
if #got == 0 then return 0 end
if exports then note(got) end
local ids = {}
for i = 1, #got, 2 do ids[#ids + 1] = got[i] end
return redis.call('ZREM', KEYS[1], unpack(ids))

#!lua flags=allow-oom
--@script waits
-- trim.lua -- remove one chunk of a board's tail, for trimming to the top N or below a score.
-- O(log N + chunk): the caller repeats it until a chunk removes fewer than `chunk` members, so
-- other clients interleave between chunks. allow-oom: removing frees memory. The set's
-- distinct scores lose the keys the chunk took whole (prelude_dense.lua: a chunk is a run in
-- rank order, so only its two edge keys are counted). An export copying the set sees the
-- removed members as they were (prelude_export.lua).
-- KEYS[1] board sorted set, KEYS[2] its distinct scores, KEYS[3] board settings hash (its
-- tiebreak and score_layout give 2^T; its exports; track_updated_at), KEYS[4] the set's ids hash
-- (a `wide` board's removed members leave it), KEYS[5] its updated_at hash (removed members
-- leave it on a board that tracks it)
-- ARGV[1] 'rank': remove ranks ARGV[2] (0-based) .. ARGV[2] + chunk - 1
--         'score': remove members whose stored value is >= ARGV[2] (the tail of the board)
-- ARGV[3] chunk
-- Reply: members removed
--@prelude export
--@prelude dense
local chunk = tonumber(ARGV[3])
local range
if ARGV[1] == 'rank' then
  local start = tonumber(ARGV[2])
  range = redis.call('ZRANGE', KEYS[1], start, start + chunk - 1, 'WITHSCORES')
else
  range = redis.call('ZRANGE', KEYS[1], ARGV[2], '+inf', 'BYSCORE', 'LIMIT', 0, chunk, 'WITHSCORES')
end
if #range == 0 then return 0 end
local s = redis.call('HMGET', KEYS[3], 'tiebreak', 'exports', 'score_layout', 'track_updated_at')
if s[2] then
  local before = {}
  for i = 1, #range, 2 do before[range[i]] = tonumber(range[i + 1]) end
  export_note(KEYS[3], s[2], KEYS[1], before)
end
local ids = {}
for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
local removed = redis.call('ZREM', KEYS[1], unpack(ids))
local plen = member_prefix(s[1], s[3])
if plen > 0 then
  for i = 1, #ids do ids[i] = ids[i]:sub(plen + 1) end
  redis.call('HDEL', KEYS[4], unpack(ids))
end
if s[4] == '1' then redis.call('HDEL', KEYS[5], unpack(ids)) end
local base, spl = tie_base(s[1], s[3]), SUB_BYTES * sub_count(s[3])
if spl > 0 then
  dense_tuples(KEYS[1], KEYS[2], {}, tuples_of(range, spl))
else
  dense_cut(KEYS[1], KEYS[2], base, tonumber(range[2]), tonumber(range[#range]))
end
return removed

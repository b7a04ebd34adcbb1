#!lua flags=no-writes
--@script read-only
-- member.lua -- one member's stored score, rank and record, with the board settings. O(log N).
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] member
-- Reply: nil when the board does not exist, the prelude's {'retry', ...} or
--   {'dense_unavailable'}, else {settings, total, stored|nil, rank0|nil, record|nil, rank|nil,
--   updated_at|nil, set member|nil} (rank0 the 0-based ordinal position, rank the 1-based rank of
--   the type asked, updated_at ms since the epoch; the set member on a `wide` board, whose prefix
--   holds the sub-scores)
--@prelude
local sm = member_of(ARGV[5])
local stored = sm and redis.call('ZSCORE', KEYS[2], sm)
local rank0, rank = false, false
if stored then
  rank0 = redis.call('ZRANK', KEYS[2], sm)
  rank = rank_of(tonumber(stored), rank0, sm)
end
local record = false
if KEYS[3] ~= KEYS[1] then record = redis.call('HGET', KEYS[3], ARGV[5]) end
local updated = false
if stored and s.track_updated_at == '1' then
  updated = tonumber(redis.call('HGET', KEYS[6], ARGV[5]) or '') or false
end
return {settings, redis.call('ZCARD', KEYS[2]), stored, rank0, record, rank, updated,
        stored and plen > 0 and sm or false}

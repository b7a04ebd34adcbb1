#!lua flags=no-writes
--@script read-only
-- percentile.lua -- the member at the ordinal rank max(1, ceil(total * num / den)) (the caller
-- makes num/den of the percentile asked: (100 - P) / 100, exactly). O(log N).
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] num, ARGV[6] den (0 <= num <= den <= 10^6)
-- Reply: nil when the board does not exist, the prelude's {'retry', ...}, else {settings,
--   total, rank (0 on an empty board), member|nil, stored|nil}, and after a member on a board with
--   track_updated_at its time: {ms|false} (prelude_read.lua: times)
--@prelude
local total = redis.call('ZCARD', KEYS[2])
if total == 0 then return {settings, 0, 0} end
local rank = share(total, tonumber(ARGV[5]), tonumber(ARGV[6]))
if rank < 1 then rank = 1 end
local r = redis.call('ZRANGE', KEYS[2], rank - 1, rank - 1, 'WITHSCORES')
return times({settings, total, rank, r[1], r[2]}, nil, r[1] and {r[1]:sub(plen + 1)})

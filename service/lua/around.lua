#!lua flags=no-writes
--@script read-only
-- around.lua -- `size` entries centred on a member, clamped at both ends. O(log N + size).
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] member, ARGV[6] size (0: the board's)
-- Reply: nil when the board does not exist, the prelude's {'retry', ...} or
--   {'dense_unavailable'}, else {settings, total, size, start0 (-1 when the member is absent),
--   range, records, ranks}
--@prelude
local size = page_size(ARGV[6])
local total = redis.call('ZCARD', KEYS[2])
local sm = member_of(ARGV[5])
local rank = sm and redis.call('ZRANK', KEYS[2], sm)
if not rank then return times({settings, total, size, -1, {}, {}, {}}, 5) end
return window(rank, size, total)

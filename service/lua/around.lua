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
local rank = redis.call('ZRANK', KEYS[2], ARGV[5])
if not rank then return {settings, total, size, -1, {}, {}, {}} end
return window(rank, size, total)

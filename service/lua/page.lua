#!lua flags=no-writes
-- page.lua -- one page of a board, with its settings, total and records, in one round trip.
-- O(log N + size). Ascending stored order is rank order, so ZRANGE (not REV) reads it.
-- KEYS and ARGV[1..3] as prelude_read.lua; ARGV[4] page (1-based), ARGV[5] size (0: the board's)
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} (prelude), else
--   {settings (flat HGETALL), total, size, {member, stored, member, stored, ...}, {record|nil, ...}}
--@prelude
return page_reply(tonumber(ARGV[4]), page_size(ARGV[5]))

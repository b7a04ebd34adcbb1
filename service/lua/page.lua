#!lua flags=no-writes
--@script read-only
-- page.lua -- one page of a board, with its settings, total and records, in one round trip.
-- O(log N + size). Ascending stored order is rank order, so ZRANGE (not REV) reads it.
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] page (1-based), ARGV[6] size (0: the board's)
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} and
--   {'dense_unavailable'} (prelude), else {settings (flat HGETALL), total, size, {member,
--   stored, member, stored, ...}, {record|nil, ...}, ranks ({} for ordinal)}
--@prelude
return page_reply(tonumber(ARGV[5]), page_size(ARGV[6]))

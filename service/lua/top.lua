#!lua flags=no-writes
--@script read-only
-- top.lua -- the first ceil(total * num / den) members (the caller makes num/den of the percent
-- asked, exactly), at most 100 of them, with their ranks of the type asked. O(log N + 100).
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] num, ARGV[6] den (0 <= num <= den <= 10^6)
-- Reply: nil when the board does not exist, the prelude's {'retry', ...} or
--   {'dense_unavailable'}, else {settings, total, size (the entries sent, <= 100), range,
--   records, ranks, count (the uncapped number)}
--@prelude
local total = redis.call('ZCARD', KEYS[2])
local count = share(total, tonumber(ARGV[5]), tonumber(ARGV[6]))
local size = count < 100 and count or 100
local range, records = rows(0, size)
return times({settings, total, size, range, records, ranks(range, 0), count}, 4)

#!lua flags=allow-oom
--@script
-- sweep.lua -- one chunk of a periodic board's expiry: the sets of periods that are no longer
-- readable, found in the board's period index (never a keyspace scan), go with UNLINK and leave
-- the index. O(log N + chunk) for N listed sets, each key O(1) on Redis' main thread (a big set
-- is freed by the lazy-free thread). Board data carries no TTL: this, run by rankd, is how old
-- periods go. allow-oom: it frees memory, and must work exactly when memory is full. A period's
-- distinct scores (prelude_dense.lua) are listed with its set, under the same start, so they go
-- in the same chunks.
-- The caller computed the cut from the settings it read; they are checked here, so a process
-- whose view is stale (another one raised retain) never removes a period still readable.
-- Lock-protected across processes: the first chunk takes KEYS[3] with the caller's token (SET PX),
-- each chunk renews it, the last releases it; a sweep that finds another holder's lock stops
-- (that holder removes the same sets).
-- KEYS[1] board settings hash, KEYS[2] period index, KEYS[3] sweep lock
-- ARGV[1] period kind, ARGV[2] UTC offset (minutes), ARGV[3] retain: the settings of the cut
-- ARGV[4] the cut: the start (ms) of the oldest readable period; listed sets of periods that
-- started before it go   ARGV[5] lock token   ARGV[6] lock TTL (ms)   ARGV[7] chunk
-- Reply: {removed, more (1: a full chunk, call again)}, {'locked'}, or {'retry'} (the settings
-- differ from ARGV[1..3], or the board is gone: nothing done)
--@prelude defaults
local m = redis.call('HMGET', KEYS[1], 'period', 'timezone', 'retain')
if (m[1] or BOARD_PERIOD_DEFAULT) ~= ARGV[1] or (m[2] or BOARD_TIMEZONE_DEFAULT) ~= ARGV[2] or
   (m[3] or BOARD_RETAIN_DEFAULT) ~= ARGV[3] then
  return {'retry'}
end
local holder = redis.call('GET', KEYS[3])
if holder and holder ~= ARGV[5] then return {'locked'} end
redis.call('SET', KEYS[3], ARGV[5], 'PX', ARGV[6])
local chunk = tonumber(ARGV[7])
local old = redis.call('ZRANGE', KEYS[2], '-inf', '(' .. ARGV[4], 'BYSCORE', 'LIMIT', 0, chunk)
for i = 1, #old do redis.call('UNLINK', old[i]) end
if #old > 0 then redis.call('ZREM', KEYS[2], unpack(old)) end
if #old < chunk then redis.call('UNLINK', KEYS[3]) end
return {#old, #old < chunk and 0 or 1}

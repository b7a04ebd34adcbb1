#!lua flags=allow-oom
--@script waits
-- delete_member.lua -- remove one member from the current period's set (or the board's), and its
-- key from the set's distinct scores when no other member holds it (prelude_dense.lua). O(log N).
-- allow-oom: removing frees memory, and must work at maxmemory (a MULTI ... EXEC would not: at
-- maxmemory Redis refuses to queue any command of a transaction).
-- KEYS[1] board settings hash, KEYS[2] the set, KEYS[3] its distinct scores   ARGV[1] member
-- An export copying the set sees the member as it was (prelude_export.lua).
-- Reply: 1 removed, 0 no such member, -1 no such board
--@prelude export
--@prelude dense
local s = redis.call('HMGET', KEYS[1], 'tiebreak', 'exports')
local tiebreak, exports = s[1], s[2]
if not tiebreak and redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local stored = redis.call('ZSCORE', KEYS[2], ARGV[1])
if not stored then return 0 end
if exports then export_note(KEYS[1], exports, KEYS[2], {[ARGV[1]] = tonumber(stored)}) end
redis.call('ZREM', KEYS[2], ARGV[1])
local base = tie_base(tiebreak)
dense_update(KEYS[2], KEYS[3], base, {}, {[math.floor(tonumber(stored) / base)] = true})
return 1

#!lua flags=allow-oom
--@script waits
-- delete_member.lua -- remove one member from the current period's set (or the board's), and its
-- key from the set's distinct scores when no other member holds it (prelude_dense.lua). O(log N).
-- allow-oom: removing frees memory, and must work at maxmemory (a MULTI ... EXEC would not: at
-- maxmemory Redis refuses to queue any command of a transaction).
-- KEYS[1] board settings hash, KEYS[2] the set, KEYS[3] its distinct scores, KEYS[4] its ids
-- hash (a `wide` board's: the member leaves it), KEYS[5] its updated_at hash (a board that
-- tracks it: the member leaves it)   ARGV[1] member
-- An export copying the set sees the member as it was (prelude_export.lua).
-- Reply: 1 removed, 0 no such member, -1 no such board
--@prelude export
--@prelude dense
local s = redis.call('HMGET', KEYS[1], 'tiebreak', 'exports', 'score_layout', 'track_updated_at')
local tiebreak, exports = s[1], s[2]
if not tiebreak and redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local plen = member_prefix(tiebreak, s[3])
local sm = set_member(KEYS[4], plen, ARGV[1])
local stored = sm and redis.call('ZSCORE', KEYS[2], sm)
if not stored then return 0 end
if exports then export_note(KEYS[1], exports, KEYS[2], {[sm] = tonumber(stored)}) end
redis.call('ZREM', KEYS[2], sm)
if plen > 0 then redis.call('HDEL', KEYS[4], ARGV[1]) end
if s[4] == '1' then redis.call('HDEL', KEYS[5], ARGV[1]) end
local base, spl = tie_base(tiebreak, s[3]), SUB_BYTES * sub_count(s[3])
if spl > 0 then
  dense_tuples(KEYS[2], KEYS[3], {}, tuples_of({sm, stored}, spl))
else
  dense_update(KEYS[2], KEYS[3], base, {}, {[math.floor(tonumber(stored) / base)] = true})
end
return 1

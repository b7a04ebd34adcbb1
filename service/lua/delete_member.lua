#!lua flags=allow-oom
-- delete_member.lua -- remove one member from the current period's set (or the board's). O(log N).
-- allow-oom: removing frees memory, and must work at maxmemory (a MULTI ... EXEC would not: at
-- maxmemory Redis refuses to queue any command of a transaction).
-- KEYS[1] board settings hash, KEYS[2] the set   ARGV[1] member
-- An export copying the set sees the member as it was (prelude_export.lua).
-- Reply: 1 removed, 0 no such member, -1 no such board
--@prelude export
local exports = redis.call('HGET', KEYS[1], 'exports')
if not exports and redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
if exports then
  local old = redis.call('ZSCORE', KEYS[2], ARGV[1])
  if old then export_note(KEYS[1], exports, KEYS[2], {[ARGV[1]] = tonumber(old)}) end
end
return redis.call('ZREM', KEYS[2], ARGV[1])

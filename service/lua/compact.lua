--@script
-- compact.lua -- renumber one chunk of a full tie group, keeping its order (tiebreak first|last).
-- O(log N + chunk). The caller loops until a chunk returns fewer than `chunk` members.
-- Renumbering the i-th remaining member to start+i never raises a tie (first) or lowers it
-- (last), so the group's order holds after every chunk, even with writers in between. Every
-- member keeps its key, so the set's distinct scores (prelude_dense.lua) stay as they are.
-- KEYS[1] board sorted set, KEYS[2] the board's settings hash (its exports: an export copying
-- the set sees the renumbered members as they were, prelude_export.lua)
-- ARGV[1] lo (key * 2^T)   ARGV[2] tie cap   ARGV[3] tiebreak   ARGV[4] start   ARGV[5] chunk
-- Reply: members renumbered in this chunk.
--@prelude export
local z = KEYS[1]
local lo, cap, start, chunk = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local r
if ARGV[3] == 'first' then
  r = redis.call('ZRANGE', z, lo + start, lo + cap - 1, 'BYSCORE', 'LIMIT', 0, chunk, 'WITHSCORES')
else
  r = redis.call('ZRANGE', z, lo + cap - 1 - start, lo, 'BYSCORE', 'REV', 'LIMIT', 0, chunk,
                 'WITHSCORES')
end
local exports = redis.call('HGET', KEYS[2], 'exports')
if exports then
  local before = {}
  for i = 1, #r, 2 do before[r[i]] = tonumber(r[i + 1]) end
  export_note(KEYS[2], exports, z, before)
end
for i = 1, #r / 2 do
  local tie = ARGV[3] == 'first' and start + i - 1 or cap - 1 - start - (i - 1)
  redis.call('ZADD', z, lo + tie, r[2 * i - 1])
end
return #r / 2

-- compact.lua -- renumber one chunk of a full tie group, keeping its order (tiebreak first|last).
-- O(log N + chunk). The caller loops until a chunk returns fewer than `chunk` members.
-- Renumbering the i-th remaining member to start+i never raises a tie (first) or lowers it
-- (last), so the group's order holds after every chunk, even with writers in between. Every
-- member keeps its key, so the set's distinct scores (prelude_dense.lua) stay as they are.
-- KEYS[1] board sorted set
-- ARGV[1] lo (key * 2^T)   ARGV[2] tie cap   ARGV[3] tiebreak   ARGV[4] start   ARGV[5] chunk
-- Reply: members renumbered in this chunk.
local z = KEYS[1]
local lo, cap, start, chunk = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[4]), tonumber(ARGV[5])
local r
if ARGV[3] == 'first' then
  r = redis.call('ZRANGE', z, lo + start, lo + cap - 1, 'BYSCORE', 'LIMIT', 0, chunk)
  for i = 1, #r do redis.call('ZADD', z, lo + start + i - 1, r[i]) end
else
  r = redis.call('ZRANGE', z, lo + cap - 1 - start, lo, 'BYSCORE', 'REV', 'LIMIT', 0, chunk)
  for i = 1, #r do redis.call('ZADD', z, lo + cap - 1 - start - (i - 1), r[i]) end
end
return #r

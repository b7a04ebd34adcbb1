-- put_board.lua -- create or update a board's settings. O(1).
-- KEYS[1] board settings hash, KEYS[2] the board's current sorted set, KEYS[3] registry set,
-- KEYS[4..] the sets of its other readable periods (all of them count for "non-empty")
-- ARGV[1] board name, then eight values, '' where the request left the field out:
--   ARGV[2] order  ARGV[3] tiebreak  ARGV[4] score_decimals  ARGV[5] period  ARGV[6] timezone
--   ARGV[7] page_size  ARGV[8] page_ttl_ms  ARGV[9] retain
-- ARGV[10..17] the defaults of the same eight fields (used when creating, or for a field an
-- older board lacks). ARGV[18] a new, unique board generation (stored when creating).
-- The first five shape the stored data; changing one on a non-empty board is refused.
-- Reply {created (0|1), settings (flat HGETALL), total}, or {-1, field} for such a change.
local names = {'order', 'tiebreak', 'score_decimals', 'period', 'timezone', 'page_size',
               'page_ttl_ms', 'retain'}
local n = #names
local exists = redis.call('EXISTS', KEYS[1]) == 1
if exists then
  local nonempty = redis.call('ZCARD', KEYS[2]) > 0
  for i = 4, #KEYS do
    if not nonempty and redis.call('ZCARD', KEYS[i]) > 0 then nonempty = true end
  end
  if nonempty then
    for i = 1, 5 do
      local v = ARGV[i + 1]
      local cur = redis.call('HGET', KEYS[1], names[i]) or ARGV[i + 1 + n]
      if v ~= '' and v ~= cur then return {-1, names[i]} end
    end
  end
  for i = 1, n do
    if ARGV[i + 1] ~= '' then redis.call('HSET', KEYS[1], names[i], ARGV[i + 1]) end
  end
else
  for i = 1, n do
    local v = ARGV[i + 1]
    if v == '' then v = ARGV[i + 1 + n] end
    redis.call('HSET', KEYS[1], names[i], v)
  end
  redis.call('HSET', KEYS[1], 'gen', ARGV[2 + 2 * n])
  redis.call('SADD', KEYS[3], ARGV[1])
end
return {exists and 0 or 1, redis.call('HGETALL', KEYS[1]), redis.call('ZCARD', KEYS[2])}

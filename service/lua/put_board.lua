-- put_board.lua -- create or update a board's settings. O(1).
-- KEYS[1] board settings hash, KEYS[2] board sorted set, KEYS[3] registry set
-- ARGV[1] board name, then five values, '' where the request left the field out:
-- ARGV[2] order  ARGV[3] tiebreak  ARGV[4] score_decimals  ARGV[5] page_size  ARGV[6] page_ttl_ms
-- ARGV[7..11] the defaults for the same five fields (used when creating).
-- ARGV[12] a new, unique board generation (stored when creating).
-- Reply {created (0|1), settings (flat HGETALL), total}, or {-1, field} when a layout field
-- (order, tiebreak, score_decimals) would change on a non-empty board.
local names = {'order', 'tiebreak', 'score_decimals', 'page_size', 'page_ttl_ms'}
local exists = redis.call('EXISTS', KEYS[1]) == 1
if exists then
  if redis.call('ZCARD', KEYS[2]) > 0 then
    for i = 1, 3 do
      local v = ARGV[i + 1]
      if v ~= '' and v ~= redis.call('HGET', KEYS[1], names[i]) then return {-1, names[i]} end
    end
  end
  for i = 1, 5 do
    if ARGV[i + 1] ~= '' then redis.call('HSET', KEYS[1], names[i], ARGV[i + 1]) end
  end
else
  for i = 1, 5 do
    local v = ARGV[i + 1]
    if v == '' then v = ARGV[i + 6] end
    redis.call('HSET', KEYS[1], names[i], v)
  end
  redis.call('HSET', KEYS[1], 'gen', ARGV[12])
  redis.call('SADD', KEYS[3], ARGV[1])
end
return {exists and 0 or 1, redis.call('HGETALL', KEYS[1]), redis.call('ZCARD', KEYS[2])}

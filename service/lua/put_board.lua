#!lua flags=allow-oom
--@script waits
-- put_board.lua -- change an existing board's settings. O(1), plus one UNLINK (O(1) on the main
-- thread) per period set (and its distinct scores) it lets go of: at most 3 * PERIOD_RETAIN_MAX +
-- 3 named keys, and the period index's keys on a layout change. allow-oom: a settings change keeps or frees memory, so
-- it works at maxmemory (a new board grows memory: create_board.lua, which Redis refuses there).
-- KEYS[1] settings hash, KEYS[2] the set of the current period (or of the board), KEYS[3] the
-- period index, KEYS[4 .. 3+ARGV[13]] the sets of the past periods both the current and the new
-- retain keep readable, KEYS[4+ARGV[13] ..] the sets of the periods only one of them keeps
-- (dropped by a lower retain, or shown again by a higher one: emptied either way, so a period
-- that stopped being readable never comes back), each followed by its distinct scores
-- (prelude_dense.lua). All named under the current period settings.
-- ARGV[1] period kind, ARGV[2] UTC offset, ARGV[3] retain: the settings the keys were named
-- from ({'retry'} when the hash holds others)
-- ARGV[4..11] order tiebreak score_decimals period timezone page_size page_ttl_ms retain, ''
-- where the request left the field out   ARGV[12] a new, unique board generation
-- ARGV[13] how many kept past sets follow KEYS[3]   ARGV[14] the start (ms) of the oldest period
-- both retains keep readable: the index's sets of older periods are swept here (a chunk of 64)
-- ARGV[15] max_members ('' left out; 0 no limit): the board is cut to it by the writes that
-- follow (write.lua, bounded per call), never here   ARGV[16] score_layout ('' left out): shapes
-- the stored data like the first five   ARGV[17] score_format ('' left out; display only)
-- ARGV[18] track_updated_at ('1', '0'; '' left out): shapes the stored data too (a board that
-- starts keeping times has none for the members it holds; one that stops would keep stale ones)
-- (The emptied periods' sets are each followed by their distinct scores, their ids hash and
-- their updated_at hash.)
-- The first five fields shape the stored data: changing one is refused while the sets that stay
-- readable (KEYS[2], the kept ones) have members; allowed, it UNLINKs every set in the index,
-- so no set written under the old layout or periods can ever be read under the new ones.
-- Reply {0, settings (flat HGETALL), total}, {-1, field} for a refused change, {'absent'} (no
-- such board: create it), {'retry'}
--@prelude defaults
local names = {'order', 'tiebreak', 'score_decimals', 'period', 'timezone', 'page_size',
               'page_ttl_ms', 'retain'}
local defaults = {BOARD_ORDER_DEFAULT, BOARD_TIEBREAK_DEFAULT, BOARD_DECIMALS_DEFAULT,
                  BOARD_PERIOD_DEFAULT, BOARD_TIMEZONE_DEFAULT, BOARD_PAGE_SIZE_DEFAULT,
                  BOARD_PAGE_TTL_MS_DEFAULT, BOARD_RETAIN_DEFAULT}
local flat = redis.call('HGETALL', KEYS[1])
if #flat == 0 then return {'absent'} end
local s = {}
for i = 1, #flat, 2 do s[flat[i]] = flat[i + 1] end
if (s.period or BOARD_PERIOD_DEFAULT) ~= ARGV[1] or
   (s.timezone or BOARD_TIMEZONE_DEFAULT) ~= ARGV[2] or
   (s.retain or BOARD_RETAIN_DEFAULT) ~= ARGV[3] then
  return {'retry'}
end
local nkeep = tonumber(ARGV[13])
local shaping = false
for i = 1, 5 do
  local v = ARGV[i + 3]
  if not shaping and v ~= '' and v ~= (s[names[i]] or defaults[i]) then shaping = names[i] end
end
if not shaping and ARGV[16] and ARGV[16] ~= '' and
   ARGV[16] ~= (s.score_layout or BOARD_SCORE_LAYOUT_DEFAULT) then
  -- the sub-score columns ride in the same field ('wide:da', score_codec.h)
  local was = s.score_layout or BOARD_SCORE_LAYOUT_DEFAULT
  shaping = (ARGV[16]:find(':') or was:find(':')) and 'subscores' or 'score_layout'
end
if not shaping and ARGV[18] and ARGV[18] ~= '' and
   ARGV[18] ~= (s.track_updated_at or BOARD_TRACK_UPDATED_AT_DEFAULT) then
  shaping = 'track_updated_at'
end
if shaping then
  for i = 2, 3 + nkeep do
    if i ~= 3 and redis.call('EXISTS', KEYS[i]) == 1 then return {-1, shaping} end
  end
end
for i = 1, 8 do
  if ARGV[i + 3] ~= '' then redis.call('HSET', KEYS[1], names[i], ARGV[i + 3]) end
end
if ARGV[15] ~= '' then redis.call('HSET', KEYS[1], 'max_members', ARGV[15]) end
if ARGV[16] and ARGV[16] ~= '' then redis.call('HSET', KEYS[1], 'score_layout', ARGV[16]) end
if ARGV[17] and ARGV[17] ~= '' then redis.call('HSET', KEYS[1], 'score_format', ARGV[17]) end
if ARGV[18] and ARGV[18] ~= '' then redis.call('HSET', KEYS[1], 'track_updated_at', ARGV[18]) end
for i = 4 + nkeep, #KEYS do redis.call('UNLINK', KEYS[i]) end
-- a set an older rankd wrote carries a TTL (evictable, and cut short by a higher retain)
for i = 4, 3 + nkeep do redis.call('PERSIST', KEYS[i]) end
if shaping then
  local all = redis.call('ZRANGE', KEYS[3], 0, 999) -- as delete_board.lua: a bound, not a cut
  for i = 1, #all do redis.call('UNLINK', all[i]) end
  redis.call('UNLINK', KEYS[3])
else
  local old = redis.call('ZRANGE', KEYS[3], '-inf', '(' .. ARGV[14], 'BYSCORE', 'LIMIT', 0, 64)
  for i = 1, #old do redis.call('UNLINK', old[i]) end
  if #old > 0 then redis.call('ZREM', KEYS[3], unpack(old)) end
end
-- a new generation retires every cached page: after a layout change, and when a higher retain
-- shows periods again (a page cached while one was readable must not show its old members).
-- A layout change also begins a new life: no idempotency record of the old one is answered
-- again (write.lua), so a key used before it is a new request
local retain = ARGV[11] ~= '' and ARGV[11] or ARGV[3]
if shaping then
  redis.call('HSET', KEYS[1], 'gen', ARGV[12], 'life', ARGV[12])
elseif ARGV[1] ~= 'none' and tonumber(retain) > tonumber(ARGV[3]) then
  redis.call('HSET', KEYS[1], 'gen', ARGV[12])
end
return {0, redis.call('HGETALL', KEYS[1]), redis.call('ZCARD', KEYS[2])}

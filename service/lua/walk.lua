#!lua flags=no-writes
--@script read-only
-- walk.lua -- a page of a board by score range and/or from a cursor's edge item, with global
-- ranks. O(log N + size): every position is a ZCOUNT, or a binary search over the members that
-- share the edge's stored value (ZRANGE i i: O(log^2 N) at worst, on tiebreak id boards).
-- KEYS and ARGV[1..4] as prelude_read.lua
-- ARGV[5] order, ARGV[6] tiebreak, ARGV[7] score_decimals: the layout the range's keys were
--   made under (checked when a bound is given); ARGV[8] lo, ARGV[9] hi: the range as keys
--   (inclusive, lo the better end; '' for no bound)
-- ARGV[10] mode: 'page' (ARGV[11] the 1-based page within the range), 'after' or 'before' (the
--   edge: ARGV[12] its stored value, ARGV[13] its id; ARGV[14] the generation the cursor was
--   made under), or 'check': a bound was refused under ARGV[5..7], is that the board's layout?
--   ARGV[15] size (0: the board's), ARGV[16] the edge's tie position on a `wide` board ('' none),
--   ARGV[17] score_layout (of the layout the range's keys were made under, with ARGV[5..7])
--   ARGV[18] the edge's sub-score bytes on a board with sub-scores ('' none)
-- Reply: nil when the board does not exist, the prelude's {'retry', ...} or
--   {'dense_unavailable'}, {'layout', settings} (judge the bounds again under these),
--   {'refused', settings} ('check': the layout held, the refusal stands),
--   {'expired'} (a new generation since the cursor), {'invalid'} (a cursor of this generation
--   whose edge has another shape than the board's set members: sub-score bytes of other columns
--   than the board's, which rankd never makes; forged), else {settings, total, size, start0, range,
--   records, ranks, first0, end0} with [first0, end0) the range's positions on the board
--@prelude
local mode, bounded = ARGV[10], ARGV[8] ~= '' or ARGV[9] ~= '' or ARGV[10] == 'check'
if bounded and ((s.order or BOARD_ORDER_DEFAULT) ~= ARGV[5] or
                (s.tiebreak or BOARD_TIEBREAK_DEFAULT) ~= ARGV[6] or
                (s.score_decimals or BOARD_DECIMALS_DEFAULT) ~= ARGV[7] or
                (s.score_layout or BOARD_SCORE_LAYOUT_DEFAULT) ~= ARGV[17]) then
  return {'layout', settings}
end
if mode == 'check' then return {'refused', settings} end
if mode ~= 'page' and (s.gen or '0') ~= ARGV[14] then return {'expired'} end
-- a board's layout is fixed within a generation, so the edge of a cursor rankd made for it has
-- exactly the sub-score bytes of its set members
if mode ~= 'page' and #ARGV[18] ~= spl then return {'invalid'} end
local z, size = KEYS[2], page_size(ARGV[15])
local total = redis.call('ZCARD', z)
local first, stop = 0, total
if ARGV[8] ~= '' then first = redis.call('ZCOUNT', z, '-inf', '(' .. key_text(tonumber(ARGV[8]) * base)) end
if ARGV[9] ~= '' then
  stop = redis.call('ZCOUNT', z, '-inf', '(' .. key_text((tonumber(ARGV[9]) + 1) * base))
end
if stop < first then stop = first end
-- a < b in byte order (Redis orders equal scores by memcmp; Lua's < follows the locale)
local function before(a, b)
  for i = 1, math.min(#a, #b) do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x < y end
  end
  return #a < #b
end
-- the 0-based position of the first member ordered after the edge (strictly, or at or after)
local function position(stored, id, strictly)
  local lo = redis.call('ZCOUNT', z, '-inf', '(' .. stored)
  local hi = lo + redis.call('ZCOUNT', z, stored, stored)
  while lo < hi do
    local mid = math.floor((lo + hi) / 2)
    local x = redis.call('ZRANGE', z, mid, mid)[1]
    if before(x, id) or (strictly and x == id) then lo = mid + 1 else hi = mid end
  end
  return lo
end
-- the edge's set member: on a wide board its sub-score bytes, its tie position's bytes (tiebreak
-- first|last), then its id
local edge = ARGV[13]
if plen > 0 and mode ~= 'page' then
  local sub = spl > 0 and ARGV[18] or ''
  edge = sub .. (plen > spl and tie_bytes(tonumber(ARGV[16]) or 0) or '') .. ARGV[13]
end
local start, count
if mode == 'page' then
  start = first + (tonumber(ARGV[11]) - 1) * size
  count = math.min(size, stop - start)
elseif mode == 'after' then
  start = math.max(position(ARGV[12], edge, true), first)
  count = math.min(size, stop - start)
else
  local e = math.min(position(ARGV[12], edge, false), stop)
  start = math.max(e - size, first)
  count = e - start
end
local range, records = rows(start, count)
return times({settings, total, size, start, range, records, ranks(range, start), first, stop}, 5)

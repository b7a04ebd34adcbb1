-- prelude_layout.lua -- the stored-value layout and the rank types, as every script that needs
-- them shares them, put in place of a "--@prelude layout" line at build time (Makefile).
-- stored = key * 2^T + tie (service/score_codec.h, schema/score-layout.md): T = 21
-- (SCORE_TIE_BITS) for tiebreak first|last on a `packed` board, 0 for tiebreak id and on a `wide`
-- board; a smaller key is a better score.
local TIE_BASE = 2097152
-- 2^T of a board's tiebreak and score_layout (the settings' fields, nil: the defaults)
local function tie_base(tiebreak, layout)
  if tiebreak == 'id' or layout == 'wide' then return 1 end
  return TIE_BASE
end
-- The `wide` layout (schema/score-layout.md): the stored value is the key, and on tiebreak
-- first|last the set member is the entry's tie position, 8 bytes big-endian, then the id, so
-- Redis orders equal keys by tie position. The set's ids hash (P:{board}:ids[:<period>]) maps
-- id -> those 8 bytes, so a member is found by id in O(1) + O(log N).
local WIDE_TIE_BYTES = 8
-- the bytes a set member holds before its id: 8 on a wide board with tiebreak first|last, else 0
local function member_prefix(tiebreak, layout)
  if layout == 'wide' and tiebreak ~= 'id' then return WIDE_TIE_BYTES end
  return 0
end
-- 0 <= t < 2^53 as 8 bytes big-endian (every step an exact integer below 2^53)
local function tie_bytes(t)
  local hi = math.floor(t / 4294967296)
  local lo = t - hi * 4294967296
  return string.char(math.floor(hi / 16777216) % 256, math.floor(hi / 65536) % 256,
                     math.floor(hi / 256) % 256, hi % 256, math.floor(lo / 16777216) % 256,
                     math.floor(lo / 65536) % 256, math.floor(lo / 256) % 256, lo % 256)
end
-- the tie position of a set member's first 8 bytes
local function tie_of(m)
  local t = 0
  for i = 1, WIDE_TIE_BYTES do t = t * 256 + m:byte(i) end
  return t
end
-- the set member of `id` (plen: member_prefix) through the ids hash `ih`; false when absent
local function set_member(ih, plen, id)
  if plen == 0 then return id end
  local p = redis.call('HGET', ih, id)
  return p and p .. id or false
end
-- a key or stored value (an integer below 2^53 in magnitude) as exact text; 0, never -0
local function key_text(v)
  if v == 0 then return '0' end
  return string.format('%d', v) -- exact for these integers, and about half the cost of '%.17g'
end
-- The 1-based rank of a member with stored value `stored` (a number) at 0-based position r0 of
-- set z, whose distinct keys are the side set d, by rank type `kind` (README, "Rank types"):
-- 'ordinal' r0 + 1; 'competition' 1 + the members with a strictly better key (ZCOUNT of the
-- stored values below the key's band); 'dense' 1 + the distinct better keys (ZCOUNT of d).
-- O(log N). `memo` (a table, may be nil) keeps the answers by key for the members that share one.
local function rank_in(z, d, base, kind, stored, r0, memo)
  if kind ~= 'competition' and kind ~= 'dense' then return r0 + 1 end
  local key = math.floor(stored / base)
  local r = memo and memo[key]
  if r then return r end
  if kind == 'competition' then
    r = redis.call('ZCOUNT', z, '-inf', '(' .. key_text(key * base)) + 1
  else
    r = redis.call('ZCOUNT', d, '-inf', '(' .. key_text(key)) + 1
  end
  if memo then memo[key] = r end
  return r
end
-- 1 when a dense rank of set z can be read: its side set d exists, or z is empty. A set written
-- before rankd kept distinct scores has members and no side set.
local function dense_readable(z, d)
  return redis.call('EXISTS', d) == 1 or redis.call('EXISTS', z) == 0
end

-- prelude_layout.lua -- the stored-value layout and the rank types, as every script that needs
-- them shares them, put in place of a "--@prelude layout" line at build time (Makefile).
-- stored = key * 2^T + tie (service/score_codec.h, schema/score-layout.md): T = 21
-- (SCORE_TIE_BITS) for tiebreak first|last on a `packed` board, 0 for tiebreak id and on a `wide`
-- board; a smaller key is a better score.
local TIE_BASE = 2097152
-- 2^T of a board's tiebreak and score_layout (the settings' fields, nil: the defaults)
local function tie_base(tiebreak, layout)
  if tiebreak == 'id' or (layout and layout:sub(1, 4) == 'wide') then return 1 end
  return TIE_BASE
end
-- A board with sub-scores is `wide` and its score_layout field names the columns: 'wide:' and
-- a letter per column, 'd' desc or 'a' asc ('wide:da'; score_codec.h). Each column is 8 bytes of
-- the set member before the tie position: the column key (-v on desc, v on asc: a smaller key
-- ranks first) plus 2^63, big-endian, so Redis orders equal scores by the sub-scores.
local SUB_BYTES = 8
-- the sub-score columns of a score_layout field (0 without)
local function sub_count(layout)
  if layout and layout:sub(1, 5) == 'wide:' then return #layout - 5 end
  return 0
end
-- The `wide` layout (schema/score-layout.md): the stored value is the key, and on tiebreak
-- first|last the set member is the entry's tie position, 8 bytes big-endian, then the id, so
-- Redis orders equal keys by tie position. The set's ids hash (P:{board}:ids[:<period>]) maps
-- id -> those 8 bytes, so a member is found by id in O(1) + O(log N).
local WIDE_TIE_BYTES = 8
-- the bytes a set member holds before its id: 8 on a wide board with tiebreak first|last, else 0
local function member_prefix(tiebreak, layout)
  local p = SUB_BYTES * sub_count(layout)
  if layout and layout:sub(1, 4) == 'wide' and tiebreak ~= 'id' then p = p + WIDE_TIE_BYTES end
  return p
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
-- the column keys of the first `nsub` columns of a set member (or of its prefix) as numbers
local function sub_keys(m, nsub)
  local ck = {}
  for c = 0, nsub - 1 do
    local hi, lo = 0, 0
    for i = 1, 4 do hi = hi * 256 + m:byte(c * SUB_BYTES + i) end
    for i = 5, 8 do lo = lo * 256 + m:byte(c * SUB_BYTES + i) end
    ck[c + 1] = (hi - 2147483648) * 4294967296 + lo
  end
  return ck
end
-- the bytes of column keys (|k| < 2^53: every step exact)
local function sub_bytes(ck)
  local out = {}
  for c = 1, #ck do
    local hi = math.floor(ck[c] / 4294967296)
    local lo = ck[c] - hi * 4294967296
    hi = hi + 2147483648
    out[c] = string.char(math.floor(hi / 16777216) % 256, math.floor(hi / 65536) % 256,
                         math.floor(hi / 256) % 256, hi % 256, math.floor(lo / 16777216) % 256,
                         math.floor(lo / 65536) % 256, math.floor(lo / 256) % 256, lo % 256)
  end
  return table.concat(out)
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
-- a < b, byte by byte, for strings of one length (Lua's `<` follows the server's locale)
local function bytes_lt(a, b)
  for i = 1, #a do
    local x, y = a:byte(i), b:byte(i)
    if x ~= y then return x < y end
  end
  return false
end
-- A sub-score board's tuple (key, sp: the set member's sub-score bytes). The 0-based position
-- in z of the first member of the tuple or after it among the members of that key, and whether
-- one holds the tuple: a binary search of the key's members (member bytes order them by their
-- sub-scores), O(log N * log g) for g members of the key. `upto` (may be nil): a position known
-- to hold the tuple, which bounds the search.
local function tuple_first(z, key, sp, upto)
  local kt = key_text(key)
  local lo = redis.call('ZCOUNT', z, '-inf', '(' .. kt)
  local hi = upto and upto + 1 or lo + redis.call('ZCOUNT', z, kt, kt)
  local a, b = lo, hi
  while a < b do
    local mid = math.floor((a + b) / 2)
    if bytes_lt(redis.call('ZRANGE', z, mid, mid)[1]:sub(1, #sp), sp) then a = mid + 1 else b = mid end
  end
  if a >= hi then return a, false end
  return a, redis.call('ZRANGE', z, a, a)[1]:sub(1, #sp) == sp
end
-- The distinct scores of a sub-score board's set are its distinct tuples: the side set's member
-- is sp .. the key's text, its score the key (prelude_dense.lua).
local function tuple_text(key, sp) return sp .. key_text(key) end
-- The 1-based rank of a member with stored value `stored` (a number) at 0-based position r0 of
-- set z, whose distinct keys are the side set d, by rank type `kind` (README, "Rank types"):
-- 'ordinal' r0 + 1; 'competition' 1 + the members with a strictly better key (ZCOUNT of the
-- stored values below the key's band); 'dense' 1 + the distinct better keys (ZCOUNT of d).
-- O(log N). `memo` (a table, may be nil) keeps the answers by key for the members that share one.
-- On a sub-score board `sp` is the member's sub-score bytes (nil elsewhere): equal tuples tie.
local function rank_in(z, d, base, kind, stored, r0, memo, sp)
  if kind ~= 'competition' and kind ~= 'dense' then return r0 + 1 end
  local key = math.floor(stored / base)
  local mk = sp and tuple_text(key, sp) or key
  local r = memo and memo[mk]
  if r then return r end
  if sp and kind == 'competition' then
    r = tuple_first(z, key, sp, r0) + 1
  elseif sp then
    r = (redis.call('ZRANK', d, mk) or 0) + 1
  elseif kind == 'competition' then
    r = redis.call('ZCOUNT', z, '-inf', '(' .. key_text(key * base)) + 1
  else
    r = redis.call('ZCOUNT', d, '-inf', '(' .. key_text(key)) + 1
  end
  if memo then memo[mk] = r end
  return r
end
-- 1 when a dense rank of set z can be read: its side set d exists, or z is empty. A set written
-- before rankd kept distinct scores has members and no side set.
local function dense_readable(z, d)
  return redis.call('EXISTS', d) == 1 or redis.call('EXISTS', z) == 0
end

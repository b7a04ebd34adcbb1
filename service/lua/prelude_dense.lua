-- prelude_dense.lua -- the distinct scores of a set, kept by every script that changes the set,
-- put in place of a "--@prelude dense" line at build time (Makefile).
-- A board's sorted set Z (P:{board}:z[:<period>]) has a side set D (P:{board}:dense[:<period>]):
-- member = a key (stored // 2^T) as exact text, score = that key; D holds exactly the keys some
-- member of Z holds, so a dense rank is 1 + ZCOUNT D -inf (key. No reference counts: Z counts the
-- members of a key itself (ZCOUNT of the key's band of stored values, O(log N)), so a count can
-- never drift. D exists exactly when Z does, except for a Z written before rankd kept D: such a
-- set keeps no D until it is empty again (writes start D only with Z, dense_state), and its dense
-- ranks are refused (dense_readable).
--@prelude layout

-- Whether D is kept for Z, asked before the script's first change of Z: 'kept' (D exists), 'new'
-- (Z is empty: this script starts both) or false (Z was written before D was kept).
local function dense_state(z, d)
  if redis.call('EXISTS', d) == 1 then return 'kept' end
  if redis.call('EXISTS', z) == 0 then return 'new' end
  return false
end

-- After members of Z moved: `held` the keys (key -> true, or key -> its text) that moved members
-- hold now, `left` the keys they left. D gains the held keys and loses the left ones no member
-- holds any more (ZCOUNT of the key's band in Z). base = 2^T. `known` (may be nil): held keys
-- some member held before the change, so D has them already. O(k log N) for k keys, in at most
-- 2 + k calls.
local function dense_update(z, d, base, held, left, known)
  local adds, gone = {}, {}
  for key, text in pairs(held) do
    if not (known and known[key]) then
      if text == true then text = key_text(key) end
      adds[#adds + 1] = text
      adds[#adds + 1] = text
    end
  end
  if #adds > 0 then redis.call('ZADD', d, unpack(adds)) end
  for key in pairs(left) do
    if not held[key] then
      local lo = key * base
      if redis.call('ZCOUNT', z, key_text(lo), key_text(lo + base - 1)) == 0 then
        gone[#gone + 1] = key_text(key)
      end
    end
  end
  if #gone > 0 then redis.call('ZREM', d, unpack(gone)) end
end

-- After a run of Z in rank order was removed whole, from stored value `first` to `last`
-- (numbers): the keys strictly between them go (every member holding one was in the run), the
-- two edge keys are checked. O(log N + the keys removed), in at most 4 calls.
local function dense_cut(z, d, base, first, last)
  local kf, kl = math.floor(first / base), math.floor(last / base)
  if kl > kf + 1 then
    redis.call('ZREMRANGEBYSCORE', d, '(' .. key_text(kf), '(' .. key_text(kl))
  end
  dense_update(z, d, base, {}, {[kf] = true, [kl] = true})
end
-- A sub-score board's D holds its distinct tuples (tuple_text, prelude_layout.lua). After
-- members moved: `held` and `left` map tuple text -> {key, sp}: D gains the held tuples and
-- loses the left ones no member holds any more (tuple_first). O(k log N * log g) for k tuples.
local function dense_tuples(z, d, held, left)
  local adds, gone = {}, {}
  for t, v in pairs(held) do
    adds[#adds + 1] = key_text(v[1])
    adds[#adds + 1] = t
  end
  if #adds > 0 then redis.call('ZADD', d, unpack(adds)) end
  for t, v in pairs(left) do
    if not held[t] then
      local _, has = tuple_first(z, v[1], v[2])
      if not has then gone[#gone + 1] = t end
    end
  end
  if #gone > 0 then redis.call('ZREM', d, unpack(gone)) end
end
-- The tuples of a flat {set member, stored, ...} (removed members) for dense_tuples' `left`.
local function tuples_of(range, spl)
  local t = {}
  for i = 1, #range, 2 do
    local key, sp = tonumber(range[i + 1]), range[i]:sub(1, spl)
    t[tuple_text(key, sp)] = {key, sp}
  end
  return t
end

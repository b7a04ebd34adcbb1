-- prelude_subscores.lua -- write.lua's part of the sub-scores (prelude_layout.lua's sub_count,
-- sub_keys, sub_bytes; schema/score-layout.md), put in place of a "--@prelude subscores" line at
-- build time (Makefile). An entry's op argument is the op, then for an entry with sub-scores ':'
-- and the sub-scores as the client sent them, comma-separated integers ('set:3,-120'); the
-- caller judged them (count, |v| <= 2^53 - 1). A board's tuple is (key, column keys): a smaller
-- key ranks first, then smaller column keys in column order.
local SUB_ABS_MAX = 9007199254740991

-- The op of an entry argument and its sub-score text ('' none).
local function entry_op(arg)
  if arg == 'set' or arg == 'best' or arg == 'incr' then return arg, '' end
  local c = arg:find(':', 1, true)
  if not c then return arg, '' end
  return arg:sub(1, c - 1), arg:sub(c + 1)
end

-- The column keys of sub-score text under a score_layout field's directions ('wide:da').
local function sub_given(text, layout)
  local ck, c = {}, 0
  for v in text:gmatch('[^,]+') do
    c = c + 1
    local n = tonumber(v)
    ck[c] = layout:sub(5 + c, 5 + c) == 'a' and n or -n
  end
  return ck
end

-- -1, 0, 1: tuple (ka, a) before, equal to, after (kb, b) in rank order
local function tuple_cmp(ka, a, kb, b)
  if ka ~= kb then return ka < kb and -1 or 1 end
  for c = 1, #a do
    if a[c] ~= b[c] then return a[c] < b[c] and -1 or 1 end
  end
  return 0
end

-- The result of an entry on a sub-score board: key and column keys, or key and false when a
-- sub-score would leave +-(2^53 - 1) (incr). set: as sent; best: the better tuple; incr: the
-- score as result_key does, the sub-scores added element-wise (from 0 for a new member).
-- `key` is result_key's answer for the score alone; old/oldck: the member's tuple (nil none).
local function sub_result(op, key, arg, oldkey, oldck, given)
  if op == 'best' then
    if oldkey and tuple_cmp(oldkey, oldck, arg, given) <= 0 then return oldkey, oldck end
    return arg, given
  elseif op == 'incr' then
    local ck = {}
    for c = 1, #given do
      ck[c] = (oldck and oldck[c] or 0) + given[c]
      if ck[c] > SUB_ABS_MAX or ck[c] < -SUB_ABS_MAX then return key, false end
    end
    return key, ck
  end
  return key, given
end

-- A stored value in a write's reply (write.lua's result values): on a sub-score board (ck the
-- member's column keys) {stored, column keys...}, so the reply gives the tuple stored; else
-- `stored` itself (nil none).
local function sub_stored(stored, ck)
  if not stored or not ck then return stored end
  local out = {stored}
  for c = 1, #ck do out[c + 1] = ck[c] end
  return out
end

-- After a write's ZADD on a sub-score board: the distinct tuples (prelude_dense.lua's
-- dense_tuples) gain the tuples the written members hold now (`adds`, the pairs ZADD applied;
-- wide.id maps each set member to its id) and lose those they left that no member holds.
local function sub_dense(z, d, plan, adds, wide)
  local held, left = {}, {}
  for k = 1, #adds, 2 do
    local sp = adds[k + 1]:sub(1, plan.spl)
    held[tuple_text(adds[k], sp)] = {adds[k], sp}
    local id = wide.id[adds[k + 1]]
    local sm0, v0 = plan.sm0[id], plan.cur0[id]
    if sm0 and v0 then
      local sp0 = sm0:sub(1, plan.spl)
      left[tuple_text(v0, sp0)] = {v0, sp0}
    end
  end
  dense_tuples(z, d, held, left)
end

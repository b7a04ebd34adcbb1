-- prelude_wide.lua -- write.lua's part of the `wide` layout (prelude_layout.lua,
-- schema/score-layout.md), put in place of a "--@prelude wide" line at build time (Makefile).
-- Include it after prelude_layout.lua (it uses member_prefix's layout).

-- The writes of one board's moved members: `adds` (stored, set member, ...) in the order applied,
-- plan.ids the id of each pair. A member given twice keeps its last pair only (its earlier set
-- members were never added); each moved member's old set member leaves the set, the ids hash
-- gets its new prefix, the settings hash the board's next tie position. Returns {adds (the pairs
-- to ZADD), id (set member -> id)} and leaves plan.smnow (id -> set member after the call).
-- O(k log N) for k members, in 3 + 1 calls.
local function wide_apply(z, ih, meta, plan, adds)
  local last, id, order = {}, {}, {}
  for k = 1, #adds, 2 do
    local m = plan.ids[(k + 1) / 2]
    if not last[m] then order[#order + 1] = m end
    last[m] = k
  end
  local out, gone, prefixes = {}, {}, {}
  plan.smnow = {}
  for _, m in ipairs(order) do
    local k = last[m]
    out[#out + 1] = adds[k]
    out[#out + 1] = adds[k + 1]
    id[adds[k + 1]] = m
    plan.smnow[m] = adds[k + 1]
    prefixes[#prefixes + 1] = m
    prefixes[#prefixes + 1] = adds[k + 1]:sub(1, plan.plen)
    if plan.sm0[m] then gone[#gone + 1] = plan.sm0[m] end
  end
  if #gone > 0 then redis.call('ZREM', z, unpack(gone)) end
  redis.call('HSET', ih, unpack(prefixes))
  redis.call('HSET', meta, 'seq', string.format('%.17g', plan.seq))
  return {adds = out, id = id}
end

-- The ids of the set members a trim popped ({member, stored, ...}) leave the ids hash.
local function wide_popped(ih, plen, popped)
  local ids = {}
  for k = 1, #popped, 2 do ids[#ids + 1] = popped[k]:sub(plen + 1) end
  redis.call('HDEL', ih, unpack(ids))
end

-- prelude_export.lua -- every change of a set an export is copying, seen by that export; put in
-- place of a "--@prelude export" line at build time (Makefile, scripts/lua-prelude.awk).
-- An export (export.lua) snapshots a set Z at the moment it starts by copying Z in chunks, in
-- order, into P:{board}:export:<token>:rows while writes go on. The board's settings hash lists
-- the exports copying now in its field `exports`: "<token>|<lease deadline, ms>|<Z's key>|<edge>"
-- entries separated by spaces, <edge> the stored value the copy has reached ('' before its first
-- chunk). A script that changes members of Z while such an export lives first adds each of them
-- to :rows with ZADD NX: at its value before the change, or at +inf when it was not in Z (so only
-- a member's first change counts, and the copy, which adds with NX too, never overwrites it);
-- and adds to :moves how many of them were at the edge value (the copy's place among members of
-- equal value may have moved up by that many: export.lua).

-- The script's clock, ms (Redis 7 scripts replicate their effects, so TIME is allowed).
local function export_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The live entries of an `exports` field (nil or '': none), as {token, deadline, key, edge}
-- tables (edge a string, '' for none).
local function export_entries(field)
  local live = {}
  if not field or field == '' then return live end
  local now = export_now()
  for token, deadline, key, edge in string.gmatch(field, '(%w+)|(%d+)|([^|%s]+)|(%S*)') do
    if tonumber(deadline) > now then live[#live + 1] = {token, tonumber(deadline), key, edge} end
  end
  return live
end

-- Members of set `z` changed (or about to change): before[member] = its value before this
-- script changed it (a number), or false when it was not in z. `meta` is the settings hash's key
-- (P:{board}:meta), `field` its `exports` field. O(k log N) for k members, 3 calls per live
-- export at most.
local function export_note(meta, field, z, before)
  local live = export_entries(field)
  if #live == 0 then return end
  local rows = {}
  for m, old in pairs(before) do
    rows[#rows + 1] = old and string.format('%.17g', old) or '+inf'
    rows[#rows + 1] = m
  end
  if #rows == 0 then return end
  local tag = string.sub(meta, 1, #meta - 5) -- P:{board}
  for _, e in ipairs(live) do
    local base = tag .. ':export:' .. e[1]
    if e[3] == z and redis.call('EXISTS', base .. ':moves') == 1 then
      redis.call('ZADD', base .. ':rows', 'NX', unpack(rows))
      local edge, moved = tonumber(e[4]), 0
      if edge then
        for _, old in pairs(before) do
          if old == edge then moved = moved + 1 end
        end
      end
      if moved > 0 then redis.call('INCRBY', base .. ':moves', moved) end
    end
  end
end

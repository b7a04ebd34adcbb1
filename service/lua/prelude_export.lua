-- prelude_export.lua -- every change of a set an export is copying, seen by that export; put in
-- place of a "--@prelude export" line at build time (Makefile, scripts/lua-prelude.awk).
-- An export (export.lua) snapshots a set Z at the moment it starts by copying Z in rank chunks
-- into P:{board}:export:<token>:rows while writes go on. The board's settings hash lists the
-- exports copying now in its field `exports`: "<token>|<lease deadline, ms>|<Z's key>" entries
-- separated by spaces. A script that changes a member of Z while such an export lives records,
-- the first time the member changes: the member in :seen (the copy skips it from then on), its
-- value before the change in :rows (so the snapshot holds the member as it was), and in :moves
-- how many members that were in Z changed (a rank of Z may then have moved up by that many, so
-- the next chunk starts that much earlier: export.lua).

-- The script's clock, ms (Redis 7 scripts replicate their effects, so TIME is allowed).
local function export_now()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- The live entries of an `exports` field (nil or '': none), as {token, deadline, key} tables.
local function export_entries(field)
  local live = {}
  if not field or field == '' then return live end
  local now = export_now()
  for token, deadline, key in string.gmatch(field, '(%w+)|(%d+)|(%S+)') do
    if tonumber(deadline) > now then live[#live + 1] = {token, tonumber(deadline), key} end
  end
  return live
end

-- Members of set `z` changed (or about to change): before[member] = its value before this
-- script changed it (a number), or false when it was not in z. `meta` is the settings hash's key
-- (P:{board}:meta), `field` its `exports` field; count_moves false for a change that keeps the
-- order (a tie group renumbered). O(k) for k members, 4 calls per live export at most.
local function export_note(meta, field, z, before, count_moves)
  local live = export_entries(field)
  if #live == 0 then return end
  local members = {}
  for m in pairs(before) do members[#members + 1] = m end
  if #members == 0 then return end
  local tag = string.sub(meta, 1, #meta - 5) -- P:{board}
  for _, e in ipairs(live) do
    local base = tag .. ':export:' .. e[1]
    if e[3] == z and redis.call('EXISTS', base .. ':moves') == 1 then
      local seen = redis.call('SMISMEMBER', base .. ':seen', unpack(members))
      local news, rows, moved = {}, {}, 0
      for i, m in ipairs(members) do
        if seen[i] == 0 then
          news[#news + 1] = m
          if before[m] then
            rows[#rows + 1] = string.format('%.17g', before[m])
            rows[#rows + 1] = m
            moved = moved + 1
          end
        end
      end
      if #news > 0 then redis.call('SADD', base .. ':seen', unpack(news)) end
      if #rows > 0 then redis.call('ZADD', base .. ':rows', unpack(rows)) end
      if count_moves and moved > 0 then redis.call('INCRBY', base .. ':moves', moved) end
    end
  end
end

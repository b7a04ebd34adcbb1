#!lua flags=no-writes
--@script read-only
-- page.lua -- one page of a board, with its settings, total and records, in one round trip; and
-- with ids, those members wherever they are (GET .../rank?with=: the page and the caller's own
-- rank in one call). O(log N + size + k log N) for k ids.
-- Ascending stored order is rank order, so ZRANGE (not REV) reads it.
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] page (1-based), ARGV[6] size (0: the board's);
-- ARGV[7..] the ids of `with` (none: a plain page; the caller sends each once, at most 20)
-- Reply: nil when the board does not exist, {'retry', period, offset, retain} and
--   {'dense_unavailable'} (prelude), else {settings (flat HGETALL), total, size, {member,
--   stored, member, stored, ...}, {record|nil, ...}, ranks ({} for ordinal)}, without ids the
--   range as one string (prelude_read.lua: packed); with ids, two more:
--   {id, stored, rank0, rank, ...} (found, in the order asked) and {id, ...} (missing), and the
--   records list holds the page's records, then the found ids' (on a cluster none: the caller
--   fetches them all, records.h); on a `wide` board a ninth, the found's set-member prefixes
--   (their sub-scores); on a board with track_updated_at one more, last: the times of the
--   page's members, then of the found ids (prelude_read.lua: times)
--@prelude
local reply = page_reply(tonumber(ARGV[5]), page_size(ARGV[6]))
if #ARGV < 7 then return packed(times(reply, 4)) end
local found, missing, fids, prefixes = lookup_ids(7)
if #fids > 0 and KEYS[3] ~= KEYS[1] then
  local records = reply[5]
  local got = redis.call('HMGET', KEYS[3], unpack(fids))
  for i = 1, #fids do records[#records + 1] = got[i] end
end
reply[7] = found
reply[8] = missing
if plen > 0 then reply[9] = prefixes end
return times(reply, 4, fids)

#!lua flags=no-writes
--@script read-only
-- lookup.lua -- many members of one board (a friends list) in one call: each one's stored score,
-- ordinal position and rank of the type asked, and record. O(k log N) for k ids: one ZMSCORE,
-- one ZRANK per member found (and one ZCOUNT per distinct score for competition or dense ranks),
-- one HMGET. The caller bounds k (1000) and sends each id once.
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5..] the ids
-- Reply: nil when the board does not exist, the prelude's {'retry', ...} or
--   {'dense_unavailable'}, else {settings, total, {id, stored, rank0, rank, ...} (found, in the
--   order asked), {id, ...} (missing), {record|nil, ...} (of the found, in their order; {} on a
--   cluster, where the caller fetches them: prelude_read.lua), and on a `wide` board {set member
--   prefix, ...} of the found (their sub-scores and tie positions)}; on a board with
--   track_updated_at one more, last: the found ids' times (prelude_read.lua: times)
--@prelude
local found, missing, fids, prefixes = lookup_ids(5)
local records = {}
if #fids > 0 and KEYS[3] ~= KEYS[1] then records = redis.call('HMGET', KEYS[3], unpack(fids)) end
local out = {settings, redis.call('ZCARD', KEYS[2]), found, missing, records}
if plen > 0 then out[6] = prefixes end
return times(out, nil, fids)

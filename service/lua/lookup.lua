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
--   prefix, ...} of the found (their sub-scores and tie positions)}
--@prelude
local ids = {}
for i = 5, #ARGV do ids[#ids + 1] = ARGV[i] end
local sms = ids
if plen > 0 then -- a wide board's set members: the ids' tie prefixes, then the ids
  local p = redis.call('HMGET', KEYS[5], unpack(ids))
  sms = {}
  for i = 1, #ids do sms[i] = p[i] and p[i] .. ids[i] or ids[i] end
end
local got = redis.call('ZMSCORE', KEYS[2], unpack(sms))
local found, missing, fids, records, prefixes = {}, {}, {}, {}, {}
for i = 1, #ids do
  if got[i] then
    local rank0 = redis.call('ZRANK', KEYS[2], sms[i])
    found[#found + 1] = ids[i]
    found[#found + 1] = got[i]
    found[#found + 1] = rank0
    found[#found + 1] = rank_of(tonumber(got[i]), rank0, sms[i])
    fids[#fids + 1] = ids[i]
    prefixes[#prefixes + 1] = sms[i]:sub(1, plen)
  else
    missing[#missing + 1] = ids[i]
  end
end
if #fids > 0 and KEYS[3] ~= KEYS[1] then records = redis.call('HMGET', KEYS[3], unpack(fids)) end
if plen > 0 then return {settings, redis.call('ZCARD', KEYS[2]), found, missing, records, prefixes} end
return {settings, redis.call('ZCARD', KEYS[2]), found, missing, records}

-- The webdis baseline's page (bench/run.sh, bench/script-cost.sh): ZCARD, ZRANGE of 20 WITHSCORES
-- and HMGET of their records in one script. KEYS[1] the sorted set, KEYS[2] the records' hash,
-- ARGV[1] the page number. The reply is flat ({total, id, stored, ..., record, ...}): webdis 0.1.9
-- renders nested arrays as null.
local total = redis.call('ZCARD', KEYS[1])
local start = (tonumber(ARGV[1]) - 1) * 20
local range = redis.call('ZRANGE', KEYS[1], start, start + 19, 'WITHSCORES')
local out, ids = {total}, {}
for i = 1, #range, 2 do ids[#ids + 1] = range[i] end
for i = 1, #range do out[#out + 1] = range[i] end
if #ids > 0 then
  local records = redis.call('HMGET', KEYS[2], unpack(ids))
  for i = 1, #ids do out[#out + 1] = records[i] end
end
return out

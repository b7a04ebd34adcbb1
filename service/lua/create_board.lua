#!lua
--@script waits
-- create_board.lua -- a new board: its settings hash and its registry entry. O(1). Not flagged
-- allow-oom: a new board grows memory, so at maxmemory Redis refuses the call whole, before it
-- runs (507, nothing written). Settings changes of an existing board are put_board.lua's.
-- KEYS[1] board settings hash, KEYS[2] registry set (KEYS[1] again on Redis Cluster: the
-- registry is in another slot, the caller adds the board to it first), KEYS[3] the set of its
-- current period (or of the board)   ARGV[1] board name, ARGV[2..] field, value pairs: every setting, `gen`
-- and `life` (schema/redis-keys.md)
-- Reply: {1, settings (flat HGETALL), total}, or {0} when the board exists (created meanwhile:
-- the caller updates it instead)
if redis.call('EXISTS', KEYS[1]) == 1 then return {0} end
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
if KEYS[2] ~= KEYS[1] then redis.call('SADD', KEYS[2], ARGV[1]) end
return {1, redis.call('HGETALL', KEYS[1]), redis.call('ZCARD', KEYS[3])}

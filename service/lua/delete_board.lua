#!lua flags=allow-oom
--@script waits
-- delete_board.lua -- a board disappears at once for readers and writers, with all its data.
-- O(k) for k keys, each removed with UNLINK (O(1) on Redis' main thread; big sets are freed by
-- the lazy-free thread): the settings, the set, the readable periods' sets and their distinct
-- scores (named by the caller: at most 2 (retain + 1)) and every key in the period index (the
-- readable ones and those not yet swept), so nothing of the board survives to be read by a board
-- re-created under its name. The index holds at most 2 (retain + 1) keys (a set and its
-- distinct scores per period) and the few a failed sweep left behind (every sweep takes up to
-- 2048), so reading its first 1000 is a bound, not a cut.
-- allow-oom: deleting must work exactly when memory is full.
-- KEYS[1] board settings hash, KEYS[2] registry set (KEYS[1] again on Redis Cluster: the
-- registry is in another slot, the caller removes the board from it after), KEYS[3] the period
-- index, KEYS[4..] the board's sorted sets and their distinct scores (the index lists those too)
-- ARGV[1] board name
-- Reply: 1 deleted, 0 no such board
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local listed = redis.call('ZRANGE', KEYS[3], 0, 999)
for i = 1, #listed do redis.call('UNLINK', listed[i]) end
for i = 3, #KEYS do redis.call('UNLINK', KEYS[i]) end
redis.call('UNLINK', KEYS[1])
if KEYS[2] ~= KEYS[1] then redis.call('SREM', KEYS[2], ARGV[1]) end
return 1

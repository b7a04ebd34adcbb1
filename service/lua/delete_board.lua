#!lua flags=allow-oom
-- delete_board.lua -- a board disappears at once for readers and writers. O(k) for k keys, all
-- named by the caller (the settings, the current set and the retained periods' sets: at most
-- retain + 2), each removed with UNLINK, so the work on Redis' main thread does not grow with
-- the board. allow-oom: deleting must work exactly when memory is full.
-- KEYS[1] board settings hash, KEYS[2] registry set, KEYS[3..] the board's sorted sets
-- ARGV[1] board name
-- Reply: 1 deleted, 0 no such board
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
for i = 3, #KEYS do redis.call('UNLINK', KEYS[i]) end
redis.call('UNLINK', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[1])
return 1

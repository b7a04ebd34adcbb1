#!lua flags=allow-oom
--@script waits
-- reset_board.lua -- empty a board's current period at once. O(1) on Redis' main thread: the set
-- and its distinct scores go with UNLINK (freed by the lazy-free thread) and a new generation
-- retires every cached page of the board without touching it.
-- KEYS[1] board settings hash, KEYS[2] the set to empty, KEYS[3] its distinct scores, KEYS[4]
-- its ids hash (a `wide` board's), KEYS[5] its updated_at hash (a board that tracks it)
-- ARGV[1] the new generation
-- Reply: 1 reset, 0 no such board
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'gen', ARGV[1])
redis.call('UNLINK', KEYS[2], KEYS[3], KEYS[4], KEYS[5])
return 1

-- lock_release.lua -- release a stampede lock only if we still hold it (compare-and-delete),
-- after storing the value the holder computed when the call gives one: one command for both.
-- O(1). A holder whose lock expired must not delete the next holder's lock.
-- KEYS[1] lock key   ARGV[1] the holder's random token
-- optional: KEYS[2] the value's key, ARGV[2] the value, ARGV[3] its PX (ms): SET first; a SET
--   refused (OOM under a maxmemory) still releases the lock, and its error is the reply
-- Reply: 1 released, 0 not ours (expired, or taken over); or the SET's error
local stored = true
if KEYS[2] then stored = redis.pcall('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
local released = 0
if redis.call('GET', KEYS[1]) == ARGV[1] then released = redis.call('UNLINK', KEYS[1]) end
if type(stored) == 'table' and stored.err then return stored end
return released

-- lock_release.lua -- release a stampede lock only if we still hold it (compare-and-delete).
-- O(1). A holder whose lock expired must not delete the next holder's lock.
-- KEYS[1] lock key   ARGV[1] the holder's random token
-- Reply: 1 released, 0 not ours (expired, or taken over)
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('UNLINK', KEYS[1])
end
return 0

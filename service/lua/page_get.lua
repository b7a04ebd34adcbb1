#!lua flags=no-writes
-- page_get.lua -- a cached page's lookup in one command: the board settings a lookup needs and
-- the value of the page key the caller guessed from what it last saw of the board; the caller's
-- settings decide whether the guess held (pages.c, settle). O(1).
-- KEYS[1] the board's settings hash   KEYS[2] the guessed page key
-- ARGV the settings fields to read, in the caller's order
-- Reply: {HMGET of ARGV (false for a field not set), the page key's value or false}
return {redis.call('HMGET', KEYS[1], unpack(ARGV)), redis.call('GET', KEYS[2])}

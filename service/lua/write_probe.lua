#!lua
-- write_probe.lua -- does Redis accept writes now? O(1), and it writes nothing. Flagged as a
-- writing script without allow-oom, as write.lua is, so Redis decides about it exactly as about a
-- write: after evicting what it may (page caches, locks), it refuses it with OOM at maxmemory and
-- with READONLY on a replica, before it runs. /readyz and /metrics report the answer.
-- Reply: 1
return 1

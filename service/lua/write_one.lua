#!lua
--@script waits
-- write_one.lua -- the common single write: one entry (set | best | incr) to one board that is
-- `packed` without sub-scores, keeps every member (max_members 0) and is not being exported,
-- without an Idempotency-Key and not a chunk of an upload. It carries only
-- what that write needs (write.lua's preludes, its phases' tables and its 37 arguments cost a
-- single write more than its commands), and its effects and reply are write.lua's for the same
-- call, byte for byte: the caller (board_write_short.c) decides which script a write takes,
-- and sends write.lua when this one answers status 7 (the board does not exist, or its
-- max_members or exports say it is not such a board: nothing written).
-- Layout (service/score_codec.h): stored = key * 2^T + tie; a smaller key is a better score; a
-- member that moves takes the next tie position of its new key's group (after its members on
-- tiebreak first, before them on last; 0 on id), read with one bounded ZRANGE unless the
-- distinct scores say the group is empty (prelude_dense.lua: P:{board}:dense holds exactly the
-- keys members hold, kept in this call).
-- Flagged (no allow-oom): at maxmemory Redis refuses the whole call before it runs.
--
-- KEYS: 1 the set (the current period's on a periodic board), 2 the settings hash, 3 the
-- distinct scores, 4 the set's updated_at hash (used when the board tracks it), 5 the records
-- hash (on Redis Cluster KEYS[2] again: the caller writes the record of an entry applied), 6 (a
-- periodic board only) the period index: the set is listed there with its period's start (ZADD
-- NX) by the write that changes it, its distinct scores and updated_at hash with it.
-- ARGV: 1 the settings as the caller assumed them: order|tiebreak|score_decimals|period|
-- timezone|score_layout|track_updated_at (the hash's fields, a field it lacks as its default),
-- 2 flags (a number: 1 return the rank, 2 return the previous score and rank, 4 all or
-- nothing: an entry whose result leaves the range refuses the call), 3 tie cap, 4 2^T,
-- 5 largest |key|, 6 member, 7 op, 8 record JSON or '', 9 key (set, best) or delta (incr; 'delta
-- lo hi' with the lowest and highest key its result may take, '' for the one it lacks),
-- 10 (a board that tracks updated_at) the time, ms since the epoch, the member gets as its
-- updated_at when its score changes ('' on a periodic board that does not track it), 11 (a
-- periodic board) the current period's start (ms), its score in the index.
-- Reply: write.lua's for one entry on one board: {status, done, info, 0, 0, section}: status 0
-- (the entry handled), 1 (the settings differ), 2 (all or nothing: the result leaves the range),
-- 3 (its tie group is full: info the group's key; nothing written), or 7 (not this script's
-- board: {7, 0, '', 0, 0}, nothing written); section {listed (1: this write listed a new
-- period set: a period began), version, 2^T, order, score_decimals, trimmed 0, code, stored,
-- rank0, updated, previous stored, previous rank0}.
--@prelude defaults
local z, meta, dz, index = KEYS[1], KEYS[2], KEYS[3], KEYS[6]
local m = redis.call('HMGET', meta, 'order', 'tiebreak', 'score_decimals', 'period', 'timezone',
                     'max_members', 'exports', 'score_layout', 'track_updated_at')
if not m[1] or (m[6] and m[6] ~= '0') or (m[7] and m[7] ~= '') then return {7, 0, '', 0, 0} end
if m[1] .. '|' .. (m[2] or '') .. '|' .. (m[3] or '') .. '|' .. (m[4] or BOARD_PERIOD_DEFAULT) ..
   '|' .. (m[5] or BOARD_TIMEZONE_DEFAULT) .. '|' .. (m[8] or BOARD_SCORE_LAYOUT_DEFAULT) .. '|' ..
   (m[9] or BOARD_TRACK_UPDATED_AT_DEFAULT) ~= ARGV[1] then
  return {1, 0, '', 0, 0}
end
local flags, cap, base, kmax = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]),
                               tonumber(ARGV[5])
local want_rank, want_prev = flags % 2 == 1, flags % 4 >= 2
local member, op, record, text = ARGV[6], ARGV[7], ARGV[8], ARGV[9]
local tiebreak = m[2]
local floor = math.floor

local old = redis.call('ZSCORE', z, member)
old = old and tonumber(old) or false
local oldkey = old and floor(old / base) or nil
-- the result's key (write.lua's result_key, incr_args)
local arg = tonumber(text)
local key = arg
if op == 'incr' then
  local d, lo, hi = text:match('^(%S+) (%S*) (%S*)$')
  if d then
    arg, lo, hi = tonumber(d), tonumber(lo), tonumber(hi)
  end
  key = (oldkey or 0) + arg
  if lo and key < lo then key = lo end
  if hi and key > hi then key = hi end
elseif op == 'best' and oldkey and oldkey <= arg then
  key = oldkey
end
local out_of_range = key > kmax or key < -kmax
if out_of_range and flags % 8 >= 4 then return {2, 0, '', 0, 0} end

local code, stored, updated, prev, prev_rank, listed = 0, old, 0, false, -1, 0
local known, dense, dense_known, empty = false, nil, false, false
local left, lefttext = nil, nil -- the key the member left (its group may be empty now), as text
if out_of_range then
  code = 2
elseif not (old and key == oldkey) then
  local low = key * base
  local tie
  if tiebreak == 'id' then
    tie = 0
  else
    -- a key the member did not hold, sent by the caller (not an incr's result): one ZMSCORE of
    -- the distinct scores with the key the member holds says whether they are kept and whether
    -- the new key's group has members (write.lua's probe)
    if oldkey and op ~= 'incr' and not (op == 'best' and oldkey <= arg) then
      lefttext = oldkey == 0 and '0' or string.format('%d', oldkey)
      local has = redis.call('ZMSCORE', dz, text, lefttext)
      dense, dense_known = has[2] and 'kept' or false, true
      empty = dense and not has[1]
    end
    if empty then
      tie = tiebreak == 'first' and 0 or cap - 1
    elseif tiebreak == 'first' then
      local r = redis.call('ZRANGE', z, low + cap - 1, low, 'BYSCORE', 'REV', 'LIMIT', 0, 1,
                           'WITHSCORES')
      tie = r[2] and tonumber(r[2]) - low + 1 or 0
      known = r[2] and true
    else
      local r = redis.call('ZRANGE', z, low, low + cap - 1, 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
      tie = r[2] and tonumber(r[2]) - low - 1 or cap - 1
      known = r[2] and true
    end
  end
  if tie >= cap or tie < 0 then
    -- a full group: nothing written, the caller compacts it and sends the write again
    local version = tonumber(redis.call('HGET', meta, 'version') or '0')
    return {3, 0, string.format('%.17g', key), 0, 0,
            {0, version, base, m[1], tonumber(m[3]), 0}}
  end
  stored, updated = low + tie, 1
  if old then left = oldkey end
end
if want_prev and old then
  prev = old
  prev_rank = redis.call('ZRANK', z, member)
end
if updated == 1 then
  if not dense_known then -- prelude_dense.lua's dense_state, before the set changes
    if redis.call('EXISTS', dz) == 1 then
      dense = 'kept'
    elseif redis.call('EXISTS', z) == 0 then
      dense = 'new'
    else
      dense = false
    end
  end
  if m[9] == '1' then
    redis.call('HSET', KEYS[4], member, ARGV[10])
    if index then redis.call('ZADD', index, 'NX', ARGV[11], KEYS[4]) end
  end
  redis.call('ZADD', z, string.format('%d', stored), member)
  if index then -- the set is listed while it exists, its distinct scores with it
    if dense == 'new' then redis.call('ZADD', index, 'NX', ARGV[11], dz) end
    if redis.call('ZADD', index, 'NX', ARGV[11], z) == 1 then
      listed = 1
      redis.call('PERSIST', z) -- a set an older rankd wrote carries a TTL: it must not expire
    end
  end
  if dense then -- prelude_dense.lua's dense_update: the key held now, the key left
    if not (dense == 'kept' and known) then
      local kt = key == arg and op ~= 'incr' and text or (key == 0 and '0' or string.format('%d', key))
      redis.call('ZADD', dz, kt, kt)
    end
    if left then
      local lo = left * base
      if redis.call('ZCOUNT', z, lo == 0 and '0' or string.format('%d', lo),
                    string.format('%d', lo + base - 1)) == 0 then
        redis.call('ZREM', dz, lefttext or (left == 0 and '0' or string.format('%d', left)))
      end
    end
  end
end
local version = redis.call('HINCRBY', meta, 'version', '1')
local rank = -1
if want_rank and code == 0 then
  if updated == 0 and prev_rank >= 0 then
    rank = prev_rank
  else
    rank = redis.call('ZRANK', z, member) or -1
  end
end
if record ~= '' and code == 0 and KEYS[5] ~= meta then redis.call('HSET', KEYS[5], member, record) end
return {0, 1, '', 0, 0,
        {listed, version, base, m[1], tonumber(m[3]), 0, code, stored, rank, updated, prev,
         prev_rank}}

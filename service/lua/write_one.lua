#!lua
--@script waits
-- write_one.lua -- the common single write: one entry (set | best | incr) to one board that is
-- `packed` without sub-scores, keeps every member (max_members 0) and is not being exported,
-- without an Idempotency-Key and not a chunk of an upload. It carries only
-- what that write needs (write.lua's preludes, its phases' tables and its 37 arguments cost a
-- single write more than its commands), its effects are write.lua's for the same call, byte for
-- byte, and its short reply says what write.lua's would: the caller (board_write_short.c)
-- decides which script a write takes, reads the reply, and sends write.lua when this one
-- answers status 7 (the board does not exist, or its max_members or exports say it is not such
-- a board: nothing written).
-- Layout (service/score_codec.h): stored = key * 2^T + tie; a smaller key is a better score; a
-- member that moves takes the next tie position of its new key's group (after its members on
-- tiebreak first, before them on last; 0 on id), read with one bounded ZRANGE unless the
-- distinct scores say the group is empty (prelude_dense.lua: P:{board}:dense holds exactly the
-- keys members hold, kept in this call).
-- Flagged (no allow-oom): at maxmemory Redis refuses the whole call before it runs.
--
-- KEYS: 1 the set (the current period's on a periodic board), 2 the settings hash, 3 the
-- distinct scores; then, in this order, only those the write uses: the set's updated_at hash (a
-- board that tracks it), the period index (a periodic board: the set is listed there with its
-- period's start (ZADD NX) by the write that changes it, its distinct scores and updated_at hash
-- with it), the records hash (an entry with a record, not on Redis Cluster: there the caller
-- writes the record of an entry applied).
-- ARGV: 1 the settings as the caller assumed them: order|tiebreak|score_decimals|period|
-- timezone|score_layout|track_updated_at (the hash's fields, a field it lacks as its default),
-- 2 the member, 3 op, 4 key (set), 'key kmax' (best), 'delta lo hi kmax' (incr: the lowest and
-- highest key its result may take, '' for the one it lacks, and the largest |key|; a set's key
-- is in range: the caller checked it), 5 flags (one digit: 1 return the rank, 2 return the
-- previous score and rank, 4 all or nothing: an entry whose result leaves the range refuses the
-- call); then, in this order, only those that apply: the record JSON (with the records hash),
-- the time in ms since the epoch the member gets as its updated_at when its score changes (a
-- board that tracks it), the current period's start in ms, its score in the index (a periodic
-- board), the tie cap (when it is not BOARD_TIE_CAP_MAX, a test's). 2^T is BOARD_TIE_CAP_MAX
-- (1 on tiebreak id). Each argument, and each number read from text (about 2,000 instructions a
-- tonumber), costs Redis more than the comparisons that replace it.
-- Reply (status 0, the entry handled): {0, version, bits (1 the score changed, 2 this write
-- listed a new period set: a period began, 4 the result left the range: nothing written), stored,
-- rank0 (-1 not asked), previous stored (nil: none or not asked), previous rank0}; {3, the full
-- group's key, version} (its tie group is full: nothing written); {1} (the settings differ),
-- {2} (all or nothing: the result leaves the range), {7} (not this script's board: nothing
-- written). The caller (board_write_short_take) reads it as write.lua's reply for the same call.
--@prelude defaults
local z, meta, dz = KEYS[1], KEYS[2], KEYS[3]
local m = redis.call('HMGET', meta, 'order', 'tiebreak', 'score_decimals', 'period', 'timezone',
                     'max_members', 'exports', 'score_layout', 'track_updated_at')
if not m[1] or (m[6] and m[6] ~= '0') or (m[7] and m[7] ~= '') then return {7} end
local period = m[4] or BOARD_PERIOD_DEFAULT
if m[1] .. '|' .. (m[2] or '') .. '|' .. (m[3] or '') .. '|' .. period ..
   '|' .. (m[5] or BOARD_TIMEZONE_DEFAULT) .. '|' .. (m[8] or BOARD_SCORE_LAYOUT_DEFAULT) .. '|' ..
   (m[9] or BOARD_TRACK_UPDATED_AT_DEFAULT) ~= ARGV[1] then
  return {1}
end
local member, op, text = ARGV[2], ARGV[3], ARGV[4]
local flags = ARGV[5]:byte() - 48
local want_rank, want_prev = flags % 2 == 1, flags % 4 >= 2
local tracked = m[9] == '1'
-- the optional keys and arguments, in their order
local ki, ai = 4, 6
local upd, index, record, now, start
if tracked then upd, ki = KEYS[4], 5 end
if period ~= 'none' then index, ki = KEYS[ki], ki + 1 end
local items = KEYS[ki]
if items then record, ai = ARGV[6], 7 end
if tracked then now, ai = ARGV[ai], ai + 1 end
if index then start, ai = ARGV[ai], ai + 1 end
local capped = ARGV[ai] -- a test's tie cap, or nil
local tiebreak = m[2]
local base = tiebreak == 'id' and 1 or BOARD_TIE_CAP_MAX
local floor = math.floor

local old = redis.call('ZSCORE', z, member)
old = old and tonumber(old) or false
local oldkey = old and floor(old / base) or nil
-- the result's key (write.lua's result_key, incr_args)
local key, arg, kmax
local keytext = text -- the caller's key (set, best) as text
if op == 'set' then
  arg = tonumber(text)
  key = arg
elseif op == 'best' then
  local km
  keytext, km = text:match('^(%S+) (%S+)$')
  arg, kmax = tonumber(keytext), tonumber(km)
  key = arg
  if oldkey and oldkey <= arg then key = oldkey end
else
  local d, lo, hi, km = text:match('^(%S+) (%S*) (%S*) (%S+)$')
  arg, lo, hi, kmax = tonumber(d), tonumber(lo), tonumber(hi), tonumber(km)
  key = (oldkey or 0) + arg
  if lo and key < lo then key = lo end
  if hi and key > hi then key = hi end
end
local out_of_range = kmax and (key > kmax or key < -kmax)
if out_of_range and flags % 8 >= 4 then return {2} end

local code, stored, storedtext, updated, prev, prev_rank, listed = 0, old, nil, 0, false, -1, 0
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
      local has = redis.call('ZMSCORE', dz, keytext, lefttext)
      dense, dense_known = has[2] and 'kept' or false, true
      empty = dense and not has[1]
    end
    local cap = capped and tonumber(capped) or BOARD_TIE_CAP_MAX
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
    if tie >= cap or tie < 0 then
      -- a full group: nothing written, the caller compacts it and sends the write again
      return {3, string.format('%.17g', key), tonumber(redis.call('HGET', meta, 'version') or '0')}
    end
  end
  stored, updated = low + tie, 1
  storedtext = stored == 0 and '0' or string.format('%d', stored)
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
  if tracked then
    redis.call('HSET', upd, member, now)
    if index then redis.call('ZADD', index, 'NX', start, upd) end
  end
  redis.call('ZADD', z, storedtext, member)
  if index then -- the set is listed while it exists, its distinct scores with it
    if dense == 'new' then redis.call('ZADD', index, 'NX', start, dz) end
    if redis.call('ZADD', index, 'NX', start, z) == 1 then
      listed = 1
      redis.call('PERSIST', z) -- a set an older rankd wrote carries a TTL: it must not expire
    end
  end
  if dense then -- prelude_dense.lua's dense_update: the key held now, the key left
    if not (dense == 'kept' and known) then
      local kt = key == arg and op ~= 'incr' and keytext or
                 (key == 0 and '0' or string.format('%d', key))
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
if record and code == 0 then redis.call('HSET', items, member, record) end
return {0, version, updated + 2 * listed + (code == 2 and 4 or 0), stored, rank, prev, prev_rank}

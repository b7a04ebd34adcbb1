#!lua flags=no-writes
--@script
-- member_boards.lua -- one member on several boards in one call: on each board its stored score,
-- ordinal position and rank of the type asked, and the board's total. O(b log N) for b boards
-- (the caller bounds b: 20). On one Redis this is one script over the keys of several boards;
-- in Redis Cluster each board's keys live in their own slot (their hash tag) and a script holds
-- one slot, so there the caller sends one call per board (all in one loop iteration: one
-- pipeline per node) and puts the replies together (handlers_read.c). It reads no records.
-- KEYS: per board its settings hash, the sorted set of its current period (or of the board),
-- the set's distinct scores (prelude_dense.lua), the set's ids hash, the set's updated_at hash
-- (read on a board with track_updated_at)   ARGV[1] member, ARGV[2] rank type, then per
-- board the period kind, UTC offset and retain the caller assumed when it named the set
-- Reply: {'retry', {i, period, offset, retain, ...}} for the boards (0-based i) whose periods are
--   not what the caller assumed (it learns them and calls again), {'dense_unavailable', i}, else
--   one entry per board: false (no such board) or {settings, total, stored|nil, rank0|nil,
--   rank|nil, set member|nil (on a board with sub-scores: they are its first bytes),
--   updated_at|nil (ms; a board with track_updated_at)}
--@prelude layout
--@prelude defaults
local id, kind, out, retry = ARGV[1], ARGV[2], {}, {}
for b = 0, #KEYS / 5 - 1 do
  local meta, z, d, a = KEYS[5 * b + 1], KEYS[5 * b + 2], KEYS[5 * b + 3], 3 + 3 * b
  local flat = redis.call('HGETALL', meta)
  local s = {}
  for i = 1, #flat, 2 do s[flat[i]] = flat[i + 1] end
  if #flat == 0 then
    out[#out + 1] = false
  elseif (s.period or BOARD_PERIOD_DEFAULT) ~= ARGV[a] or
         (s.timezone or BOARD_TIMEZONE_DEFAULT) ~= ARGV[a + 1] or
         (s.retain or BOARD_RETAIN_DEFAULT) ~= ARGV[a + 2] then
    for _, v in ipairs({b, s.period or BOARD_PERIOD_DEFAULT, s.timezone or BOARD_TIMEZONE_DEFAULT,
                        s.retain or BOARD_RETAIN_DEFAULT}) do
      retry[#retry + 1] = v
    end
  elseif kind == 'dense' and not dense_readable(z, d) then
    return {'dense_unavailable', b}
  else
    local sm = set_member(KEYS[5 * b + 4], member_prefix(s.tiebreak, s.score_layout), id)
    local stored = sm and redis.call('ZSCORE', z, sm)
    local rank0, rank, subs = false, false, false
    if stored then
      rank0 = redis.call('ZRANK', z, sm)
      local spl = SUB_BYTES * sub_count(s.score_layout)
      rank = rank_in(z, d, tie_base(s.tiebreak, s.score_layout), kind, tonumber(stored), rank0, nil,
                     spl > 0 and sm:sub(1, spl) or nil)
      if spl > 0 then subs = sm end
    end
    local updated = false
    if stored and s.track_updated_at == '1' then
      updated = tonumber(redis.call('HGET', KEYS[5 * b + 5], id) or '') or false
    end
    out[#out + 1] = {flat, redis.call('ZCARD', z), stored, rank0, rank, subs, updated}
  end
end
if #retry > 0 then return {'retry', retry} end
return out

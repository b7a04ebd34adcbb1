-- prelude_read.lua -- the opening every read script of one board shares, put in place of its
-- "--@prelude" line at build time (Makefile). One KEYS/ARGV layout for all of them: KEYS[1] the
-- board's settings hash, KEYS[2] the sorted set of the period read, KEYS[3] the records hash, or
-- KEYS[1] again when the records are in other slots (Redis Cluster: the script reads none, the
-- records in its reply are empty or false, and the C caller's continuation fetches them by bucket,
-- records.h), KEYS[4] the set's distinct scores (prelude_dense.lua; in the board's slot like
-- KEYS[1..2]), KEYS[5] the set's ids hash (a `wide` board's id -> tie prefix, read by the scripts
-- given an id: member_of), KEYS[6] the set's updated_at hash (a board with track_updated_at: id ->
-- ms; times() reads it); ARGV[1] the period kind, ARGV[2] the UTC offset (minutes) and ARGV[3] the
-- retain the caller assumed when it chose KEYS[2] (and judged the period readable), ARGV[4] the
-- rank type ('ordinal', 'competition' or 'dense'); the script's own arguments from ARGV[5] on.
-- Checking retain here is what makes processes agree on which periods are readable: a process whose
-- retain is stale (another one changed it) is told the real one and judges again. One HGETALL,
-- checked in Lua (a second redis.call costs more than the loop). Gives `settings` (the flat
-- HGETALL, for the reply), `s` (field -> value), `base` (2^T), page_size(asked), rows(start,
-- count), ranks(range, start), rank_of(stored, r0), page_reply(page, size), window(center, size,
-- total), times(out, range_at, more), packed(out) and share(total, num, den); returns nil when the board does
-- not exist, {'retry', period, offset, retain} when its periods are not what the caller assumed (it
-- learns them and calls again), and {'dense_unavailable'} for a dense read of a set written before
-- rankd kept its distinct scores.
--@prelude layout
--@prelude defaults
local settings = redis.call('HGETALL', KEYS[1])
if #settings == 0 then return false end
local s = {}
for i = 1, #settings, 2 do s[settings[i]] = settings[i + 1] end
-- the settings as the replies carry them: one string, a NUL and then each field and value
-- followed by a NUL (board_settings_from_reply; one bulk string for the C side to parse, not two
-- a field)
settings = '\0' .. table.concat(settings, '\0')
if (s.period or BOARD_PERIOD_DEFAULT) ~= ARGV[1] or
   (s.timezone or BOARD_TIMEZONE_DEFAULT) ~= ARGV[2] or
   (s.retain or BOARD_RETAIN_DEFAULT) ~= ARGV[3] then
  return {'retry', s.period or BOARD_PERIOD_DEFAULT, s.timezone or BOARD_TIMEZONE_DEFAULT,
          s.retain or BOARD_RETAIN_DEFAULT}
end
local rank_type, base = ARGV[4], tie_base(s.tiebreak, s.score_layout)
-- the bytes before the id in a set member (prelude_layout.lua: a `wide` board's tie position);
-- the range and the members this prelude's helpers return are set members: the caller strips them
local plen = member_prefix(s.tiebreak, s.score_layout)
-- the sub-score bytes a set member starts with (0 on a board without sub-scores): equal scores
-- with equal sub-scores tie in the competition and dense ranks
local spl = SUB_BYTES * sub_count(s.score_layout)
-- the set member of an id (false: absent), through the set's ids hash: KEYS[5] of the scripts
-- that are given an id (member.lua, around.lua, lookup.lua)
local function member_of(id)
  return set_member(KEYS[5], plen, id)
end
if rank_type == 'dense' and not dense_readable(KEYS[2], KEYS[4]) then
  return {'dense_unavailable'}
end
-- the size asked for, or the board's page_size for 0; a damaged hash must not read the board
local function page_size(asked)
  local size = tonumber(asked)
  if size == 0 then size = tonumber(s.page_size or BOARD_PAGE_SIZE_DEFAULT) end
  if not size or size < 1 or size > BOARD_PAGE_SIZE_MAX then
    size = tonumber(BOARD_PAGE_SIZE_DEFAULT)
  end
  return size
end
-- The updated_at times (ms, or false) of a board with track_updated_at, for a reply: `out` with
-- one more element, the times of the range at out[range_at] ({member, stored, ...}: set members;
-- nil: none) followed by those of the ids `more` (may be nil); `out` as it is on a board that
-- does not track. One HMGET. The C side reads the last element of a tracked board's reply as the
-- times.
local function times(out, range_at, more)
  if s.track_updated_at ~= '1' then return out end
  local range, ids = range_at and out[range_at] or {}, {}
  for i = 1, #range, 2 do ids[#ids + 1] = plen > 0 and range[i]:sub(plen + 1) or range[i] end
  for i = 1, more and #more or 0 do ids[#ids + 1] = more[i] end
  local t = {}
  if #ids > 0 then
    local got = redis.call('HMGET', KEYS[6], unpack(ids))
    for i = 1, #ids do t[i] = tonumber(got[i] or '') or false end
  end
  out[#out + 1] = t
  return out
end
-- `count` (>= 0) entries from 0-based position `start`: {member, stored, ...} and their records
-- ({} on a cluster: KEYS[3] == KEYS[1], the caller fetches them). O(log N + count). Ascending
-- stored order is rank order (ZRANGE, not REV).
local function rows(start, count)
  if count <= 0 then return {}, {} end
  local range = redis.call('ZRANGE', KEYS[2], start, start + count - 1, 'WITHSCORES')
  if #range == 0 or KEYS[3] == KEYS[1] then return range, {} end
  local ids = {}
  for i = 1, #range, 2 do ids[#ids + 1] = plen > 0 and range[i]:sub(plen + 1) or range[i] end
  return range, redis.call('HMGET', KEYS[3], unpack(ids))
end
local memo = {}
-- the rank of the member with stored value `stored` at 0-based position r0, by the rank type
-- (sm: its set member, read on a sub-score board)
local function rank_of(stored, r0, sm)
  return rank_in(KEYS[2], KEYS[4], base, rank_type, stored, r0, memo,
                 spl > 0 and sm and sm:sub(1, spl) or nil)
end
-- The ranks of a range {member, stored, ...} from 0-based position start, by the rank type: {}
-- for ordinal (the caller counts). Ranks are global: the first entry's is asked of the whole set
-- (one ZCOUNT), each next one follows from it (a new key: its position + 1 for competition, one
-- more for dense; the same key: the same rank), so a tie group across a page edge has one rank.
local function ranks(range, start)
  local out = {}
  if (rank_type ~= 'competition' and rank_type ~= 'dense') or #range == 0 then return out end
  local prev = math.floor(tonumber(range[2]) / base)
  local prevsp = spl > 0 and range[1]:sub(1, spl)
  local r = rank_of(tonumber(range[2]), start, range[1])
  out[1] = r
  for i = 2, #range / 2 do
    local key = math.floor(tonumber(range[2 * i]) / base)
    local sp = spl > 0 and range[2 * i - 1]:sub(1, spl)
    if key ~= prev or sp ~= prevsp then
      prev, prevsp = key, sp
      if rank_type == 'competition' then r = start + i else r = r + 1 end
    end
    out[i] = r
  end
  return out
end
-- The ids ARGV[from..] on the set (lookup.lua, page.lua's `with`): found {id, stored, rank0,
-- rank, ...} in the order asked, missing {id, ...}, fids (the found ids, for their records) and
-- prefixes (the found's set-member prefixes on a `wide` board: their sub-scores).
-- O(k log N) for k ids: one ZMSCORE, one ZRANK per id found (and one HMGET of a wide board's tie
-- prefixes).
local function lookup_ids(from)
  local ids = {}
  for i = from, #ARGV do ids[#ids + 1] = ARGV[i] end
  local sms = ids
  if plen > 0 then -- a wide board's set members: the ids' tie prefixes, then the ids
    local p = redis.call('HMGET', KEYS[5], unpack(ids))
    sms = {}
    for i = 1, #ids do sms[i] = p[i] and p[i] .. ids[i] or ids[i] end
  end
  local got = redis.call('ZMSCORE', KEYS[2], unpack(sms))
  local found, missing, fids, prefixes = {}, {}, {}, {}
  for i = 1, #ids do
    if got[i] then
      local rank0 = redis.call('ZRANK', KEYS[2], sms[i])
      found[#found + 1] = ids[i]
      found[#found + 1] = got[i]
      found[#found + 1] = rank0
      found[#found + 1] = rank_of(tonumber(got[i]), rank0, sms[i])
      fids[#fids + 1] = ids[i]
      prefixes[#prefixes + 1] = sms[i]:sub(1, plen)
    else
      missing[#missing + 1] = ids[i]
    end
  end
  return found, missing, fids, prefixes
end
-- page `page` of `size` entries: page.lua's reply {settings, total, size, {member, stored, ...},
-- {record|nil, ...}, ranks}. O(log N + size).
local function page_reply(page, size)
  local total = redis.call('ZCARD', KEYS[2])
  local start = (page - 1) * size
  local range, records = {}, {}
  if start < total then range, records = rows(start, size) end
  return {settings, total, size, range, records, ranks(range, start)}
end
-- A page_reply's range as one string, when the script read the records (one Redis): out[4]
-- ({member, stored, ...}) becomes its members and stored values with a NUL between two
-- (table.concat: no number text; Redis hashes every byte of a string Lua makes, so the records,
-- most of a page's bytes, stay Redis' own array, whose length is the entries'). The C side skips
-- a `wide` member's prefix (its length is the layout's) before it looks for the NUL; ids hold
-- none. After times() (which reads the range). On a cluster (the records left to the caller,
-- records.h) and for an empty page, out as it is.
local function packed(out)
  local range = out[4]
  if #range == 0 or KEYS[3] == KEYS[1] then return out end
  out[4] = table.concat(range, '\0')
  return out
end
-- page_reply with the times of a tracked board, packed (page_fill.lua's and a plain page.lua's
-- reply)
local function page_reply_timed(page, size)
  return packed(times(page_reply(page, size), 4))
end
-- `size` entries centred on 0-based position `center` of `total`, clamped at both ends:
-- {settings, total, size, start0, range, records, ranks}. O(log N + size).
local function window(center, size, total)
  local start = center - math.floor(size / 2)
  if start + size > total then start = total - size end
  if start < 0 then start = 0 end
  local range, records = rows(start, size)
  return times({settings, total, size, start, range, records, ranks(range, start)}, 5)
end
-- ceil(total * num / den) exactly, for 0 <= total < 2^53 and 0 <= num <= den <= 10^6 (Lua
-- numbers are doubles: every step stays an integer below 2^53).
local function share(total, num, den)
  local q = math.floor(total / den)
  local r = total - q * den
  if r < 0 then q, r = q - 1, r + den elseif r >= den then q, r = q + 1, r - den end
  local x = r * num
  local c = math.floor(x / den)
  local rem = x - c * den
  if rem < 0 then c, rem = c - 1, rem + den elseif rem >= den then c, rem = c + 1, rem - den end
  if rem > 0 then c = c + 1 end
  return q * num + c
end

#!lua
--@script waits
-- write.lua -- score writes (set | best | incr) to one board or to several at once, applied in
-- order, O(k log N) per board for k entries in few commands: per board one ZMSCORE of every
-- member, at most one bounded ZRANGE BYSCORE LIMIT 0 1 per tie group the entries enter, one
-- variadic ZADD, one HINCRBY of the board's write counter, a bounded ZPOPMAX when the board keeps
-- only its top `max_members`, and ZRANK per member when ranks are asked for; one HSET of the
-- records. Each redis.call costs Lua about 4 us beyond its command, so per-entry calls are kept
-- to what the reply needs. Callers bound a call's entries and bytes so it stays short.
-- Flagged (no allow-oom): at maxmemory Redis refuses the whole call before it runs, so a write
-- refused for memory wrote nothing.
-- Layout (service/score_codec.h): stored = key * 2^T + tie; a smaller key is a better score. On
-- a `wide` board (score_layout) stored = key and the tie position is the set member's 8-byte
-- prefix (prelude_layout.lua): a member that moves gets the board's next tie position (the
-- settings' `seq`, counted per arrival, so no group is ever full) and leaves its old set member;
-- the set's ids hash maps id -> prefix.
--
-- Three phases, so that an all-or-nothing call writes nothing unless all of it can be applied:
-- settings checked (every board), results computed (reads only), then every write. On Redis
-- Cluster a call holds one board's keys only (their hash tag): the records and the registry are
-- the caller's there, and a write to several boards is refused (board.h: -EXDEV).
--
-- KEYS: per board b (0-based), KB keys from KB*b + 1: its set (the current period's on a
-- periodic board), settings hash, period index, idempotency record (P:{board}:idem:<key>; named
-- even without a key, never touched then), the set's distinct scores (P:{board}:dense[:<period>],
-- prelude_dense.lua: kept in this call for every change of the set, the max_members trim
-- included, and listed in the period index with the set when this call starts it); then the
-- records hash and the registry set. On Redis Cluster (one board a call) those two are in other
-- slots: both are KEYS[2] again, and the caller writes the records of the entries applied and
-- adds a new board to the registry; the period index of a board without periods and the
-- idempotency record of a call without a key are KEYS[2] there too (a key that does not exist
-- makes a migrating slot refuse the call). The distinct scores are always named: in the board's
-- slot, and they exist exactly when the set does. The sixth key is the set's ids hash (used on a
-- `wide` board only; listed in the period index with the set); the seventh its updated_at hash
-- (id -> ms; used on a board that tracks it).
-- ARGV[1] entries n   ARGV[2] boards nb   ARGV[3] '1' return ranks, '0' not, 'r' return only
-- which entries were refused alone (brief sections, below; never with a digest)
-- ARGV[4] '1' all or nothing
-- (an entry whose result leaves the range refuses the whole call; '0': such an entry is refused
-- alone: NDJSON). Either way a full tie group stops the call after the entries before it.
-- ARGV[5] '1' a board that does not exist is created with the settings below (they must be the
-- defaults), '0' refused   ARGV[6] '1' return each entry's previous score and rank
-- ARGV[7] the request's digest ('' without an Idempotency-Key)   ARGV[8] its record's TTL (ms).
-- With a digest the caller always sends every entry of the request: a record of this digest
-- that says `done` < n entries were applied (a call stopped by a full tie group, or a retry
-- after it) makes this call apply entries done..n-1 only, and its reply covers all n.
-- ARGV[9] tie cap   ARGV[10] an upload's chunk number ('' none: not a chunk of an upload)
-- ARGV[11] '1': the chunk before it must be applied in full, else the call is refused (status 6)
-- and writes nothing. With a chunk number the fourth key is the upload's sequence key
-- (P:{board}:upload:<token>, never with a digest) and ARGV[8] its TTL: a call that handles all n
-- entries sets it to the next chunk's number as its last command, so a chunk sent behind another
-- one still in flight is applied only after that one was applied whole (an NDJSON upload keeps two
-- chunks in flight, and the first failure stops the second inside Redis).
-- then HB values per board: 2^T, tiebreak, largest |key|, order, score_decimals, default
-- page_size, default page_ttl_ms, board name, a new unique generation (stored as `gen` and
-- `life` if this call creates the board), period kind, UTC offset (minutes), '1' for a periodic board, the current
-- period's start (ms), score_layout, track_updated_at ('1', '0'), the time (ms since the epoch)
-- an entry whose score this call changes gets as its updated_at on a board that tracks it (kept
-- in the set's updated_at hash, the seventh key, listed in the period index with the set).
-- Order, tiebreak, decimals, period, offset, score_layout and track_updated_at are checked
-- against the
-- settings hash; a periodic board's set is listed in the period index with its period's start
-- (ZADD NX) in the same call as its first write, so every period set is listed while it exists
-- (sweep.lua removes the sets of periods no longer readable; this call says when to run it).
-- then per entry: member, op, record JSON or '', and per board: key (or key delta for incr); an
-- incr whose result has a lowest or highest key it may take (its ceiling and floor, in key
-- order) sends 'delta lo hi' there instead, '' for the one it lacks (incr_args).
-- ARGV[12] 'f': the entries come in the short layout instead (an upload's chunk, one board; the
-- short layout's comment below), '' as above.
--
-- Reply {status, done, info, board, replayed, section per board...}:
--   status 0: all n entries handled; 1: board `board`'s settings differ from ARGV (or it is gone
--   and ARGV are not the defaults), nothing written; 2 (all or nothing): entry `done` would leave
--   the range on board `board`, nothing written; 3: entry `done` found its tie group full on
--   board `board` (info: the group's key): the entries before it are written on every board and
--   their results given (compact the group, then send the rest); 4: board `board` does not
--   exist (ARGV[5]
--   '0'), nothing written; 5: the idempotency record of board `board` holds another request's
--   digest, nothing written; 6: the upload's chunk before this one (ARGV[11]) was not applied in
--   full, nothing written. replayed 1: every section is the one the first call with this
--   digest stored (nothing but the records' TTLs set again, to what is left of them: so the
--   replay is a write, and a WAIT after it covers the first call's write whatever connection
--   sent it).
--   section {listed (1: a new period set was listed), version (the board's write counter after
--   the call), 2^T, order, score_decimals (the layout the scores were stored under), trimmed
--   (members max_members removed), then per handled entry: code (0 applied or unchanged, 2 key
--   out of range: nothing written for it), stored (an integer; nil none; on a sub-score board
--   {stored, column keys...}: prelude_subscores.lua's sub_stored), rank0 (-1: none asked, or not
--   on the board after the call), updated, previous stored (nil none; as stored), previous
--   rank0 (-1 none)}; a brief section (ARGV[3] 'r') has, after the same head, the 0-based
--   indexes of the handled entries refused alone, and nothing else per entry. Stored values are
--   integers below 2^53, returned as numbers (Redis replies integers): formatting each as text
--   in Lua would cost more than the rest of its entry's work.
--@prelude export
--@prelude dense
--@prelude wide
--@prelude subscores
--@prelude defaults
local KB, HB, H0 = 7, 16, 13
local TRIM_SLACK = 64 -- members a write may remove beyond its own entries (a lowered max_members)
local n, nb = tonumber(ARGV[1]), tonumber(ARGV[2])
local want_rank, atomic, create_ok, want_prev =
  ARGV[3] == '1', ARGV[4] == '1', ARGV[5] == '1', ARGV[6] == '1'
local digest, cap = ARGV[7], tonumber(ARGV[9])
local chunk = ARGV[10]
local brief = ARGV[3] == 'r' and digest == ''
local E0 = H0 + HB * nb
local EV = 3 + nb
local items, registry = KEYS[KB * nb + 1], KEYS[KB * nb + 2]
local fmt = '%.17g'

local function hdr(b, k) return ARGV[H0 + HB * b + k] end
-- 1 set, 2 settings, 3 index, 4 idem, 5 distinct scores, 6 ids hash (wide), 7 updated_at hash
local function key_of(b, name) return KEYS[KB * b + name] end

-- Phase 0: a request already applied under this Idempotency-Key is answered from its record
-- {digest, done, section, life}; one applied in part (a full tie group stopped it) goes on after
-- the entries its record holds. A record belongs to the life of its board (the settings' `life`:
-- set by the board's creation and by a layout change, never by a reset; '' on a board an older
-- rankd created, and in a record an older rankd wrote): a record of a board that no longer
-- exists, or of another life (the board was deleted, re-created, re-laid-out), is not this
-- board's: the key is a new request there, and its record is written again. Each board is
-- judged alone: one of several boards may have a new life while the others replay (a write to
-- several boards is one entry, so no record of it is partial).
-- An upload's chunk sent behind its predecessor: applied only after that one was applied whole.
if chunk ~= '' and ARGV[11] == '1' and redis.call('GET', key_of(0, 4)) ~= chunk then
  return {6, 0, '', 0, 0}
end

local replay, replays, prior, first, life = {}, 0, {}, 0, {}
if digest ~= '' then
  for b = 0, nb - 1 do
    local meta = key_of(b, 2)
    local v = nil
    if redis.call('EXISTS', meta) == 1 then
      life[b] = redis.call('HGET', meta, 'life') or ''
      v = redis.call('GET', key_of(b, 4))
    else
      life[b] = hdr(b, 8) -- the life this call gives the board if it creates it
    end
    local rec = v and cmsgpack.unpack(v)
    if rec and (rec[4] or '') ~= life[b] then rec = nil end
    if rec then
      if rec[1] ~= digest then return {5, 0, '', b, 0} end
      if rec[2] >= n then
        replay[b] = rec[3]
        replays = replays + 1
      else
        prior[b] = rec[3]
        first = rec[2]
      end
    end
  end
  if replays == nb then
    local out = {0, n, '', 0, 1}
    for b = 0, nb - 1 do
      out[#out + 1] = replay[b]
      -- the record's own TTL set again: a write the replicas see, so a WAIT after this call
      -- (--write-replicas) waits for them to reach the first call's write, on any connection
      local ttl = redis.call('PTTL', key_of(b, 4))
      if ttl > 0 then redis.call('PEXPIRE', key_of(b, 4), ttl) end
    end
    return out
  end
end

-- Phase 1: every board's settings as the caller assumed them.
local create, maxm, exports = {}, {}, {}
for b = 0, nb - 1 do
  if not replay[b] then
    local m = redis.call('HMGET', key_of(b, 2), 'order', 'tiebreak', 'score_decimals', 'period',
                         'timezone', 'max_members', 'exports', 'score_layout', 'track_updated_at')
    if not m[1] then
      if not create_ok then return {4, 0, '', b, 0} end
      -- a new board gets the defaults; settings read before a concurrent delete must not revive it
      if hdr(b, 3) ~= BOARD_ORDER_DEFAULT or hdr(b, 1) ~= BOARD_TIEBREAK_DEFAULT or
         hdr(b, 4) ~= BOARD_DECIMALS_DEFAULT or hdr(b, 5) ~= BOARD_PAGE_SIZE_DEFAULT or
         hdr(b, 6) ~= BOARD_PAGE_TTL_MS_DEFAULT or hdr(b, 9) ~= BOARD_PERIOD_DEFAULT or
         hdr(b, 10) ~= BOARD_TIMEZONE_DEFAULT or hdr(b, 13) ~= BOARD_SCORE_LAYOUT_DEFAULT or
         hdr(b, 14) ~= BOARD_TRACK_UPDATED_AT_DEFAULT then
        return {1, 0, '', b, 0}
      end
      create[b] = true
    elseif m[1] ~= hdr(b, 3) or m[2] ~= hdr(b, 1) or m[3] ~= hdr(b, 4) or
           (m[4] or BOARD_PERIOD_DEFAULT) ~= hdr(b, 9) or
           (m[5] or BOARD_TIMEZONE_DEFAULT) ~= hdr(b, 10) or
           (m[8] or BOARD_SCORE_LAYOUT_DEFAULT) ~= hdr(b, 13) or
           (m[9] or BOARD_TRACK_UPDATED_AT_DEFAULT) ~= hdr(b, 14) then
      return {1, 0, '', b, 0}
    end
    maxm[b] = tonumber(m[6] or '0') or 0
    exports[b] = m[7]
  end
end

-- An incr's value on a board: its delta (a number, and its text), and the lowest and highest key
-- its result may take (nil none), from 'delta' or 'delta lo hi'.
local function incr_args(text)
  local d, lo, hi = text:match('^(%S+) (%S*) (%S*)$')
  if not d then return tonumber(text), text, nil, nil end
  return tonumber(d), d, tonumber(lo), tonumber(hi)
end

local function result_key(op, arg, oldkey, lo, hi)
  local key = arg
  if op == 'incr' then
    key = (oldkey or 0) + arg
    if lo and key < lo then key = lo end
    if hi and key > hi then key = hi end
  elseif op == 'best' and oldkey and oldkey <= arg then
    key = oldkey
  end
  return key
end

-- The short layout (ARGV[12] 'f', board_write_args_build): an upload's chunk, one board without
-- sub-scores or the wide layout, tiebreak first or last, every entry a `set` of a member named
-- once in the chunk, every key in range. From E0: g (the chunk's distinct keys), c, the ZADD's
-- pairs (stored, member) of the n entries, their n records ('' none), the g keys as text, then c
-- pairs (a key's index in those, 1-based; the tie its first entry takes). The caller numbered
-- each key's entries in order from that tie (first: up from 0 for a key it did not name; last:
-- down from cap - 1): the stored values are this call's exactly when every member is new to the
-- board and each key's group is as the caller believed (one it did not name has no member, one
-- it named takes that tie next). Then no entry needs Lua work of its own: the plan of phase 2 is
-- made from the arguments as they are, in few passes. Else (`lapsed`) the entries are laid out
-- as the general layout (AV) and the call goes on as any other; its reply's info says 'g' then.
local AV, plan0, got0, lapsed = ARGV, nil, nil, false
if ARGV[12] == 'f' then
  local g, c = tonumber(ARGV[E0]), tonumber(ARGV[E0 + 1])
  local P = E0 + 2
  local R, D = P + 2 * n, P + 3 * n
  local C = D + g
  local z, dz, base, tiebreak = key_of(0, 1), key_of(0, 5), tonumber(hdr(0, 0)), hdr(0, 1)
  local kmax, layout = tonumber(hdr(0, 2)), hdr(0, 13)
  local members, argv = {}, ARGV
  for i = 1, n do members[i] = argv[P + 2 * i - 1] end
  got0 = redis.call('ZMSCORE', z, unpack(members))
  local ok = nb == 1 and brief and not replay[0] and tiebreak ~= 'id' and
             member_prefix(tiebreak, layout) == 0 and sub_count(layout) == 0
  for i = 1, n do
    if got0[i] then ok = false break end
  end
  local cont, dense = {}, nil
  for k = 1, ok and g or 0 do
    local key = tonumber(argv[D + k - 1])
    if key > kmax or key < -kmax then ok = false end
  end
  if ok then
    for k = 0, c - 1 do cont[tonumber(argv[C + 2 * k])] = tonumber(argv[C + 2 * k + 1]) end
    dense = dense_state(z, dz)
    if dense == 'new' then
      ok = c == 0
    elseif dense ~= 'kept' then
      ok = false -- a set written before its distinct scores were kept: groups read one by one
    else
      local ask = {}
      for k = 1, g do
        if not cont[k] then ask[#ask + 1] = argv[D + k - 1] end
      end
      local has = #ask > 0 and redis.call('ZMSCORE', dz, unpack(ask)) or {}
      for k = 1, #ask do
        if has[k] then ok = false break end
      end
      for k, t in pairs(cont) do
        if not ok then break end
        local lo = tonumber(argv[D + k - 1]) * base
        if tiebreak == 'first' then
          local r = redis.call('ZRANGE', z, lo + cap - 1, lo, 'BYSCORE', 'REV', 'LIMIT', 0, 1,
                               'WITHSCORES')
          ok = r[2] ~= nil and tonumber(r[2]) - lo + 1 == t
        else
          local r = redis.call('ZRANGE', z, lo, lo + cap - 1, 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
          ok = r[2] ~= nil and tonumber(r[2]) - lo - 1 == t
        end
      end
    end
  end
  if ok then
    -- the held keys (text -> text: dense_update adds them; none was held before), the records
    local texts, records, nr, cur0 = {}, {}, 0, {}
    for k = 1, dense and g or 0 do
      if not cont[k] then texts[argv[D + k - 1]] = argv[D + k - 1] end
    end
    for i = 1, n do
      local r = argv[R + i - 1]
      if r ~= '' then records[nr + 1], records[nr + 2], nr = members[i], r, nr + 2 end
    end
    if exports[0] then
      for i = 1, n do cur0[members[i]] = false end
    end
    plan0 = {adds = {unpack(argv, P, P + 2 * n - 1)}, results = {}, adds_before = {},
             cur0 = cur0, known = {}, texts = texts, left = {}, refused = {}, nref = {}, plen = 0,
             sm0 = {}, ids = {}, spl = 0, records = records, seq = 0,
             dense_of = function() return dense end}
  else
    lapsed, AV = true, {}
    for i = 0, n - 1 do
      local e = E0 + EV * i
      AV[e], AV[e + 1], AV[e + 2] = argv[P + 2 * i + 1], 'set', argv[R + i]
      AV[e + 3] = key_text(math.floor(tonumber(argv[P + 2 * i]) / base))
    end
  end
end

-- The members of the call in entry order (a member repeated in the call is named again: ZMSCORE
-- answers it twice, and its later entries read its earlier results from `cur`).
local members = {}
if not plan0 then
  local e, argv = E0 + EV * first, AV
  for j = 1, n - first do
    members[j] = argv[e]
    e = e + EV
  end
end

-- Phase 2, per board: the results, with reads only. Tie groups: the tie just after the group's
-- last entry (first) or just before its first (last), read once per group with one bounded
-- ZRANGE and then kept here as entries join it. A member leaving a group is not subtracted: the
-- next arrival still goes after every entry, so the order holds (a gap in the numbering is
-- harmless). The loop over the entries is the script's hot path (an import chunk's hundreds of
-- entries): it reads each argument once, calls no function for a plain set into a known group,
-- and gathers what the writes need (the ZADD's pairs with their stored values as text: a number
-- handed to redis.call is formatted with '%.17g', twice the cost of '%d'; the keys held and
-- left, for the distinct scores; the records of a one-board call).
local plans = {}
plans[0] = plan0
local status, done, info, at_board = 0, n, '', 0
for b = 0, nb - 1 do
  if not replay[b] and not plan0 then
    local z, base, tiebreak, kmax = key_of(b, 1), tonumber(hdr(b, 0)), hdr(b, 1), tonumber(hdr(b, 2))
    -- member -> stored value (number) or false: after this call's writes so far (nil: not written
    -- yet, `got` has it), and before the call (set for the members written)
    local cur, cur0, got = {}, {}, {}
    -- wide: member -> its set member before the call (false: none), the next tie position
    local layout = hdr(b, 13)
    local plen, sm0, seq = member_prefix(tiebreak, layout), {}, 0
    -- a sub-score board: member -> its column keys now (nil: none)
    local nsub, cursub = sub_count(layout), {}
    if plen > 0 and #members > 0 then
      local p = redis.call('HMGET', key_of(b, 6), unpack(members))
      local sms = {}
      for i = 1, #members do
        sm0[members[i]] = p[i] and p[i] .. members[i] or false
        if p[i] then sms[#sms + 1] = sm0[members[i]] end
        if p[i] and nsub > 0 then cursub[members[i]] = sub_keys(p[i], nsub) end
      end
      local zs = #sms > 0 and redis.call('ZMSCORE', z, unpack(sms)) or {}
      local j = 0
      for i = 1, #members do
        local v = false
        if sm0[members[i]] then
          j = j + 1
          v = zs[j] and tonumber(zs[j]) or false
        end
        cur[members[i]], cur0[members[i]] = v, v
      end
      seq = tonumber(redis.call('HGET', key_of(b, 2), 'seq') or '0')
    elseif #members > 0 then
      -- got[j]: entry first + j - 1's member (asked already by a chunk whose layout lapsed)
      got = got0 or redis.call('ZMSCORE', z, unpack(members))
    end
    if atomic then
      -- would any entry leave the range? (members repeated in the call included), before a full
      -- group could cut the call: all or nothing for range holds across the calls of a write
      local keys, subs = {}, {}
      for i = first, n - 1 do
        local e = E0 + EV * i
        local member, k = AV[e], e + 3 + b
        if keys[member] == nil then
          local v = cur[member]
          if v == nil then v = got[i - first + 1] and tonumber(got[i - first + 1]) or false end
          keys[member] = v and math.floor(v / base) or false
          subs[member] = cursub[member]
        end
        local op, st = entry_op(AV[e + 1])
        local arg, lo, hi = tonumber(AV[k]), nil, nil
        if op == 'incr' then
          local d, _, l, h = incr_args(AV[k])
          arg, lo, hi = d, l, h
        end
        local key = result_key(op, arg, keys[member] or nil, lo, hi)
        local ck = nil
        if nsub > 0 then
          key, ck = sub_result(op, key, arg, keys[member] or nil, subs[member],
                               sub_given(st, layout))
        end
        if key > kmax or key < -kmax or ck == false then return {2, i, '', b, 0} end
        keys[member], subs[member] = key, ck
      end
    end
    -- adds: the ZADD's pairs (stored, member); adds_before[i] (a call to several boards): the
    -- ZADD values of the entries before entry i (a full group on another board cuts there);
    -- known: keys some member held before the call (their tie group was read); texts: each key
    -- written -> its text as the caller sent it (exact, no formatting) or true; left: the keys the
    -- written members held before the call; dup: a member written twice (its first key may not be
    -- held at the end); refused: entries refused alone (index -> true, and in order in nref)
    local plan = {adds = {}, results = {}, adds_before = {}, cur0 = cur0, known = {}, texts = {},
                  left = {}, refused = {}, nref = {}, plen = plen, sm0 = sm0, ids = {},
                  spl = SUB_BYTES * nsub, records = nb == 1 and {} or nil}
    -- Whether the distinct scores are kept (dense_state), asked once, before any write of the call
    local dense_known, dense = false, nil
    local function dense_of()
      if not dense_known then dense, dense_known = dense_state(z, key_of(b, 5)), true end
      return dense
    end
    -- Tie groups known empty before the call (key text -> true): one ZMSCORE of the texts of the
    -- keys entries may enter (not an incr's result, nor the key an entry's member holds already)
    -- in the distinct scores tells which groups have members (a key the side set lacks has none);
    -- only those are read one by one (next_tie). With them it asks for `probe`, the key a member
    -- of the call held before it: the side set holds that key exactly when it is kept, so the
    -- same command says whether it is (dense_state's EXISTS not sent). Without a probe, one key
    -- is read as its group (next_tie), several with dense_state first; a set this call starts has
    -- no member at all. Keys of incr results are read one by one.
    local empty, all_empty = {}, false
    if tiebreak ~= 'id' and plen == 0 then -- (a wide board reads no tie group)
      local texts, tseen, probe = {}, {}, nil
      local e, argv, nt = E0 + EV * first + 3 + b, AV, 0
      for j = 1, n - first do
        local t, op, g = argv[e], argv[e - 2 - b], got[j]
        local held = g and math.floor(tonumber(g) / base)
        if held and not probe then probe = key_text(held) end
        if not tseen[t] and (op == 'set' or op == 'best' or
                             (op ~= 'incr' and entry_op(op) ~= 'incr')) and
           not (held and (held == tonumber(t) or (op == 'best' and held <= tonumber(t)))) then
          tseen[t], nt = true, nt + 1
          texts[nt] = t
        end
        e = e + EV
      end
      if nt > 0 and probe then
        texts[nt + 1] = probe
        local has = redis.call('ZMSCORE', key_of(b, 5), unpack(texts))
        dense, dense_known = has[nt + 1] and 'kept' or false, true
        for i = 1, dense and nt or 0 do
          if not has[i] then empty[texts[i]] = true end
        end
      elseif nt > 1 then
        local d = dense_of()
        if d == 'new' then
          all_empty = true
        elseif d == 'kept' then
          local has = redis.call('ZMSCORE', key_of(b, 5), unpack(texts))
          for i = 1, nt do
            if not has[i] then empty[texts[i]] = true end
          end
        end
      end
    end
    local edge = {} -- key -> the tie an arrival takes next
    local function next_tie(key, lo, text)
      local t = edge[key]
      if t == nil and (all_empty or (text and empty[text])) then
        t = tiebreak == 'first' and 0 or cap - 1
      elseif t == nil then
        if tiebreak == 'first' then
          local r = redis.call('ZRANGE', z, lo + cap - 1, lo, 'BYSCORE', 'REV', 'LIMIT', 0, 1,
                               'WITHSCORES')
          t = r[2] and tonumber(r[2]) - lo + 1 or 0
          if r[2] then plan.known[key] = true end
        elseif tiebreak == 'last' then
          local r = redis.call('ZRANGE', z, lo, lo + cap - 1, 'BYSCORE', 'LIMIT', 0, 1, 'WITHSCORES')
          t = r[2] and tonumber(r[2]) - lo - 1 or cap - 1
          if r[2] then plan.known[key] = true end
        else
          t = 0
        end
      end
      return t
    end
    local adds, texts, left, records = plan.adds, plan.texts, plan.left, plan.records
    local step = tiebreak == 'last' and -1 or (tiebreak == 'first' and 1 or 0)
    local e, j, na, nr = E0 + EV * first, 0, 0, 0 -- na, nr: #adds, #records
    local argv, tonum, floor, format = AV, tonumber, math.floor, string.format
    for i = first, n - 1 do
      local member, op, st = argv[e], argv[e + 1], ''
      if op ~= 'set' and op ~= 'best' and op ~= 'incr' then op, st = entry_op(op) end
      local k = e + 3 + b
      local text = argv[k]
      local record = argv[e + 2]
      e, j = e + EV, j + 1
      local arg = tonum(text)
      local old = cur[member]
      if old == nil then
        old = got[j]
        old = old and tonum(old) or false
      end
      local oldkey, oldck = old and floor(old / base) or nil, cursub[member]
      local key = arg
      if op ~= 'set' then
        local lo, hi = nil, nil
        if op == 'incr' then arg, text, lo, hi = incr_args(text) end
        key = result_key(op, arg, oldkey, lo, hi)
      end
      local ck, same = nil, old and key == oldkey
      if nsub > 0 then
        key, ck = sub_result(op, key, arg, oldkey, cursub[member], sub_given(st, layout))
        same = old and ck and tuple_cmp(key, ck, oldkey, cursub[member]) == 0
      end
      local code, stored, updated = 0, old, 0
      if nb > 1 then plan.adds_before[i] = na end
      if key > kmax or key < -kmax or ck == false then
        code = 2 -- refused alone (all or nothing refused the call above)
        plan.refused[i] = true
        plan.nref[#plan.nref + 1] = i
      elseif plen > 0 and not same then
        -- wide: the next tie position (first: ascending; last: descending from 2^53 - 1),
        -- after the sub-score columns of a sub-score board (none on tiebreak id)
        local tie = tiebreak == 'last' and 9007199254740991 - seq or seq
        seq = seq + 1
        stored, updated = key, 1
        cur[member] = stored
        cursub[member] = ck
        local prefix = ck and sub_bytes(ck) or ''
        if tiebreak ~= 'id' then prefix = prefix .. tie_bytes(tie) end
        adds[na + 1], adds[na + 2], na = stored, prefix .. member, na + 2
        plan.ids[#plan.ids + 1] = member
        if key == arg then texts[key] = text end
      elseif not (old and key == oldkey) then
        local low = key * base
        local tie = edge[key]
        if tie == nil then tie = next_tie(key, low, key == arg and text or nil) end
        if tie >= cap or tie < 0 then
          if i < done then status, done, info, at_board = 3, i, string.format(fmt, key), b end
          break
        end
        edge[key] = tie + step
        stored = low + tie
        updated = 1
        cur[member] = stored
        if cur0[member] == nil then cur0[member] = old else plan.dup = true end
        adds[na + 1], adds[na + 2], na = format('%d', stored), member, na + 2
        if key == arg then
          texts[key] = text
        elseif not texts[key] then
          texts[key] = true
        end
        if old then left[oldkey] = true end
      end
      if records and record ~= '' and code == 0 then
        records[nr + 1], records[nr + 2], nr = member, record, nr + 2
      end
      if not brief then
        local prev, prev_rank = false, -1
        if want_prev and old then
          prev = sub_stored(old, oldck)
          prev_rank = redis.call('ZRANK', z, plen > 0 and sm0[member] or member)
        end
        local r = plan.results
        r[#r + 1] = code
        r[#r + 1] = sub_stored(stored, cursub[member]) or false
        r[#r + 1] = updated
        r[#r + 1] = prev
        r[#r + 1] = prev_rank
      end
    end
    plan.seq = seq
    plan.dense_of = dense_of
    plans[b] = plan
  end
end

-- updated_at (a board that tracks it): the members of `adds` ({stored, set member, ...}: the
-- entries whose score this call changes; a set member is the id after plen bytes) get this
-- call's time in the set's updated_at hash, listed in a periodic board's index with its set.
local function updated_at_note(b, adds, plen)
  local kv = {}
  for k = 2, #adds, 2 do
    kv[#kv + 1] = plen > 0 and adds[k]:sub(plen + 1) or adds[k]
    kv[#kv + 1] = hdr(b, 15)
  end
  redis.call('HSET', key_of(b, 7), unpack(kv))
  if hdr(b, 11) == '1' then redis.call('ZADD', key_of(b, 3), 'NX', hdr(b, 12), key_of(b, 7)) end
end
-- the members max_members removed ({set member, stored, ...}) leave the updated_at hash
local function updated_at_popped(b, popped, plen)
  local ids = {}
  for k = 1, #popped, 2 do ids[#ids + 1] = plen > 0 and popped[k]:sub(plen + 1) or popped[k] end
  redis.call('HDEL', key_of(b, 7), unpack(ids))
end

-- Phase 3: the writes of the entries handled (ZADD applies its pairs in order, HSET its fields:
-- a member given twice ends as its last entry, as one by one), board by board; a full group on
-- one board cuts every board's writes at the same entry.
local RV = 5 -- plan values per entry: code, stored, updated, previous stored, previous rank0
if lapsed and status == 0 then info = 'g' end
local out = {status, done, info, at_board, 0}
for b = 0, nb - 1 do
  if replay[b] then
    out[#out + 1] = replay[b]
  else
    local z, meta, plan = key_of(b, 1), key_of(b, 2), plans[b]
    local adds = plan.adds
    if done < n and nb > 1 and plan.adds_before[done] then
      adds = {unpack(plan.adds, 1, plan.adds_before[done])}
    end
    if create[b] and (#adds > 0 or done > first) then
      redis.call('HSET', meta, 'order', hdr(b, 3), 'tiebreak', hdr(b, 1), 'score_decimals', hdr(b, 4),
                 'page_size', hdr(b, 5), 'page_ttl_ms', hdr(b, 6), 'gen', hdr(b, 8),
                 'life', hdr(b, 8))
      if registry ~= KEYS[2] then redis.call('SADD', registry, hdr(b, 7)) end
    end
    local listed, trimmed = 0, 0
    if #adds > 0 then
      local dz, base = key_of(b, 5), tonumber(hdr(b, 0))
      local dense = plan.dense_of() -- before this board's first write
      if hdr(b, 14) == '1' then updated_at_note(b, adds, plan.plen) end
      local wide = plan.plen > 0 and wide_apply(z, key_of(b, 6), key_of(b, 2), plan, adds)
      if wide then adds = wide.adds end
      redis.call('ZADD', z, unpack(adds))
      if hdr(b, 11) == '1' and dense == 'new' then
        redis.call('ZADD', key_of(b, 3), 'NX', hdr(b, 12), dz) -- the side set goes with its set
        if plan.plen > 0 then redis.call('ZADD', key_of(b, 3), 'NX', hdr(b, 12), key_of(b, 6)) end
      end
      if hdr(b, 11) == '1' and redis.call('ZADD', key_of(b, 3), 'NX', hdr(b, 12), z) == 1 then
        listed = 1
        redis.call('PERSIST', z) -- a set an older rankd wrote carries a TTL: it must not expire
      end
      if dense and plan.spl > 0 then
        sub_dense(z, dz, plan, adds, wide)
      elseif dense and not wide and not plan.dup and (done == n or nb == 1) then
        -- each member written once, none cut: every key written is held, `left` what they left
        dense_update(z, dz, base, plan.texts, plan.left, dense == 'kept' and plan.known)
      elseif dense then
        -- the keys the written members hold now (ZADD applied the pairs in order: a member's
        -- last pair is its value) and the keys they held before the call
        local final, held, left = {}, {}, {}
        for k = 1, #adds, 2 do final[wide and wide.id[adds[k + 1]] or adds[k + 1]] = adds[k] end
        for m, v in pairs(final) do
          local key = math.floor(v / base)
          held[key] = plan.texts[key] or true
          local v0 = plan.cur0[m]
          if v0 then left[math.floor(v0 / base)] = true end
        end
        dense_update(z, dz, base, held, left, dense == 'kept' and plan.known)
      end
      -- keep the top max_members: a call adds at most its entries, so removing at most that
      -- many (plus a slack that catches up after max_members was lowered) keeps the work bounded.
      -- The worst members are the largest stored values: ZPOPMAX returns them with their values
      -- (their keys are keys they left, for whatever keeps per-key state of the set). Their
      -- records stay: records are shared by boards.
      local popped = {}
      if maxm[b] > 0 then
        local excess = redis.call('ZCARD', z) - maxm[b]
        if excess > 0 then
          popped = redis.call('ZPOPMAX', z, math.min(excess, #adds / 2 + TRIM_SLACK))
          trimmed = #popped / 2
          if wide and #popped > 0 then wide_popped(key_of(b, 6), plan.plen, popped) end
          if hdr(b, 14) == '1' and #popped > 0 then updated_at_popped(b, popped, plan.plen) end
          -- the popped members are a run of the set's tail (highest stored values first): the
          -- keys strictly inside it go, its two edge keys are counted
          if dense and #popped > 0 and plan.spl > 0 then
            dense_tuples(z, dz, {}, tuples_of(popped, plan.spl))
          elseif dense and #popped > 0 then
            dense_cut(z, dz, base, tonumber(popped[#popped]), tonumber(popped[2]))
          end
        end
      end
      if exports[b] then -- an export copying z sees each changed member as it was before
        local before = {}
        for k = 2, #adds, 2 do
          if wide then -- the old set member at its value, the new one absent before
            local id = wide.id[adds[k]]
            before[adds[k]] = false
            if plan.sm0[id] then before[plan.sm0[id]] = plan.cur0[id] end
          else
            before[adds[k]] = plan.cur0[adds[k]]
          end
        end
        for k = 1, #popped, 2 do
          local m = popped[k]
          if before[m] == nil then before[m] = plan.cur0[m] == nil and tonumber(popped[k + 1]) or plan.cur0[m] end
        end
        export_note(key_of(b, 2), exports[b], z, before)
      end
    end
    local version = done > first and redis.call('HINCRBY', meta, 'version', 1) or
                    tonumber(redis.call('HGET', meta, 'version') or '0')
    local p = prior[b]
    local section = {listed, version, tonumber(hdr(b, 0)), hdr(b, 3), tonumber(hdr(b, 4)),
                     trimmed + (p and p[6] or 0)}
    local r, ranks = plan.results, {}
    if brief then
      for _, i in ipairs(plan.nref) do
        if i < done then section[#section + 1] = i end
      end
    end
    for i = brief and done or 0, done - 1 do
      local m = AV[E0 + EV * i]
      local code, stored, updated, prev, prev_rank
      if i < first then
        local q = 6 + 6 * i
        code, stored, updated, prev, prev_rank = p[q + 1], p[q + 2], p[q + 4], p[q + 5], p[q + 6]
      else
        local q = RV * (i - first)
        code, stored, updated, prev, prev_rank = r[q + 1], r[q + 2], r[q + 3], r[q + 4], r[q + 5]
      end
      local rank = -1
      if want_rank and code == 0 then
        -- nothing written on this board by this call: a member's rank is the one it had
        if ranks[m] == nil and #adds == 0 and i >= first and prev_rank >= 0 then
          ranks[m] = prev_rank
        end
        if ranks[m] == nil then
          local sm = m
          if plan.plen > 0 then sm = plan.smnow and plan.smnow[m] or plan.sm0[m] end
          ranks[m] = sm and redis.call('ZRANK', z, sm) or -1
        end
        rank = ranks[m]
      end
      section[#section + 1] = code
      section[#section + 1] = stored
      section[#section + 1] = rank
      section[#section + 1] = updated
      section[#section + 1] = prev
      section[#section + 1] = prev_rank
    end
    if digest ~= '' and done > 0 then
      redis.call('SET', key_of(b, 4), cmsgpack.pack({digest, done, section, life[b]}), 'PX',
                 ARGV[8])
    end
    out[#out + 1] = section
  end
end

local records = nb == 1 and plans[0].records or {}
for i = first, nb == 1 and first - 1 or done - 1 do
  local e = E0 + EV * i
  local record = AV[e + 2]
  -- an entry refused alone (out of range on the only board) writes no record
  if record ~= '' and (nb > 1 or not plans[0].refused[i]) then
    records[#records + 1] = AV[e]
    records[#records + 1] = record
  end
end
if #records > 0 and items ~= KEYS[2] then redis.call('HSET', items, unpack(records)) end
if chunk ~= '' and status == 0 then -- last: this chunk is applied whole
  redis.call('SET', key_of(0, 4), tonumber(chunk) + 1, 'PX', ARGV[8])
end
return out

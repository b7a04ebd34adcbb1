#!lua flags=no-writes
--@script read-only
-- around_score.lua -- `size` entries centred on the first member whose score is at a given score
-- or worse (the last member when every score is better), clamped at both ends. O(log N + size).
-- The caller judged the score's literal (exactly, as writes are judged) under the layout it
-- assumed and sends it here with its key; that layout is checked against the settings, so a
-- stale assumption costs one more call, never a wrong key.
-- KEYS and ARGV[1..4] as prelude_read.lua; ARGV[5] order, ARGV[6] tiebreak, ARGV[7]
-- score_decimals: the layout the key was made under; ARGV[8] the key ('' when the literal is
-- refused under that layout), ARGV[9] size (0: the board's), ARGV[10] score_layout (of the layout
-- the key was made under)
-- Reply: nil when the board does not exist, the prelude's {'retry', ...} or
--   {'dense_unavailable'}, {'layout', settings} (judge again under these), {'refused',
--   settings} (the layout held: the refusal stands), else around.lua's reply
--@prelude
if (s.order or BOARD_ORDER_DEFAULT) ~= ARGV[5] or
   (s.tiebreak or BOARD_TIEBREAK_DEFAULT) ~= ARGV[6] or
   (s.score_decimals or BOARD_DECIMALS_DEFAULT) ~= ARGV[7] or
   (s.score_layout or BOARD_SCORE_LAYOUT_DEFAULT) ~= ARGV[10] then
  return {'layout', settings}
end
if ARGV[8] == '' then return {'refused', settings} end
local total = redis.call('ZCARD', KEYS[2])
local first = redis.call('ZCOUNT', KEYS[2], '-inf', '(' .. key_text(tonumber(ARGV[8]) * base))
return window(first < total and first or total - 1, page_size(ARGV[9]), total)

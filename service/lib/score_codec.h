/*
 * score_codec.h -- exact compound scores: (score, tie-break) packed into one double.
 *
 * A board's Redis sorted set is stored so that ASCENDING stored value is RANK ORDER: rank 1 is the
 * lowest stored value, so `ZRANK`/`ZRANGE` (never the REV forms) read a board in rank order, and
 * Redis' own fallback for equal stored values (member bytes ascending, memcmp) is the final,
 * deterministic tie-break.
 *
 * Terms
 *   score    the number a client sends, in board units (may have `decimals` fractional digits).
 *   scaled   score * 10^decimals, an exact integer (int64).
 *   key      the order key: -scaled on a `desc` board, +scaled on an `asc` board, so a smaller key
 *            is always a better score.
 *   tie      0 .. SCORE_TIE_CAP-1, the position of an entry inside its group of equal keys.
 *   stored   the sorted-set score: key * 2^T + tie, with T = SCORE_TIE_BITS for tiebreak first|last
 *            and T = 0 for tiebreak id (no tie bits; member bytes order equal keys).
 *
 * Bit budget (IEEE-754 binary64 represents every integer with |v| <= 2^53 exactly):
 *   first|last: |key| <= 2^32 - 1 and 0 <= tie < 2^21, so
 *               stored in [-(2^32-1)*2^21, (2^32-1)*2^21 + 2^21-1] = [-(2^53 - 2^21), 2^53 - 1].
 *   wide:       (any tiebreak) the stored value is the key, T = 0: the `id` range below; the tie
 *               position of first|last is an 8-byte big-endian prefix of the set member
 *               (schema/score-layout.md, "The wide layout"), so equal keys order by it.
 *   id:         |key| <= 2^53 - 1 with 0 decimals, stored = key. With decimals > 0 the limit is
 *               10^15 - 1, so the score in board units (scaled / 10^d) is itself exact in a double.
 * Every stored value is an exact integer, so encode/decode round-trips bit for bit and the
 * encoding is strictly monotone in (key, tie). Nothing is rounded: a score the layout cannot hold
 * is -ERANGE, a score with more fractional digits than the board keeps is -EDOM.
 * Source of the layout: schema/score-layout.md (the same text, with worked examples).
 *
 * All functions are pure and thread-safe.
 */
#ifndef RANKD_SCORE_CODEC_H
#define RANKD_SCORE_CODEC_H

#include <stddef.h>
#include <stdint.h>

/** Tie-break bits for tiebreak first|last. */
#define SCORE_TIE_BITS 21
/** Entries one group of equal scores can place before it is compacted (2^21). */
#define SCORE_TIE_CAP (INT64_C(1) << SCORE_TIE_BITS)
/** Largest |scaled| for tiebreak first|last: 2^32 - 1 = 4,294,967,295. */
#define SCORE_TIED_SCALED_MAX ((INT64_C(1) << 32) - 1)
/** Largest |scaled| for tiebreak id with score_decimals 0: 2^53 - 1. */
#define SCORE_EXACT_SCALED_MAX ((INT64_C(1) << 53) - 1)
/** Largest |scaled| for tiebreak id with score_decimals > 0: 10^15 - 1 (15 significant digits,
 *  DBL_DIG, always survive decimal -> double -> decimal; 16 may not). */
#define SCORE_DECIMAL_SCALED_MAX (INT64_C(999999999999999))
/** Largest score_decimals a board may set. */
#define SCORE_DECIMALS_MAX 9

enum score_order { SCORE_ORDER_DESC = 0, SCORE_ORDER_ASC = 1 };
enum score_tiebreak { SCORE_TIEBREAK_FIRST = 0, SCORE_TIEBREAK_LAST = 1, SCORE_TIEBREAK_ID = 2 };

/** Bytes of the tie position a `wide` board's set member starts with (tiebreak first|last). */
#define SCORE_WIDE_TIE_BYTES 8

/** How one board encodes scores. */
struct score_layout {
    enum score_order order;       /**< desc: higher score ranks first */
    enum score_tiebreak tiebreak; /**< order among equal scores */
    int decimals;                 /**< fractional digits kept, 0 .. SCORE_DECIMALS_MAX */
    int wide; /**< 0 `packed`: the tie position in the stored value's low bits; 1 `wide`: the
               *   stored value is the key, the tie position a big-endian prefix of the set member
               *   (tiebreak first|last), so every key of the `id` range is accepted */
};

/** "desc" or "asc": the name the API and the settings hash use. Never NULL. */
const char *score_order_name(enum score_order o);

/** "first", "last" or "id". Never NULL. */
const char *score_tiebreak_name(enum score_tiebreak t);

/** "packed" or "wide" (score_layout.wide): the name the API and the settings hash use. */
const char *score_layout_name(int wide);

/** How pages show a board's scores (its `score_format` setting). Display only: read by the web
 *  page and clients; nothing stored, ranked or answered depends on it. */
enum score_format {
    SCORE_FORMAT_INTEGER = 0, /**< "integer": digits grouped (the default) */
    SCORE_FORMAT_DECIMAL,     /**< "decimal": score_decimals fraction digits */
    SCORE_FORMAT_DURATION_MS, /**< "duration_ms": milliseconds shown as m:ss.mmm */
};
#define SCORE_FORMAT_COUNT 3

/** "integer", "decimal" or "duration_ms": the name the API and the settings hash use; "integer"
 *  for a value out of range. Never NULL. */
const char *score_format_name(enum score_format f);

/** The format named `text`: 0, or -EINVAL (NULL or another text; *f unchanged). */
int score_format_parse(const char *text, enum score_format *f);

/** Tie bits T of a layout: SCORE_TIE_BITS, or 0 for tiebreak id and for a `wide` layout. */
int score_codec_tie_bits(const struct score_layout *layout);

/** Bytes a set member holds before the id: SCORE_WIDE_TIE_BYTES on a `wide` board with tiebreak
 *  first|last, else 0 (the member is the id). */
size_t score_codec_member_prefix(const struct score_layout *layout);

/** Split a set member of `len` bytes into its tie position (*tie, 0 when the layout has none)
 *  and its id: returns the bytes before the id (score_codec_member_prefix, or 0 when the member
 *  is shorter than the prefix: a member rankd did not write, taken whole as the id). */
size_t score_codec_member_split(const struct score_layout *layout, const char *member, size_t len,
                                int64_t *tie);

/** Largest |scaled| the layout accepts. */
int64_t score_codec_scaled_max(const struct score_layout *layout);

/** 10^decimals as an exact double (decimals 0 .. SCORE_DECIMALS_MAX). */
double score_codec_pow10(int decimals);

/**
 * Scale a score in board units to an exact integer.
 * Returns 0 and writes *scaled, or -EINVAL (not finite), -EDOM (more fractional digits than the
 * board keeps: e.g. 0.15 on a 1-decimal board), -ERANGE (|scaled| above score_codec_scaled_max).
 * "Exact" means: `score` is the double nearest to scaled / 10^decimals, which is exactly what a
 * correctly rounding JSON parser produces for a decimal literal with that many digits.
 */
int score_codec_scale(const struct score_layout *layout, double score, int64_t *scaled);

/** A scaled score back in board units (exact for every value score_codec_scale accepted). */
double score_codec_unscale(const struct score_layout *layout, int64_t scaled);

/** Order key of a scaled score: -scaled on desc boards, scaled on asc boards. */
int64_t score_codec_key(const struct score_layout *layout, int64_t scaled);

/** Inverse of score_codec_key. */
int64_t score_codec_key_to_scaled(const struct score_layout *layout, int64_t key);

/**
 * Pack (key, tie) into the stored value. Returns 0 and writes *stored, or -ERANGE when
 * |key| > scaled max or tie is outside 0..2^T-1.
 */
int score_codec_pack(const struct score_layout *layout, int64_t key, int64_t tie, double *stored);

/**
 * Unpack a stored value. Returns 0 and writes *key and *tie, or -ERANGE when `stored` is not an
 * integer inside the layout's range (a value rankd did not write).
 */
int score_codec_unpack(const struct score_layout *layout, double stored, int64_t *key,
                       int64_t *tie);

/** The score (board units) of a stored value; -ERANGE as score_codec_unpack. */
int score_codec_decode(const struct score_layout *layout, double stored, double *score);

/** Inclusive score range in board units: [-max/10^d, +max/10^d]. */
void score_codec_range(const struct score_layout *layout, double *min, double *max);

#endif

/*
 * rank.h -- rank types and percentiles, as pure arithmetic on whole numbers.
 *
 * Ranks are 1-based and global (docs/api.md, "Rank types"). For a board in its order (desc: higher
 * first) 100, 50, 50, 30:
 *   ordinal      1, 2, 3, 4: the position (the default; ties ordered by the board's tiebreak)
 *   competition  1, 2, 2, 4: 1 + the members with a strictly better score
 *   dense        1, 2, 2, 3: 1 + the distinct better scores
 * "Score" here is the primary score only, never the tie-breaker. The Redis side (one ZCOUNT per
 * rank) is in service/lua/prelude_layout.lua; this module names the types and does the
 * percentile arithmetic exactly (no floating point: a percentile is an exact fraction, rounded
 * once).
 *
 * Pure and thread-safe; unit-tested in test/unit/test_rank.c.
 */
#ifndef RANKD_RANK_H
#define RANKD_RANK_H

#include <stddef.h>
#include <stdint.h>

enum rank_type { RANK_ORDINAL = 0, RANK_COMPETITION, RANK_DENSE };

/** "ordinal", "competition" or "dense": the API's names (and the read scripts' ARGV). */
const char *rank_type_name(enum rank_type t);

/** The rank type named s (the API's names, exactly). 0 and *out, or -EINVAL. */
int rank_type_parse(const char *s, enum rank_type *out);

/** Denominator of a percent (RANK_SHARE_DEN = 100% with RANK_PERCENT_DECIMALS fractional digits
 *  kept): P% is P * 10^4 / 10^6. */
#define RANK_PERCENT_DECIMALS 4
#define RANK_SHARE_DEN INT64_C(1000000)

/**
 * A percent literal as a query takes it: a plain decimal ([0-9]+ ('.' [0-9]+)?, leading zeros
 * allowed, no sign or exponent) from 0 to 100 with at most RANK_PERCENT_DECIMALS fractional
 * digits once trailing zeros are dropped. 0 and *share = P * 10^4 (0 .. RANK_SHARE_DEN), or
 * -EINVAL.
 */
int rank_percent_parse(const char *s, int64_t *share);

/**
 * The percentile of 1-based ordinal `rank` among `total` members (1 <= rank <= total):
 * 100 * (total - rank) / total in hundredths, rounded half up (0 .. 10000; 1 of 3 is 6667).
 * Exact for any total below 2^59. 0 when the arguments are out of range.
 */
int64_t rank_percentile_cents(int64_t total, int64_t rank);

/**
 * v / 10^decimals as the shortest decimal text (a JSON number): 6667, 2 -> "66.67"; 5000, 2 ->
 * "50"; 999000, 4 -> "99.9"; v >= 0, decimals 0..18. Cut like snprintf to len (at least 1).
 */
void rank_decimal_text(int64_t v, int decimals, char *out, size_t len);

#endif

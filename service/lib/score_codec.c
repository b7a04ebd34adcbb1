/* score_codec.c -- exact compound scores; the layout is described in score_codec.h. */
#include "score_codec.h"

#include <errno.h>
#include <math.h>
#include <string.h>

const char *score_order_name(enum score_order o)
{
    return o == SCORE_ORDER_ASC ? "asc" : "desc";
}

static const char *const score_formats[SCORE_FORMAT_COUNT] = {"integer", "decimal", "duration_ms"};

const char *score_format_name(enum score_format f)
{
    return (unsigned)f < SCORE_FORMAT_COUNT ? score_formats[f] : score_formats[0];
}

int score_format_parse(const char *text, enum score_format *f)
{
    for (int i = 0; text && i < SCORE_FORMAT_COUNT; i++)
        if (strcmp(text, score_formats[i]) == 0) {
            *f = (enum score_format)i;
            return 0;
        }
    return -EINVAL;
}

const char *score_tiebreak_name(enum score_tiebreak t)
{
    return t == SCORE_TIEBREAK_LAST ? "last" : t == SCORE_TIEBREAK_ID ? "id" : "first";
}

const char *score_layout_name(int wide)
{
    return wide ? "wide" : "packed";
}

int score_codec_tie_bits(const struct score_layout *layout)
{
    return layout->tiebreak == SCORE_TIEBREAK_ID || layout->wide ? 0 : SCORE_TIE_BITS;
}

size_t score_codec_member_prefix(const struct score_layout *layout)
{
    return layout->wide && layout->tiebreak != SCORE_TIEBREAK_ID ? SCORE_WIDE_TIE_BYTES : 0;
}

size_t score_codec_member_split(const struct score_layout *layout, const char *member, size_t len,
                                int64_t *tie)
{
    size_t plen = score_codec_member_prefix(layout);
    *tie = 0;
    if (plen == 0 || len < plen)
        return 0;
    uint64_t t = 0;
    for (size_t i = 0; i < plen; i++)
        t = t << 8 | (unsigned char)member[i];
    *tie = (int64_t)(t & ((UINT64_C(1) << 62) - 1));
    return plen;
}

int64_t score_codec_scaled_max(const struct score_layout *layout)
{
    if (layout->tiebreak != SCORE_TIEBREAK_ID && !layout->wide)
        return SCORE_TIED_SCALED_MAX;
    /* With decimals, the score itself (scaled / 10^d) must survive the trip through a double:
     * every decimal of at most 15 significant digits does (DBL_DIG), longer ones may not. */
    return layout->decimals == 0 ? SCORE_EXACT_SCALED_MAX : SCORE_DECIMAL_SCALED_MAX;
}

double score_codec_pow10(int decimals)
{
    /* Exact: every power of ten up to 10^22 is a binary64 integer. */
    static const double p10[SCORE_DECIMALS_MAX + 1] = {1e0, 1e1, 1e2, 1e3, 1e4,
                                                       1e5, 1e6, 1e7, 1e8, 1e9};
    return p10[decimals];
}

int score_codec_scale(const struct score_layout *layout, double score, int64_t *scaled)
{
    if (!isfinite(score))
        return -EINVAL;
    double p = score_codec_pow10(layout->decimals);
    double v = score * p;
    /* Past 2^62 the value is out of range whatever the layout; also keeps llrint defined. */
    if (fabs(v) >= 0x1p62)
        return -ERANGE;
    double r = nearbyint(v);
    /* r is an exact integer below 2^62; r / p is correctly rounded, so equality means `score`
     * is the double a parser yields for the decimal r * 10^-decimals. */
    if (r / p != score)
        return -EDOM;
    int64_t s = (int64_t)r;
    int64_t max = score_codec_scaled_max(layout);
    if (s > max || s < -max)
        return -ERANGE;
    *scaled = s;
    return 0;
}

double score_codec_unscale(const struct score_layout *layout, int64_t scaled)
{
    return (double)scaled / score_codec_pow10(layout->decimals);
}

int64_t score_codec_key(const struct score_layout *layout, int64_t scaled)
{
    return layout->order == SCORE_ORDER_DESC ? -scaled : scaled;
}

int64_t score_codec_key_to_scaled(const struct score_layout *layout, int64_t key)
{
    return layout->order == SCORE_ORDER_DESC ? -key : key;
}

int score_codec_pack(const struct score_layout *layout, int64_t key, int64_t tie, double *stored)
{
    int bits = score_codec_tie_bits(layout);
    int64_t max = score_codec_scaled_max(layout);
    if (key > max || key < -max || tie < 0 || tie >= (INT64_C(1) << bits))
        return -ERANGE;
    /* |key * 2^bits + tie| <= 2^53 - 1 by the bit budget, so the conversion is exact. */
    *stored = (double)(key * (INT64_C(1) << bits) + tie);
    return 0;
}

int score_codec_unpack(const struct score_layout *layout, double stored, int64_t *key, int64_t *tie)
{
    if (!isfinite(stored) || fabs(stored) > 0x1p53 || nearbyint(stored) != stored)
        return -ERANGE;
    int bits = score_codec_tie_bits(layout);
    int64_t s = (int64_t)stored;
    int64_t base = INT64_C(1) << bits;
    /* Floor division (stored may be negative). */
    int64_t k = s / base;
    if (s % base != 0 && s < 0)
        k--;
    int64_t max = score_codec_scaled_max(layout);
    if (k > max || k < -max)
        return -ERANGE;
    *key = k;
    *tie = s - k * base;
    return 0;
}

int score_codec_decode(const struct score_layout *layout, double stored, double *score)
{
    int64_t key, tie;
    int rc = score_codec_unpack(layout, stored, &key, &tie);
    if (rc < 0)
        return rc;
    *score = score_codec_unscale(layout, score_codec_key_to_scaled(layout, key));
    return 0;
}

void score_codec_range(const struct score_layout *layout, double *min, double *max)
{
    int64_t m = score_codec_scaled_max(layout);
    *max = score_codec_unscale(layout, m);
    *min = -*max;
}

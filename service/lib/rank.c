/* rank.c -- rank types and percentiles; see rank.h. */
#include "rank.h"

#include <errno.h>
#include <string.h>

#include "json_number.h"
#include "util.h"

static const char *const names[] = {"ordinal", "competition", "dense"};

const char *rank_type_name(enum rank_type t)
{
    return t >= RANK_ORDINAL && t <= RANK_DENSE ? names[t] : names[RANK_ORDINAL];
}

int rank_type_parse(const char *s, enum rank_type *out)
{
    for (int t = RANK_ORDINAL; t <= RANK_DENSE; t++)
        if (strcmp(s, names[t]) == 0) {
            *out = (enum rank_type)t;
            return 0;
        }
    return -EINVAL;
}

int rank_percent_parse(const char *s, int64_t *share)
{
    struct json_number n;
    int64_t v = 0;
    if (s[0] == '-' || json_number_parse_plain(s, strlen(s), &n) ||
        json_number_scale(&n, RANK_PERCENT_DECIMALS, RANK_SHARE_DEN, &v) || v < 0)
        return -EINVAL;
    *share = v;
    return 0;
}

int64_t rank_percentile_cents(int64_t total, int64_t rank)
{
    if (total < 1 || rank < 1 || rank > total)
        return 0;
    /* 10000 * (total - rank) / total by long division, four digits (the remainder stays below
     * total, so r * 10 never overflows for total < 2^59), then rounded half up */
    int64_t r = total - rank, cents = 0;
    for (int digit = 0; digit < 4; digit++) {
        r *= 10;
        cents = cents * 10 + r / total;
        r %= total;
    }
    return 2 * r >= total ? cents + 1 : cents;
}

void rank_decimal_text(int64_t v, int decimals, char *out, size_t len)
{
    int64_t scale = 1;
    for (int i = 0; i < decimals; i++)
        scale *= 10;
    int64_t whole = v / scale, frac = v % scale;
    char digits[24];
    struct strb b;
    strb_init(&b, out, len);
    strb_i64(&b, whole);
    if (frac == 0)
        return;
    int n = decimals;
    while (frac % 10 == 0) { /* trailing zeros dropped: 66.50 is 66.5 */
        frac /= 10;
        n--;
    }
    for (int i = n - 1; i >= 0; i--, frac /= 10)
        digits[i] = (char)('0' + frac % 10);
    digits[n] = '\0';
    strb_str(&b, ".");
    strb_str(&b, digits);
}

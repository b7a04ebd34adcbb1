/*
 * board_settings.c -- a board's settings: the defaults, the decoder of the settings hash, the score
 * check. The contract is in board.h; board_int.h holds what the board_*.c files share.
 */
#include <limits.h>

#include "board_int.h"

void board_settings_default(struct board_settings *s)
{
    /* the text defaults' enums (test_board_settings decodes BOARD_*_DEFAULT to these) */
    s->layout.order = SCORE_ORDER_DESC;
    s->layout.tiebreak = SCORE_TIEBREAK_FIRST;
    s->layout.decimals = BOARD_DECIMALS_DEFAULT;
    s->layout.wide = 0; /* BOARD_SCORE_LAYOUT_DEFAULT */
    s->layout.nsub = 0; /* no sub-scores */
    memset(s->layout.sub_asc, 0, sizeof(s->layout.sub_asc));
    s->period = PERIOD_NONE;
    memset(&s->tz, 0, sizeof(s->tz)); /* BOARD_TIMEZONE_DEFAULT: UTC */
    s->retain = BOARD_RETAIN_DEFAULT;
    s->page_size = BOARD_PAGE_SIZE_DEFAULT;
    s->page_ttl_ms = BOARD_PAGE_TTL_MS_DEFAULT;
    s->gen = 0;
    s->max_members = 0;
    s->version = 0;
    s->score_format = SCORE_FORMAT_INTEGER; /* BOARD_SCORE_FORMAT_DEFAULT */
    s->track_updated_at = BOARD_TRACK_UPDATED_AT_DEFAULT;
}

/* v as a number as strtol reads it (LONG_MIN: text, or no digits), and whether it was plain
 * digits (then exactly strtoll's value too). Plain digits, every number field of a hash rankd
 * wrote, skip strtol: this runs for each field of every page hit and member read. */
static long field_number(const char *v, int *plain)
{
    long n = 0;
    size_t i = 0;
    for (; v[i] >= '0' && v[i] <= '9' && i < 18; i++)
        n = n * 10 + (v[i] - '0');
    *plain = i > 0 && v[i] == '\0';
    if (*plain)
        return n;
    /* strtol is 0 for text anyway; skipping it for the text fields halves the HGETALL loop */
    if ((*v >= 'a' && *v <= 'z') || (*v >= 'A' && *v <= 'Z'))
        return LONG_MIN;
    char *end = (char *)v;
    n = strtol(v, &end, 10);
    return end == v ? LONG_MIN : n; /* no digits ("", "-"): no number field takes it */
}

void board_settings_field(struct board_settings *s, const char *f, const char *v)
{
    if (!f || !v)
        return;
    int plain;
    long n = field_number(v, &plain);
    /* by the first letter, then the name: one strcmp or two, not a dozen */
    switch (f[0]) {
    case 'o':
        if (strcmp(f, "order") == 0)
            s->layout.order = strcmp(v, "asc") == 0 ? SCORE_ORDER_ASC : SCORE_ORDER_DESC;
        break;
    case 's':
        if (strcmp(f, "score_layout") == 0)
            score_layout_parse(v, &s->layout);
        else if (strcmp(f, "score_decimals") == 0 && n >= 0 && n <= SCORE_DECIMALS_MAX)
            s->layout.decimals = (int)n;
        else if (strcmp(f, "score_format") == 0)
            score_format_parse(v, &s->score_format); /* unknown text keeps the default */
        break;
    case 't':
        if (strcmp(f, "tiebreak") == 0)
            s->layout.tiebreak = strcmp(v, "last") == 0 ? SCORE_TIEBREAK_LAST
                                 : strcmp(v, "id") == 0 ? SCORE_TIEBREAK_ID
                                                        : SCORE_TIEBREAK_FIRST;
        else if (strcmp(f, "timezone") == 0)
            period_tz_field(v, &s->tz); /* damaged text keeps the default */
        else if (strcmp(f, "track_updated_at") == 0)
            s->track_updated_at = n == 1;
        break;
    case 'p':
        if (strcmp(f, "page_size") == 0 && n >= 1 && n <= BOARD_PAGE_SIZE_MAX)
            s->page_size = (int)n;
        else if (strcmp(f, "page_ttl_ms") == 0 && n >= 0 && n <= BOARD_PAGE_TTL_MS_MAX)
            s->page_ttl_ms = (int)n;
        else if (strcmp(f, "period") == 0)
            period_kind_parse(v, &s->period); /* unknown text keeps none */
        break;
    case 'r':
        if (strcmp(f, "retain") == 0 && n >= 0 && n <= PERIOD_RETAIN_MAX)
            s->retain = (int)n;
        break;
    case 'g':
        if (strcmp(f, "gen") == 0)
            s->gen = plain ? n : strtoll(v, NULL, 10);
        break;
    case 'm':
        if (strcmp(f, "max_members") == 0 && n >= 0 && n <= BOARD_MAX_MEMBERS_MAX)
            s->max_members = n;
        break;
    case 'v':
        if (strcmp(f, "version") == 0)
            s->version = plain ? n : strtoll(v, NULL, 10);
        break;
    default:
        break;
    }
}

int board_settings_reply(const struct store_reply *r)
{
    return r && (r->type == STORE_REPLY_ARRAY ||
                 (r->type == STORE_REPLY_STRING && r->len > 0 && r->str[0] == '\0'));
}

void board_settings_from_reply(const struct store_reply *r, struct board_settings *s)
{
    board_settings_default(s);
    if (board_settings_reply(r) && r->type == STORE_REPLY_STRING) {
        /* "\0" field "\0" value "\0" ... value: each in place a C string (the reply's own NUL
         * ends the last); a field without a value after it is dropped */
        const char *p = r->str + 1, *end = r->str + r->len;
        while (p < end) {
            const char *f = p, *v = f + strnlen(f, (size_t)(end - f)) + 1;
            if (v > end)
                break;
            board_settings_field(s, f, v);
            p = v + strnlen(v, (size_t)(end - v)) + 1;
        }
        return;
    }
    for (size_t i = 0; r && r->type == STORE_REPLY_ARRAY && i + 1 < r->elements; i += 2)
        board_settings_field(s, r->element[i]->str, r->element[i + 1]->str);
}

int board_check_score(const struct board_settings *s, double score, int64_t *key)
{
    int64_t scaled;
    int rc = score_codec_scale(&s->layout, score, &scaled);
    if (rc < 0)
        return rc;
    *key = score_codec_key(&s->layout, scaled);
    return 0;
}

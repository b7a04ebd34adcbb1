/* test_board_settings.c -- the board model's pure halves over replies built from RESP bytes (as
 * test_store_reply.c builds them, with the store's reply functions): the settings hash decoded
 * (board_settings.c: defaults, every field, damaged or out-of-range values keeping their
 * defaults), through the HGETALL path and the HMGET path alike (both are board_settings_field),
 * the Lua prelude of defaults the build generates from board.h, the write counter of a read
 * script's reply (board_read_version) and the score check under a layout, page.lua's reply taken
 * into a struct board_page (board_page_take) and its retry, error and no-board answers. No Redis:
 * the bytes are the test's. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "board_int.h"
#include "model_fixture.h"
#include "store_internal.h"
#include "store_reply.h"
#include "suites.h"

/* One reply from `resp` (complete), built by the store's reply functions. */
static struct store_reply *reply_of(const char *resp)
{
    redisReader *rd = redisReaderCreateWithFunctions(store_reply_functions());
    ck_assert_ptr_nonnull(rd);
    ck_assert_int_eq(redisReaderFeed(rd, resp, strlen(resp)), REDIS_OK);
    void *out = NULL;
    ck_assert_int_eq(redisReaderGetReply(rd, &out), REDIS_OK);
    ck_assert_ptr_nonnull(out);
    redisReaderFree(rd);
    return out;
}

/* An HGETALL reply of the given field/value pairs (n strings, n even), in RESP. */
static struct store_reply *hash_of(const char *const *fv, size_t n)
{
    char buf[4096];
    size_t k = (size_t)snprintf(buf, sizeof(buf), "*%zu\r\n", n);
    for (size_t i = 0; i < n; i++)
        k += (size_t)snprintf(buf + k, sizeof(buf) - k, "$%zu\r\n%s\r\n", strlen(fv[i]), fv[i]);
    ck_assert_uint_lt(k, sizeof(buf));
    return reply_of(buf);
}

static void assert_defaults(const struct board_settings *s)
{
    ck_assert_int_eq(s->layout.order, SCORE_ORDER_DESC);
    ck_assert_int_eq(s->layout.tiebreak, SCORE_TIEBREAK_FIRST);
    ck_assert_int_eq(s->layout.decimals, 0);
    ck_assert_int_eq(s->layout.wide, 0);
    ck_assert_int_eq(s->period, PERIOD_NONE);
    ck_assert_int_eq(s->tz.min, 0);
    ck_assert_str_eq(s->tz.name, "");
    ck_assert_int_eq(s->retain, 1);
    ck_assert_int_eq(s->page_size, BOARD_PAGE_SIZE_DEFAULT);
    ck_assert_int_eq(s->page_ttl_ms, BOARD_PAGE_TTL_MS_DEFAULT);
    ck_assert_int_eq(s->gen, 0);
    ck_assert_int_eq(s->max_members, 0);
    ck_assert_int_eq(s->version, 0);
    ck_assert_int_eq(s->score_format, SCORE_FORMAT_INTEGER);
}

/* The HMGET path (pages.c's settle, board_list_where, board_where_note): the fields of fv asked for
 * by name, the reply's elements (values, nil for a NULL) decoded one by one. */
static void decode_hmget(const char *const *fv, size_t n, struct board_settings *s)
{
    char buf[4096];
    size_t k = (size_t)snprintf(buf, sizeof(buf), "*%zu\r\n", n / 2);
    for (size_t i = 1; i < n; i += 2)
        k += fv[i] ? (size_t)snprintf(buf + k, sizeof(buf) - k, "$%zu\r\n%s\r\n", strlen(fv[i]),
                                      fv[i])
                   : (size_t)snprintf(buf + k, sizeof(buf) - k, "$-1\r\n");
    ck_assert_uint_lt(k, sizeof(buf));
    struct store_reply *r = reply_of(buf);
    ck_assert_uint_eq(r->elements, n / 2);
    board_settings_default(s);
    for (size_t i = 0; i < n / 2; i++)
        board_settings_field(s, fv[2 * i],
                             r->element[i]->type == STORE_REPLY_STRING ? r->element[i]->str : NULL);
    store_reply_free(r);
}

/* The read scripts' one string of the pairs fv[0..n) (lua/prelude_read.lua: a NUL, then the
 * fields and values joined by NULs) as a reply. */
static struct store_reply *packed_of(const char *const *fv, size_t n)
{
    char text[2048];
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        size_t l = strlen(fv[i]);
        ck_assert_uint_lt(len + l + 1, sizeof(text));
        text[len++] = '\0';
        memcpy(text + len, fv[i], l);
        len += l;
    }
    char resp[2200];
    int k = snprintf(resp, sizeof(resp), "$%zu\r\n", len);
    memcpy(resp + k, text, len);
    memcpy(resp + (size_t)k + len, "\r\n", 2);
    return fixture_reply_n(resp, (size_t)k + len + 2);
}

/* The three paths (HGETALL, the read scripts' string, HMGET) give the same settings for fv. */
static void assert_paths_agree(const char *const *fv, size_t n, struct board_settings *out)
{
    struct store_reply *r = hash_of(fv, n);
    struct board_settings a, b, c;
    memset(&a, 0, sizeof(a));
    memset(&b, 0, sizeof(b));
    memset(&c, 0, sizeof(c));
    board_settings_from_reply(r, &a);
    store_reply_free(r);
    r = packed_of(fv, n);
    ck_assert_int_eq(board_settings_reply(r), 1);
    board_settings_from_reply(r, &c);
    store_reply_free(r);
    ck_assert_mem_eq(&a, &c, sizeof(a));
    decode_hmget(fv, n, &b);
    ck_assert_int_eq(a.layout.order, b.layout.order);
    ck_assert_int_eq(a.layout.tiebreak, b.layout.tiebreak);
    ck_assert_int_eq(a.layout.decimals, b.layout.decimals);
    ck_assert_int_eq(a.period, b.period);
    ck_assert_int_eq(a.tz.min, b.tz.min);
    ck_assert_str_eq(a.tz.name, b.tz.name);
    ck_assert_int_eq(a.retain, b.retain);
    ck_assert_int_eq(a.page_size, b.page_size);
    ck_assert_int_eq(a.page_ttl_ms, b.page_ttl_ms);
    ck_assert_int_eq(a.gen, b.gen);
    ck_assert_int_eq(a.max_members, b.max_members);
    ck_assert_int_eq(a.version, b.version);
    ck_assert_int_eq(a.score_format, b.score_format);
    *out = b;
}

/* A settings hash with every field set to a value other than its default. */
static const char *const every_field[] = {
    "order",
    "asc",
    "tiebreak",
    "last",
    "score_decimals",
    "3",
    "page_size",
    "50",
    "page_ttl_ms",
    "0",
    "period",
    "weekly",
    "timezone",
    "-300",
    "retain",
    "4",
    "gen",
    "1733011200000123",
    "max_members",
    "5000",
    "version",
    "9007199254740991",
    "score_format",
    "duration_ms",
};

/* Values rankd never writes, one field each: out of bounds, not a number, empty, unknown words
 * and an unknown field. Each leaves the settings at their defaults (a hand-edited or damaged hash
 * must not give a page size of 0 or a TTL of a week), by either decoding path. */
static const char *const damaged[][2] = {
    {"page_size", "0"},          {"page_size", "101"},
    {"page_size", "abc"},        {"page_size", ""},
    {"page_ttl_ms", "-1"},       {"page_ttl_ms", "3600001"},
    {"page_ttl_ms", "abc"},      {"score_decimals", "-1"},
    {"score_decimals", "99"},    {"timezone", "100000"},
    {"timezone", "-"},           {"retain", "-2"},
    {"retain", "1000000"},       {"retain", ""},
    {"max_members", "-5"},       {"max_members", "100000001"},
    {"period", "fortnightly"},   {"order", "sideways"},
    {"tiebreak", "random"},      {"unknown_field", "7"},
    {"score_format", "Integer"}, {"score_format", "hh:mm"},
    {"score_format", ""},
};

START_TEST(test_defaults)
{
    struct board_settings s;
    memset(&s, 0x5a, sizeof(s));
    board_settings_default(&s);
    assert_defaults(&s);
    ck_assert_int_eq(BOARD_PAGE_SIZE_DEFAULT, 20);
    ck_assert_int_eq(BOARD_PAGE_TTL_MS_DEFAULT, 1000);

    /* an empty hash, a nil and a non-array: the defaults */
    struct store_reply *r = reply_of("*0\r\n");
    memset(&s, 0x5a, sizeof(s));
    board_settings_from_reply(r, &s);
    assert_defaults(&s);
    store_reply_free(r);
    r = reply_of("$-1\r\n");
    board_settings_from_reply(r, &s);
    assert_defaults(&s);
    store_reply_free(r);
    r = reply_of("-ERR no\r\n");
    board_settings_from_reply(r, &s);
    assert_defaults(&s);
    store_reply_free(r);
    board_settings_from_reply(NULL, &s);
    assert_defaults(&s);
}
END_TEST

/* Numbers of every length the hash may hold, by both decoding paths: a 19-digit generation (what
 * rankd writes: nanoseconds), LONG_MAX, one past it (strtoll's saturated value, as ever) and a
 * negative one (not plain digits: strtoll's value). */
START_TEST(test_long_numbers)
{
    static const struct {
        const char *v;
        int64_t want;
    } cases[] = {
        {"1796206208835453777", INT64_C(1796206208835453777)},
        {"9223372036854775807", INT64_MAX},
        {"9223372036854775808", INT64_MAX},
        {"99999999999999999999", INT64_MAX},
        {"-5", -5},
        {"123456789012345678", INT64_C(123456789012345678)},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *fv[] = {"gen", cases[i].v, "version", cases[i].v};
        struct board_settings s;
        assert_paths_agree(fv, 4, &s);
        ck_assert_msg(s.gen == cases[i].want && s.version == cases[i].want,
                      "gen/version '%s': %lld/%lld, want %lld", cases[i].v, (long long)s.gen,
                      (long long)s.version, (long long)cases[i].want);
    }
}
END_TEST

START_TEST(test_every_field)
{
    struct store_reply *r = hash_of(every_field, sizeof(every_field) / sizeof(every_field[0]));
    struct board_settings s;
    board_settings_from_reply(r, &s);
    ck_assert_int_eq(s.layout.order, SCORE_ORDER_ASC);
    ck_assert_int_eq(s.layout.tiebreak, SCORE_TIEBREAK_LAST);
    ck_assert_int_eq(s.layout.decimals, 3);
    ck_assert_int_eq(s.page_size, 50);
    ck_assert_int_eq(s.page_ttl_ms, 0);
    enum period_kind weekly;
    ck_assert_int_eq(period_kind_parse("weekly", &weekly), 0);
    ck_assert_int_eq(s.period, weekly);
    ck_assert_int_eq(s.tz.min, -300);
    ck_assert_int_eq(s.retain, 4);
    ck_assert_int_eq(s.gen, INT64_C(1733011200000123));
    ck_assert_int_eq(s.max_members, 5000);
    ck_assert_int_eq(s.version, INT64_C(9007199254740991));
    ck_assert_int_eq(s.score_format, SCORE_FORMAT_DURATION_MS);
    store_reply_free(r);

    static const char *const id[] = {"tiebreak", "id", "order", "desc"};
    r = hash_of(id, 4);
    board_settings_from_reply(r, &s);
    ck_assert_int_eq(s.layout.tiebreak, SCORE_TIEBREAK_ID);
    ck_assert_int_eq(s.layout.order, SCORE_ORDER_DESC);
    store_reply_free(r);
}
END_TEST

/* Values rankd never writes keep their defaults, one field at a time (damaged[]). */
START_TEST(test_damaged_fields)
{
    for (size_t i = 0; i < sizeof(damaged) / sizeof(damaged[0]); i++) {
        struct store_reply *r = hash_of(damaged[i], 2);
        struct board_settings s;
        board_settings_from_reply(r, &s);
        assert_defaults(&s);
        store_reply_free(r);
    }
    /* an odd element count: the last field without a value is ignored */
    struct store_reply *r = reply_of("*3\r\n$9\r\npage_size\r\n$2\r\n30\r\n$6\r\nretain\r\n");
    struct board_settings s;
    board_settings_from_reply(r, &s);
    ck_assert_int_eq(s.page_size, 30);
    ck_assert_int_eq(s.retain, 1);
    store_reply_free(r);
}
END_TEST

/* A read script's reply opens with the settings hash as pairs; its `version` is the write
 * counter that min_version reads are judged by. */
START_TEST(test_read_version)
{
    struct store_reply *r = reply_of("$-1\r\n"); /* no board */
    ck_assert_int_eq(board_read_version(r), 0);
    store_reply_free(r);

    r = reply_of("*2\r\n*4\r\n$5\r\norder\r\n$4\r\ndesc\r\n$7\r\nversion\r\n$2\r\n42\r\n:7\r\n");
    ck_assert_int_eq(board_read_version(r), 42);
    store_reply_free(r);

    r = reply_of("*2\r\n*2\r\n$5\r\norder\r\n$4\r\ndesc\r\n:7\r\n"); /* no write yet */
    ck_assert_int_eq(board_read_version(r), 0);
    store_reply_free(r);

    /* a retry, a refusal and an error are not versions */
    r = reply_of("*4\r\n$5\r\nretry\r\n$5\r\ndaily\r\n$1\r\n0\r\n$1\r\n1\r\n");
    ck_assert_int_eq(board_read_version(r), -1);
    store_reply_free(r);
    r = reply_of("-BUSY Redis is busy\r\n");
    ck_assert_int_eq(board_read_version(r), -1);
    store_reply_free(r);
}
END_TEST

START_TEST(test_check_score)
{
    struct board_settings s;
    board_settings_default(&s);
    int64_t key = 0, key2 = 0;
    ck_assert_int_eq(board_check_score(&s, 12, &key), 0);
    ck_assert_int_eq(board_check_score(&s, 13, &key2), 0);
    /* desc: the higher score sorts first (the lower key) */
    ck_assert_int_gt(key, key2);
    s.layout.order = SCORE_ORDER_ASC;
    ck_assert_int_eq(board_check_score(&s, 12, &key), 0);
    ck_assert_int_eq(board_check_score(&s, 13, &key2), 0);
    ck_assert_int_lt(key, key2);
    /* 0 decimals: a fraction is refused */
    ck_assert_int_eq(board_check_score(&s, 1.5, &key), -EDOM);
    s.layout.decimals = 1;
    ck_assert_int_eq(board_check_score(&s, 1.5, &key), 0);
    ck_assert_int_lt(board_check_score(&s, 1e300, &key), 0);
}
END_TEST

/* page.lua's reply {settings, total, size, range, records, ranks} as board_page_take sees it: page
 * 2 of 2 on a desc board of 5; the ranks are the positions from (page - 1) * size + 1. */
START_TEST(test_page_take)
{
    struct board_settings set;
    board_settings_default(&set);
    double a = 0, b = 0;
    ck_assert_int_eq(score_codec_pack(&set.layout, -120, 0, &a), 0);
    ck_assert_int_eq(score_codec_pack(&set.layout, -95, 3, &b), 0);
    char resp[1024], sa[40], sb[40];
    snprintf(sa, sizeof(sa), "%.17g", a);
    snprintf(sb, sizeof(sb), "%.17g", b);
    snprintf(resp, sizeof(resp),
             "*6\r\n*4\r\n$5\r\norder\r\n$4\r\ndesc\r\n$9\r\npage_size\r\n$1\r\n2\r\n"
             ":5\r\n:2\r\n*4\r\n$5\r\nalice\r\n$%zu\r\n%s\r\n$3\r\nbob\r\n$%zu\r\n%s\r\n"
             "*2\r\n$7\r\n{\"a\":1}\r\n$-1\r\n*0\r\n",
             strlen(sa), sa, strlen(sb), sb);
    struct board_model m = {.prefix = "P"}; /* no view: nothing remembered */
    struct board_page *p = NULL;
    ck_assert_int_eq(board_page_take(&m, "b", reply_of(resp), 2, &p), 0);
    ck_assert_int_eq(p->total, 5);
    ck_assert_int_eq(p->size, 2);
    ck_assert_int_eq(p->settings.page_size, 2);
    ck_assert_uint_eq(p->n, 2);
    ck_assert_str_eq(p->items[0].id, "alice");
    ck_assert_double_eq(p->items[0].score, 120);
    ck_assert_int_eq(p->items[0].ordinal, 3);
    ck_assert_int_eq(p->items[0].rank, 3);
    ck_assert_uint_eq(p->items[0].record_len, 7);
    ck_assert_str_eq(p->items[1].id, "bob");
    ck_assert_double_eq(p->items[1].score, 95);
    ck_assert_int_eq(p->items[1].rank, 4);
    ck_assert_ptr_null(p->items[1].record);
    board_page_free(p);

    /* no board, a retry (the periods moved: learnt), a Redis error, a short reply */
    p = NULL;
    ck_assert_int_eq(board_page_take(&m, "b", reply_of("$-1\r\n"), 1, &p), -ENOENT);
    ck_assert_int_eq(
        board_page_take(
            &m, "b", reply_of("*4\r\n$5\r\nretry\r\n$5\r\ndaily\r\n$1\r\n0\r\n$1\r\n1\r\n"), 1, &p),
        -EAGAIN);
    ck_assert_int_eq(board_page_take(&m, "b", reply_of("-ERR boom\r\n"), 1, &p), -EIO);
    ck_assert_int_eq(board_page_take(&m, "b", reply_of("*2\r\n*0\r\n:0\r\n"), 1, &p), -EIO);
    ck_assert_ptr_null(p);
}
END_TEST

/* The HMGET path decodes as the HGETALL path does: every field, each damaged value, nils. */
START_TEST(test_hmget_path)
{
    struct board_settings s;
    assert_paths_agree(every_field, sizeof(every_field) / sizeof(every_field[0]), &s);
    ck_assert_int_eq(s.layout.order, SCORE_ORDER_ASC);
    ck_assert_int_eq(s.page_size, 50);
    ck_assert_int_eq(s.page_ttl_ms, 0);
    ck_assert_int_eq(s.tz.min, -300);
    ck_assert_int_eq(s.retain, 4);
    ck_assert_int_eq(s.gen, INT64_C(1733011200000123));

    for (size_t i = 0; i < sizeof(damaged) / sizeof(damaged[0]); i++) {
        assert_paths_agree(damaged[i], 2, &s);
        assert_defaults(&s);
    }
    /* pages.c's lookup: the fields it asks for, all nil (a board without them): the defaults */
    static const char *const nils[] = {"page_size", NULL, "page_ttl_ms", NULL, "gen",    NULL,
                                       "period",    NULL, "timezone",    NULL, "retain", NULL};
    decode_hmget(nils, sizeof(nils) / sizeof(nils[0]), &s);
    assert_defaults(&s);
}
END_TEST

/* The read scripts' string, damaged: a field without its value is dropped, an empty string
 * and a string that does not start with a NUL (a tag, not settings) give the defaults. */
START_TEST(test_packed_settings_damaged)
{
    static const struct {
        const char *b;
        size_t n;
        int settings; /* board_settings_reply */
    } cases[] = {
        {"\0", 1, 1},
        {"\0page_size", 10, 1},
        {"\0page_size\0", 11, 1}, /* an empty value: page_size "" is damaged */
        {"page_size\0"
         "50",
         12, 0},
        {"", 0, 0},
        {"retry", 5, 0},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char resp[64];
        int k = snprintf(resp, sizeof(resp), "$%zu\r\n", cases[i].n);
        memcpy(resp + k, cases[i].b, cases[i].n);
        memcpy(resp + (size_t)k + cases[i].n, "\r\n", 2);
        struct store_reply *r = fixture_reply_n(resp, (size_t)k + cases[i].n + 2);
        ck_assert_int_eq(board_settings_reply(r), cases[i].settings);
        struct board_settings s;
        board_settings_from_reply(r, &s);
        assert_defaults(&s);
        store_reply_free(r);
    }
    /* the last value ends at the string's end; a page's version read from it */
    static const char *const fv[] = {"page_size", "7", "version", "12"};
    struct store_reply *set = packed_of(fv, 4);
    struct board_settings s;
    board_settings_from_reply(set, &s);
    ck_assert_int_eq(s.page_size, 7);
    ck_assert_int_eq(s.version, 12);
    store_reply_free(set);
    /* board_read_version of a read's reply {settings, total}, and of tags that are no settings */
    static const char resp[] = "*2\r\n$23\r\n\0page_size\0"
                               "7\0version\0"
                               "12\r\n:3\r\n";
    struct store_reply *page = fixture_reply_n(resp, sizeof(resp) - 1);
    ck_assert_int_eq(board_read_version(page), 12);
    store_reply_free(page);
    struct store_reply *tag = fixture_reply("*2\r\n$6\r\nlocked\r\n:3\r\n");
    ck_assert_int_eq(board_read_version(tag), -1);
    store_reply_free(tag);
}
END_TEST

/* The Lua prelude the build writes from board.h (scripts/lua-defaults.awk) holds the C values:
 * every local it defines is one of these, with this value. */
START_TEST(test_lua_defaults)
{
    struct {
        const char *name;
        char value[32];
        int seen;
    } want[] = {
        {"BOARD_PAGE_SIZE_DEFAULT", "", 0},
        {"BOARD_PAGE_TTL_MS_DEFAULT", "", 0},
        {"BOARD_ORDER_DEFAULT", "", 0},
        {"BOARD_TIEBREAK_DEFAULT", "", 0},
        {"BOARD_DECIMALS_DEFAULT", "", 0},
        {"BOARD_PERIOD_DEFAULT", "", 0},
        {"BOARD_TIMEZONE_DEFAULT", "", 0},
        {"BOARD_RETAIN_DEFAULT", "", 0},
        {"BOARD_PAGE_SIZE_MAX", "", 0},
        {"BOARD_PAGE_TTL_MS_MAX", "", 0},
        {"BOARD_NAME_LEN_MAX", "", 0},
        {"BOARD_ID_LEN_MAX", "", 0},
        {"BOARD_RECORD_BYTES_MAX", "", 0},
        {"BOARD_BATCH_MAX", "", 0},
        {"BOARD_MAX_MEMBERS_MAX", "", 0},
        {"BOARD_LIST_COUNT_MAX", "", 0},
        {"BOARD_SCORE_LAYOUT_DEFAULT", "", 0},
        {"BOARD_SCORE_FORMAT_DEFAULT", "", 0},
        {"BOARD_TRACK_UPDATED_AT_DEFAULT", "", 0},
        {"BOARD_TIE_CAP_MAX", "", 0},
    };
    const size_t nwant = sizeof(want) / sizeof(want[0]);
    snprintf(want[0].value, sizeof(want[0].value), "'%d'", BOARD_PAGE_SIZE_DEFAULT);
    snprintf(want[1].value, sizeof(want[1].value), "'%d'", BOARD_PAGE_TTL_MS_DEFAULT);
    snprintf(want[2].value, sizeof(want[2].value), "'%s'", BOARD_ORDER_DEFAULT);
    snprintf(want[3].value, sizeof(want[3].value), "'%s'", BOARD_TIEBREAK_DEFAULT);
    snprintf(want[4].value, sizeof(want[4].value), "'%d'", BOARD_DECIMALS_DEFAULT);
    snprintf(want[5].value, sizeof(want[5].value), "'%s'", BOARD_PERIOD_DEFAULT);
    snprintf(want[6].value, sizeof(want[6].value), "'%d'", BOARD_TIMEZONE_DEFAULT);
    snprintf(want[7].value, sizeof(want[7].value), "'%d'", BOARD_RETAIN_DEFAULT);
    snprintf(want[8].value, sizeof(want[8].value), "%d", BOARD_PAGE_SIZE_MAX);
    snprintf(want[9].value, sizeof(want[9].value), "%d", BOARD_PAGE_TTL_MS_MAX);
    snprintf(want[10].value, sizeof(want[10].value), "%d", BOARD_NAME_LEN_MAX);
    snprintf(want[11].value, sizeof(want[11].value), "%d", BOARD_ID_LEN_MAX);
    snprintf(want[12].value, sizeof(want[12].value), "%d", BOARD_RECORD_BYTES_MAX);
    snprintf(want[13].value, sizeof(want[13].value), "%d", BOARD_BATCH_MAX);
    snprintf(want[14].value, sizeof(want[14].value), "%d", BOARD_MAX_MEMBERS_MAX);
    snprintf(want[15].value, sizeof(want[15].value), "%d", BOARD_LIST_COUNT_MAX);
    snprintf(want[16].value, sizeof(want[16].value), "'%s'", BOARD_SCORE_LAYOUT_DEFAULT);
    snprintf(want[17].value, sizeof(want[17].value), "'%s'", BOARD_SCORE_FORMAT_DEFAULT);
    snprintf(want[18].value, sizeof(want[18].value), "'%d'", BOARD_TRACK_UPDATED_AT_DEFAULT);
    /* write_one.lua's 2^T of a packed board */
    snprintf(want[19].value, sizeof(want[19].value), "%lld", (long long)SCORE_TIE_CAP);

    /* the text defaults are what board_settings_default means */
    static const char *const text[] = {
        "order",        BOARD_ORDER_DEFAULT,       "tiebreak",     BOARD_TIEBREAK_DEFAULT,
        "period",       BOARD_PERIOD_DEFAULT,      "score_layout", BOARD_SCORE_LAYOUT_DEFAULT,
        "score_format", BOARD_SCORE_FORMAT_DEFAULT};
    struct board_settings s;
    assert_paths_agree(text, sizeof(text) / sizeof(text[0]), &s);
    assert_defaults(&s);
    ck_assert_str_eq(period_kind_name(PERIOD_NONE), BOARD_PERIOD_DEFAULT);
    ck_assert_str_eq(score_format_name(SCORE_FORMAT_INTEGER), BOARD_SCORE_FORMAT_DEFAULT);
    /* every format's name parses back to it; others do not parse */
    for (int i = 0; i < SCORE_FORMAT_COUNT; i++) {
        enum score_format got = SCORE_FORMAT_INTEGER;
        ck_assert_int_eq(score_format_parse(score_format_name(i), &got), 0);
        ck_assert_int_eq(got, i);
    }
    enum score_format sf = SCORE_FORMAT_DECIMAL;
    ck_assert_int_eq(score_format_parse("seconds", &sf), -EINVAL);
    ck_assert_int_eq(score_format_parse(NULL, &sf), -EINVAL);
    ck_assert_int_eq(sf, SCORE_FORMAT_DECIMAL);

    /* the prelude sits beside the test binary: $(BUILD)/gen/lua/ */
    char path[4096];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 64);
    ck_assert_int_gt(n, 0);
    path[n] = '\0';
    char *slash = strrchr(path, '/');
    ck_assert_ptr_nonnull(slash);
    strcpy(slash + 1, "gen/lua/prelude_defaults.lua");
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    char line[256], name[64], value[64];
    int locals = 0;
    while (fgets(line, sizeof(line), f)) {
        if (strncmp(line, "local ", 6) != 0)
            continue;
        ck_assert_int_eq(sscanf(line, "local %63s = %63s", name, value), 2);
        size_t i = 0;
        while (i < nwant && strcmp(want[i].name, name) != 0)
            i++;
        ck_assert_msg(i < nwant, "%s: a local the test does not know", name);
        ck_assert_str_eq(value, want[i].value);
        want[i].seen++;
        locals++;
    }
    fclose(f);
    for (size_t i = 0; i < nwant; i++)
        ck_assert_msg(want[i].seen == 1, "%s defined %d times", want[i].name, want[i].seen);
    ck_assert_int_eq(locals, (int)nwant);
}
END_TEST

Suite *board_settings_suite(void)
{
    Suite *s = suite_create("board_settings");
    TCase *tc = tcase_create("board_settings");
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_every_field);
    tcase_add_test(tc, test_long_numbers);
    tcase_add_test(tc, test_damaged_fields);
    tcase_add_test(tc, test_hmget_path);
    tcase_add_test(tc, test_packed_settings_damaged);
    tcase_add_test(tc, test_lua_defaults);
    tcase_add_test(tc, test_read_version);
    tcase_add_test(tc, test_check_score);
    tcase_add_test(tc, test_page_take);
    suite_add_tcase(s, tc);
    return s;
}

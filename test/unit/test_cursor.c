/* test_cursor.c -- page cursors (cursor.h): round trips, URL-safe text, everything else refused,
 * and the cursors a page body carries (render.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cursor.h"
#include "render.h"
#include "suites.h"

START_TEST(test_cursor_round_trips)
{
    static const struct cursor cases[] = {
        {CURSOR_NEXT, 1796137190074725585, "", -104857599, "c", 1, 1, 0, 0, 0, {0}, 0},
        {CURSOR_PREV, 0, "2026-W49", 9007199254740992, "a:b:c", 5, 1, 0xffffffffU, 0, 0, {0}, 0},
        {CURSOR_NEXT,
         INT64_MAX,
         "2026-11-30T14",
         -9007199254740992,
         "caf\xc3\xa9 /+%",
         9,
         1,
         0x0000abcdU,
         0,
         0,
         {0},
         0},
        {CURSOR_PREV, 42, "2026-11", 0, "x", 1, 1, 0x811c9dc5U, 0, 0, {0}, 0},
        /* version 3: a wide board's edge, with its tie position */
        {CURSOR_NEXT, 7, "", -9007199254740991, "a:1", 3, 1, 0x1U, 1, 9007199254740991, {0}, 0},
        {CURSOR_PREV, 7, "2026-11", 9007199254740991, "b", 1, 1, 0x2U, 1, 0, {0}, 0},
        /* version 4: a sub-score board's edge, with its sub-score bytes (':' among them) */
        {CURSOR_NEXT, 9, "", 12, "c", 1, 1, 0x3U, 1, 5, {0x80, 0, 0x3a, 0xff, 1, 2, 3, 4}, 8},
        {CURSOR_PREV, 9, "", -1, "d", 1, 1, 0x4U, 1, 0, {[31] = 0xff}, 32},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char text[CURSOR_TEXT_MAX];
        ck_assert_int_eq(cursor_encode(&cases[i], text, sizeof(text)), 0);
        for (const char *p = text; *p; p++) /* base64url: nothing a URL must escape */
            ck_assert_msg(
                strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_", *p),
                "%s holds '%c'", text, *p);
        struct cursor back;
        ck_assert_int_eq(cursor_decode(text, &back), 0);
        ck_assert_int_eq(back.kind, cases[i].kind);
        ck_assert(back.gen == cases[i].gen && back.stored == cases[i].stored);
        ck_assert_str_eq(back.period, cases[i].period);
        ck_assert_uint_eq(back.id_len, cases[i].id_len);
        ck_assert(memcmp(back.id, cases[i].id, back.id_len) == 0);
        ck_assert(back.tagged && back.board_tag == cases[i].board_tag);
        ck_assert(back.has_tie == cases[i].has_tie && back.tie == cases[i].tie);
        ck_assert(back.sub_len == cases[i].sub_len &&
                  memcmp(back.sub, cases[i].sub, back.sub_len) == 0);
    }
    /* the longest: a 128-byte id and a 15-byte period */
    struct cursor big = {CURSOR_NEXT,
                         INT64_MAX,
                         "2026-11-30T14",
                         -9007199254740992,
                         "",
                         128,
                         1,
                         0xffffffffU,
                         1,
                         9007199254740991,
                         {0},
                         0};
    memset(big.id, 'x', 128);
    memset(big.sub, 0xff, sizeof(big.sub)); /* and 4 sub-score columns */
    big.sub_len = CURSOR_SUB_BYTES_MAX;
    char text[CURSOR_TEXT_MAX];
    ck_assert_int_eq(cursor_encode(&big, text, sizeof(text)), 0);
    ck_assert_int_eq(cursor_encode(&big, text, 20), -E2BIG);
}
END_TEST

/* base64url of raw text, for cursors rankd would never make. */
static void encode_raw(const char *raw, char *out)
{
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = strlen(raw), w = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)(unsigned char)raw[i] << 16;
        v |= i + 1 < n ? (unsigned)(unsigned char)raw[i + 1] << 8 : 0;
        v |= i + 2 < n ? (unsigned char)raw[i + 2] : 0;
        out[w++] = a[(v >> 18) & 63];
        out[w++] = a[(v >> 12) & 63];
        if (i + 1 < n)
            out[w++] = a[(v >> 6) & 63];
        if (i + 2 < n)
            out[w++] = a[v & 63];
    }
    out[w] = '\0';
}

START_TEST(test_cursor_refused)
{
    struct cursor c;
    static const char *const texts[] = {"", "a", "zz=", "MW4x+OjotMTA0", "!!!!"};
    for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
        ck_assert_msg(cursor_decode(texts[i], &c) == -EINVAL, "'%s' decoded", texts[i]);
    static const char *const raws[] = {
        "3n1::5:a",                    /* another version */
        "2n1::5:a",                    /* version 2 without its board tag */
        "2n1:0123abc::5:a",            /* a tag of 7 digits */
        "2n1:0123abcde::5:a",          /* of 9 */
        "2n1:0123ABCD::5:a",           /* upper case */
        "2n1:0123abcg::5:a",           /* not hex */
        "1x1::5:a",                    /* another kind */
        "1n::5:a",                     /* no generation */
        "1n-1::5:a",                   /* a negative generation */
        "1n99999999999999999999::5:a", /* past int64 */
        "1n1:2026-11-30T14xxx:5:a",    /* a period of 16 bytes */
        "1n1::9007199254740993:a",     /* past 2^53 */
        "1n1::5:",                     /* no id */
        "1n1::5:a\x01",                /* a control character */
        "1n1::5:\xff",                 /* not UTF-8 */
        "1n1::5",                      /* cut */
        "1n1:5:a",                     /* a field missing */
        "1n1::x5:a",                   /* junk */
    };
    for (size_t i = 0; i < sizeof(raws) / sizeof(raws[0]); i++) {
        char text[512];
        encode_raw(raws[i], text);
        ck_assert_msg(cursor_decode(text, &c) == -EINVAL, "raw '%s' decoded", raws[i]);
    }
    char ok[64];
    encode_raw("2n1:0123abcd::5:a", ok); /* version 2: its board's tag */
    ck_assert_int_eq(cursor_decode(ok, &c), 0);
    ck_assert(c.tagged && c.board_tag == 0x0123abcdU && c.gen == 1 && c.stored == 5);
    encode_raw("1n1::5:a", ok); /* version 1, made before cursors named their board: no tag */
    ck_assert_int_eq(cursor_decode(ok, &c), 0);
    ck_assert(!c.tagged && c.gen == 1 && c.stored == 5 && c.id[0] == 'a');
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t n = strlen(ok); /* 8 bytes: the last 3 characters hold 2 bytes and 2 spare bits */
    ok[n - 1] = a[(strchr(a, ok[n - 1]) - a) ^ 1]; /* a spare bit set */
    ck_assert_int_eq(cursor_decode(ok, &c), -EINVAL);
}
END_TEST

/* A page's next and prev: the cursors of its last and first items, null at the board's ends. */
START_TEST(test_page_cursors)
{
    struct board_item items[] = {
        {.id = "b", .id_len = 1, .score = 50, .rank = 2, .ordinal = 2, .stored = -104857600},
        {.id = "c", .id_len = 1, .score = 50, .rank = 2, .ordinal = 3, .stored = -104857599}};
    struct board_page p = {.total = 9, .size = 2, .n = 2, .items = items, .first = 0, .end = 9};
    p.settings.gen = 77;
    snprintf(p.period, sizeof(p.period), "2026-W49");
    char *body = render_page("ex", 2, &p);
    cJSON *doc = cJSON_Parse(body);
    ck_assert_ptr_nonnull(doc);
    struct cursor c;
    ck_assert_int_eq(cursor_decode(cJSON_GetObjectItem(doc, "next")->valuestring, &c), 0);
    ck_assert(c.kind == CURSOR_NEXT && c.gen == 77 && c.stored == -104857599 && c.id[0] == 'c');
    ck_assert(c.tagged && c.board_tag == cursor_board_tag("ex"));
    ck_assert(cursor_board_tag("ex") != cursor_board_tag("ex2"));
    ck_assert_uint_eq(cursor_board_tag(""), 0x811c9dc5U); /* FNV-1a's offset basis */
    ck_assert_uint_eq(cursor_board_tag("a"), 0xe40c292cU);
    ck_assert_str_eq(c.period, "2026-W49");
    ck_assert_int_eq(cursor_decode(cJSON_GetObjectItem(doc, "prev")->valuestring, &c), 0);
    ck_assert(c.kind == CURSOR_PREV && c.stored == -104857600 && c.id[0] == 'b');
    cJSON_Delete(doc);
    free(body);
    items[0].ordinal = 1; /* the board's first member: no prev */
    items[1].ordinal = 2;
    p.end = 2; /* and its last: no next */
    body = render_page("ex", 1, &p);
    ck_assert_ptr_nonnull(strstr(body, "\"next\":null,\"prev\":null,\"items\""));
    free(body);
    /* a score range [first, end): its own ends, its count as total */
    items[0].ordinal = 5;
    items[1].ordinal = 6;
    p.first = 4;
    p.end = 7;
    p.ranged = 1;
    body = render_walk("ex", 0, &p);
    doc = cJSON_Parse(body);
    ck_assert_int_eq((int)cJSON_GetObjectItem(doc, "total")->valuedouble, 3);
    ck_assert_int_eq((int)cJSON_GetObjectItem(doc, "page")->valuedouble, 1);
    ck_assert(cJSON_IsString(cJSON_GetObjectItem(doc, "next")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(doc, "prev")));
    cJSON_Delete(doc);
    free(body);
}
END_TEST

Suite *cursor_suite(void)
{
    Suite *s = suite_create("cursor");
    TCase *tc = tcase_create("cursors");
    tcase_add_test(tc, test_cursor_round_trips);
    tcase_add_test(tc, test_cursor_refused);
    tcase_add_test(tc, test_page_cursors);
    tcase_set_timeout(tc, 10);
    suite_add_tcase(s, tc);
    return s;
}

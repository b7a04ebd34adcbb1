/* test_upload.c -- the NDJSON upload's state machine (upload.h): lines into chunks (by lines and
 * by bytes), the writes' outcomes settled into counts, the rejected list in line order, a resumed
 * chunk after a settings change, the fault and end replies. No Redis: each test plays the
 * writer's part, as handlers_stream.c does with write.lua. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "board.h"
#include "suites.h"
#include "upload.h"

static struct upload *u;
static struct board_settings set; /* desc, first, 0 decimals: |score| <= 4294967295 */

static void setup(void)
{
    u = upload_new();
    ck_assert_ptr_nonnull(u);
    board_settings_default(&set);
}

static void teardown(void)
{
    upload_free(u);
    u = NULL;
}

/* Feed all of text (NULL: the end); the last upload_take result. */
static int feed(const char *text)
{
    size_t at = 0;
    int rc = upload_take(u, text, text ? strlen(text) : 0, &at);
    if (rc == 0 && text)
        ck_assert_uint_eq(at, strlen(text));
    return rc;
}

/* Write the pending chunk: every entry applied (`range_at` >= 0: that entry's incr left the
 * range), then settled with rc. Returns the entries written. */
static size_t write_chunk(int range_at, int rc)
{
    struct upload_chunk c;
    ck_assert_int_eq(upload_chunk_take(u, &c), 0);
    size_t n = upload_chunk_entries(&set, &c);
    for (size_t i = 0; i < n; i++)
        c.out[i].rc = (int)i == range_at ? -ERANGE : 0;
    upload_chunk_written(&c, rc && rc != -EREMOTEIO ? 0 : n, rc); /* -EREMOTEIO: applied */
    upload_settle(u, rc, &set, &c);
    upload_chunk_free(&c);
    return n;
}

/* The end reply, parsed (the caller deletes it). */
static cJSON *reply(void)
{
    char *json = upload_reply(u);
    ck_assert_ptr_nonnull(json);
    cJSON *doc = cJSON_Parse(json);
    free(json);
    ck_assert_ptr_nonnull(doc);
    return doc;
}

static double num(const cJSON *doc, const char *name)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(doc, name);
    ck_assert_msg(cJSON_IsNumber(v), "%s is not a number", name);
    return v->valuedouble;
}

/* "line:code" of each rejected item, comma separated. */
static void rejected_of(const cJSON *doc, char *out, size_t len)
{
    out[0] = '\0';
    const cJSON *r = cJSON_GetObjectItemCaseSensitive(doc, "rejected");
    for (const cJSON *it = r ? r->child : NULL; it; it = it->next) {
        size_t at = strlen(out);
        const cJSON *e = cJSON_GetObjectItemCaseSensitive(it, "error");
        snprintf(out + at, len - at, "%s%.0f:%s", at ? "," : "", num(it, "line"),
                 cJSON_GetObjectItemCaseSensitive(e, "code")->valuestring);
    }
}

/* Lines before + i + after for i in from..from+n, one a line. */
static char *lines(int from, int n, const char *before, const char *after)
{
    size_t cap = (size_t)n * (strlen(before) + strlen(after) + 16) + 1;
    char *s = calloc(cap, 1);
    ck_assert_ptr_nonnull(s);
    size_t at = 0;
    for (int i = from; i < from + n; i++)
        at += (size_t)snprintf(s + at, cap - at, "%s%d%s\n", before, i, after);
    return s;
}

START_TEST(test_chunks_of_lines)
{
    char *body = lines(0, 650, "{\"id\":\"m", "\",\"score\":1}");
    size_t at = 0, len = strlen(body);
    int chunks = 0;
    int rc;
    while ((rc = upload_take(u, body, len, &at)) == 1) {
        ck_assert_uint_eq(upload_pending(u), UPLOAD_CHUNK_LINES);
        ck_assert_uint_eq(write_chunk(-1, 0), UPLOAD_CHUNK_LINES);
        ck_assert_uint_eq(upload_pending(u), 0);
        chunks++;
    }
    ck_assert_int_eq(rc, 0);
    ck_assert_uint_eq(at, len);
    ck_assert_int_eq(chunks, 2);
    ck_assert_int_eq(feed(NULL), 0);
    ck_assert_uint_eq(upload_pending(u), 50);
    write_chunk(-1, 0);
    cJSON *doc = reply();
    ck_assert_int_eq((int)num(doc, "applied"), 650);
    ck_assert_int_eq((int)num(doc, "rejected_total"), 0);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "rejected")), 0);
    cJSON_Delete(doc);
    free(body);
}
END_TEST

/* Big records end a chunk by its bytes, long before UPLOAD_CHUNK_LINES. */
START_TEST(test_chunk_bounded_by_bytes)
{
    char record[1001];
    memset(record, 'x', 1000);
    record[1000] = '\0';
    char after[1100];
    snprintf(after, sizeof(after), "\",\"score\":1,\"record\":{\"t\":\"%s\"}}", record);
    char *body = lines(0, 100, "{\"id\":\"m", after);
    size_t at = 0;
    ck_assert_int_eq(upload_take(u, body, strlen(body), &at), 1);
    size_t n = upload_pending(u);
    ck_assert_msg(n > 40 && n < 60, "%zu lines of 1 KB records made a chunk", n);
    free(body);
}
END_TEST

/* Lines refused when read wait for the lines before them: the list stays in line order. */
START_TEST(test_rejected_in_line_order)
{
    const char *body = "{\"id\":\"a\",\"score\":1}\n"
                       "not json\n"
                       "{\"id\":\"b\",\"score\":5000000000}\n"
                       "{\"id\":\"c\",\"score\":1,\"op\":\"add\"}\n"
                       "\n"
                       "{\"id\":\"d\",\"score\":2,\"op\":\"incr\"}";
    ck_assert_int_eq(feed(body), 0);
    ck_assert_int_eq(feed(NULL), 0);
    ck_assert_uint_eq(upload_pending(u), 3); /* a, b and d; the bad ones are not pending */
    ck_assert_uint_eq(write_chunk(1, 0), 2); /* b's score cannot be held: a and d written */
    cJSON *doc = reply();
    char got[256];
    rejected_of(doc, got, sizeof(got));
    ck_assert_str_eq(got, "2:invalid_json,3:score_out_of_range,4:invalid_op,6:score_out_of_range");
    ck_assert_int_eq((int)num(doc, "applied"), 1);
    ck_assert_int_eq((int)num(doc, "rejected_total"), 4);
    cJSON_Delete(doc);
}
END_TEST

/* A settings change under a chunk (-EAGAIN) resumes after what was written. */
START_TEST(test_resumed_chunk)
{
    char *body = lines(1, UPLOAD_CHUNK_LINES, "{\"id\":\"m", "\",\"score\":1}");
    ck_assert_int_eq(feed(body), 1);
    struct upload_chunk c;
    ck_assert_int_eq(upload_chunk_take(u, &c), 0);
    ck_assert_uint_eq(upload_chunk_entries(&set, &c), UPLOAD_CHUNK_LINES);
    upload_chunk_written(&c, 100, -EAGAIN); /* 100 written, then the settings moved */
    ck_assert_uint_eq(c.start, 100);
    size_t n = upload_chunk_entries(&set, &c);
    ck_assert_uint_eq(n, UPLOAD_CHUNK_LINES - 100);
    ck_assert_str_eq(c.be[0].id, "m101");
    upload_chunk_written(&c, n, 0);
    upload_settle(u, 0, &set, &c);
    upload_chunk_free(&c);
    cJSON *doc = reply();
    ck_assert_int_eq((int)num(doc, "applied"), UPLOAD_CHUNK_LINES);
    cJSON_Delete(doc);
    free(body);
}
END_TEST

/* Cut by a fault: only the settled lines count, and the reply says where to resume. */
START_TEST(test_fault_counts_what_is_settled)
{
    char *first = lines(1, UPLOAD_CHUNK_LINES, "{\"id\":\"m", "\",\"score\":1}");
    ck_assert_int_eq(feed(first), 1);
    write_chunk(-1, 0);
    char *second = lines(UPLOAD_CHUNK_LINES + 1, 20, "{\"id\":\"m", "\",\"score\":1}");
    ck_assert_int_eq(feed(second), 0);
    ck_assert_int_eq(feed("junk\n"), 0); /* line 321, refused when read: not settled */
    ck_assert_int_eq(feed(NULL), 0);
    write_chunk(-1, -ETIME); /* sent, never answered */
    int retry = 0;
    enum err_id id = ERR_NONE;
    char msg[400];
    struct upload_cut cut;
    upload_fault(u, -ETIME, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_int_eq(retry, 1);
    ck_assert_int_eq(err_status(id), 503);
    ck_assert_str_eq(err_code(id), "write_outcome_unknown");
    ck_assert_msg(strstr(msg, "300 lines were applied and 0 rejected, every line up to line 300 "
                              "is settled, and lines 301 to 320 may or may not be applied; "
                              "send the lines after line 300 again"),
                  "%s", msg);
    /* the same as numbers: lines 301..320 (the chunk cut) may be applied */
    ck_assert_int_eq(cut.applied, 300);
    ck_assert_int_eq(cut.rejected, 0);
    ck_assert_int_eq(cut.settled_line, 300);
    ck_assert_int_eq(cut.unknown_line, 320);
    upload_fault(u, -EDQUOT, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_int_eq(err_status(id), 507);
    ck_assert_str_eq(err_code(id), "insufficient_storage");
    upload_fault(u, -EROFS, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_str_eq(err_code(id), "primary_changed");
    upload_fault(u, -ECONNREFUSED, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_int_eq(err_status(id), 503);
    ck_assert_str_eq(err_code(id), "redis_unavailable");
    ck_assert_int_eq(cut.unknown_line, 0); /* not sent whole: nothing of the chunk applied */
    upload_fault(u, 0, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_int_eq(retry, 1);
    ck_assert_str_eq(err_code(id), "shutting_down");
    ck_assert_msg(strstr(msg, "rankd is shutting down: 300 lines were applied"), "%s", msg);
    ck_assert_int_eq(cut.settled_line, 300);
    ck_assert_int_eq(cut.unknown_line, 0);
    free(first);
    free(second);
}
END_TEST

/* --write-replicas: a chunk applied on the primary and not confirmed on the replicas is settled
 * (its lines are never to be sent again), and the reply says so; the lines after it are not. */
START_TEST(test_unreplicated_chunk_is_settled)
{
    char *first = lines(1, UPLOAD_CHUNK_LINES, "{\"id\":\"m", "\",\"score\":1}");
    ck_assert_int_eq(feed(first), 1);
    write_chunk(-1, 0);
    char *second = lines(UPLOAD_CHUNK_LINES + 1, 20, "{\"id\":\"m", "\",\"score\":1}");
    ck_assert_int_eq(feed(second), 0);
    ck_assert_int_eq(feed(NULL), 0);
    write_chunk(-1, -EREMOTEIO);
    int retry = 0;
    enum err_id id = ERR_NONE;
    char msg[600];
    struct upload_cut cut;
    upload_fault(u, -EREMOTEIO, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_int_eq(err_status(id), 503);
    ck_assert_int_eq(retry, 1);
    ck_assert_str_eq(err_code(id), "write_not_replicated");
    ck_assert_msg(strstr(msg, "320 lines were applied and 0 rejected, every line up to line 320 "
                              "is settled (the last chunk's on the primary, not confirmed on the "
                              "replicas: do not send those again); send the lines after line "
                              "320 again."),
                  "%s", msg);
    ck_assert_ptr_null(strstr(msg, "may or may not"));
    ck_assert_int_eq(cut.applied, 320);
    ck_assert_int_eq(cut.settled_line, 320);
    ck_assert_int_eq(cut.unknown_line, 0);
    free(first);
    free(second);
}
END_TEST

START_TEST(test_too_long_line)
{
    size_t big = (size_t)UPLOAD_LINE_MAX + 10;
    char *body = malloc(big + 64);
    ck_assert_ptr_nonnull(body);
    memset(body, 'x', big);
    strcpy(body + big, "\n{\"id\":\"a\",\"score\":1}\n");
    ck_assert_int_eq(feed(body), 0);
    ck_assert_int_eq(feed(NULL), 0);
    write_chunk(-1, 0);
    cJSON *doc = reply();
    char got[128];
    rejected_of(doc, got, sizeof(got));
    ck_assert_str_eq(got, "1:line_too_large");
    ck_assert_int_eq((int)num(doc, "applied"), 1);
    cJSON_Delete(doc);
    free(body);
}
END_TEST

/* Every rejection counts; the first UPLOAD_SHOWN_MAX are listed. */
START_TEST(test_rejected_list_capped)
{
    char *body = lines(0, 1200, "{\"id\":\"m", "\"}"); /* no score */
    ck_assert_int_eq(feed(body), 0);
    ck_assert_int_eq(feed(NULL), 0);
    cJSON *doc = reply();
    ck_assert_int_eq((int)num(doc, "rejected_total"), 1200);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(doc, "rejected")),
                     UPLOAD_SHOWN_MAX);
    cJSON_Delete(doc);
    free(body);
}
END_TEST

/* Two chunks in flight, a line refused when read between them: listed after the first chunk's
 * lines and before the second's, once the first is settled; the chunks settle in order. */
START_TEST(test_two_chunks_in_flight)
{
    char *first = lines(1, UPLOAD_CHUNK_LINES, "{\"id\":\"a", "\",\"score\":1}");
    ck_assert_int_eq(feed(first), 1);
    struct upload_chunk a, b;
    ck_assert_int_eq(upload_chunk_take(u, &a), 0);
    ck_assert_uint_eq(upload_pending(u), 0);
    ck_assert_int_eq(feed("not json\n"), 0); /* line 301: waits for chunk a */
    char *second = lines(1, UPLOAD_CHUNK_LINES - 1, "{\"id\":\"b", "\",\"score\":1}");
    ck_assert_int_eq(feed(second), 0);
    ck_assert_int_eq(feed("{\"id\":\"z\",\"score\":-1e300}\n"), 1); /* line 601: bad on write */
    ck_assert_int_eq(upload_chunk_take(u, &b), 0);
    ck_assert_int_eq(upload_chunks(u), 2);
    struct upload_chunk c;
    ck_assert_int_eq(upload_chunk_take(u, &c), -EBUSY); /* at most UPLOAD_CHUNKS_MAX */
    ck_assert_uint_eq(upload_chunk_entries(&set, &a), UPLOAD_CHUNK_LINES);
    ck_assert_uint_eq(upload_chunk_entries(&set, &b), UPLOAD_CHUNK_LINES - 1);
    upload_chunk_written(&a, UPLOAD_CHUNK_LINES, 0);
    upload_settle(u, 0, &set, &a);
    upload_chunk_written(&b, UPLOAD_CHUNK_LINES - 1, 0);
    upload_settle(u, 0, &set, &b);
    ck_assert_int_eq(upload_chunks(u), 0);
    cJSON *doc = reply();
    char rej[200];
    rejected_of(doc, rej, sizeof(rej));
    ck_assert_str_eq(rej, "301:invalid_json,601:score_out_of_range");
    ck_assert_int_eq((int)num(doc, "applied"), 2 * UPLOAD_CHUNK_LINES - 1);
    cJSON_Delete(doc);
    free(first);
    free(second);
}
END_TEST

/* The first of two chunks in flight fails; the second, refused whole for it, is dropped: only
 * what was settled before counts, and no line is in doubt. */
START_TEST(test_dropped_chunk_after_fault)
{
    char *body = lines(1, 2 * UPLOAD_CHUNK_LINES, "{\"id\":\"m", "\",\"score\":1}");
    size_t at = 0, len = strlen(body);
    ck_assert_int_eq(upload_take(u, body, len, &at), 1);
    struct upload_chunk a, b;
    ck_assert_int_eq(upload_chunk_take(u, &a), 0);
    ck_assert_int_eq(upload_take(u, body, len, &at), 1); /* the second chunk is full */
    ck_assert_int_eq(upload_chunk_take(u, &b), 0);
    ck_assert_uint_eq(upload_chunk_entries(&set, &a), UPLOAD_CHUNK_LINES);
    upload_chunk_written(&a, 0, -EIO);
    upload_settle(u, -EIO, &set, &a);
    upload_drop(u, &b);
    ck_assert_int_eq(upload_chunks(u), 0);
    enum err_id id;
    int retry = 0;
    char msg[400];
    struct upload_cut cut;
    upload_fault(u, -EIO, &id, &retry, msg, sizeof(msg), &cut);
    ck_assert_int_eq(cut.applied, 0);
    ck_assert_int_eq(cut.settled_line, 0);
    ck_assert_int_eq(cut.unknown_line, 0);
    free(body);
}
END_TEST

Suite *upload_suite(void)
{
    Suite *s = suite_create("upload");
    struct {
        const char *name;
        const TTest *test;
    } cases[] = {
        {"chunks_of_lines", test_chunks_of_lines},
        {"chunk_bounded_by_bytes", test_chunk_bounded_by_bytes},
        {"rejected_in_line_order", test_rejected_in_line_order},
        {"resumed_chunk", test_resumed_chunk},
        {"fault_counts_what_is_settled", test_fault_counts_what_is_settled},
        {"unreplicated_chunk_is_settled", test_unreplicated_chunk_is_settled},
        {"too_long_line", test_too_long_line},
        {"rejected_list_capped", test_rejected_list_capped},
        {"two_chunks_in_flight", test_two_chunks_in_flight},
        {"dropped_chunk_after_fault", test_dropped_chunk_after_fault},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        TCase *tc = tcase_create(cases[i].name);
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 10);
        tcase_add_test(tc, cases[i].test);
        suite_add_tcase(s, tc);
    }
    return s;
}

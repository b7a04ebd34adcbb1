/* load.c -- a writer and a reader against rankd while Redis moves under them; see load.h. */
#include "load.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <check.h>

#include "fixture.h"
#include "records.h"

static void note_tries(struct load *l, int tries)
{
    if (tries > l->max_tries)
        l->max_tries = tries;
}

static void *writer_main(void *arg)
{
    struct load *l = arg;
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/scores", l->board);
    for (int i = 0; !atomic_load(&l->stop) && i < LOAD_WRITES_MAX; i++) {
        char body[128];
        snprintf(body, sizeof(body), "{\"id\":\"w%d\",\"score\":%d,\"record\":{\"n\":%d}}", i, i,
                 i);
        int tries = 0, ok = 0;
        int64_t give_up = util_now_ms() + (l->retry_ms ? l->retry_ms : LOAD_RETRY_MS_DEFAULT);
        while (!ok && util_now_ms() < give_up) {
            struct http_result r;
            tries++;
            if (http_req(l->port, "POST", path, body, strlen(body), NULL, TEST_TOKEN, &r) == 0) {
                if (r.status == 200) {
                    ok = 1;
                } else if (r.status == 503) {
                    l->write_503++;
                    atomic_store(&l->last_503_ms, util_now_ms());
                } else {
                    l->write_other++;
                    l->last_other = r.status;
                    snprintf(l->other_body, sizeof(l->other_body), "%s", r.body);
                }
            }
            http_result_free(&r);
            if (!ok)
                usleep(5000);
        }
        note_tries(l, tries);
        if (!ok) {
            l->write_gave_up++;
            break;
        }
        l->acked_ms[i] = util_now_ms();
        l->written = i + 1;
    }
    return NULL;
}

static void *reader_main(void *arg)
{
    struct load *l = arg;
    char page[128], member[128];
    snprintf(page, sizeof(page), "/boards/%s/rank?page=1&size=10", l->board);
    snprintf(member, sizeof(member), "/boards/%s/members/base0", l->board);
    while (!atomic_load(&l->stop)) {
        const char *path = l->reads % 2 ? member : page;
        int tries = 0, ok = 0;
        int64_t give_up = util_now_ms() + (l->retry_ms ? l->retry_ms : LOAD_RETRY_MS_DEFAULT);
        while (!ok && util_now_ms() < give_up && !atomic_load(&l->stop)) {
            struct http_result r;
            tries++;
            if (http_get(l->port, path, &r) == 0) {
                if (r.status == 200)
                    ok = 1;
                else if (r.status == 503) {
                    l->read_503++;
                    atomic_store(&l->last_503_ms, util_now_ms());
                } else {
                    l->read_other++;
                    l->last_read_other = r.status;
                    snprintf(l->read_other_body, sizeof(l->read_other_body), "%s %s", path, r.body);
                }
            }
            http_result_free(&r);
            if (!ok)
                usleep(5000);
        }
        note_tries(l, tries);
        l->reads++;
    }
    return NULL;
}

void load_start(struct load *l, pthread_t th[2])
{
    ck_assert_int_eq(pthread_create(&th[0], NULL, writer_main, l), 0);
    ck_assert_int_eq(pthread_create(&th[1], NULL, reader_main, l), 0);
}

void load_stop(struct load *l, pthread_t th[2])
{
    atomic_store(&l->stop, 1);
    pthread_join(th[0], NULL);
    pthread_join(th[1], NULL);
}

int load_check(const struct load *l, const char *what, redisContext *admin, int clustered,
               int64_t lossy_from, int64_t lossy_to)
{
    int lost = 0;
    fprintf(stderr,
            "load: %s: %d writes acknowledged (%d 503s on the way), %d reads (%d 503s), the "
            "longest request took %d attempts\n",
            what, l->written, l->write_503, l->reads, l->read_503, l->max_tries);
    ck_assert_msg(l->write_other == 0, "%s: %d write errors that are no 503, the last %ld %s", what,
                  l->write_other, l->last_other, l->other_body);
    ck_assert_msg(l->read_other == 0, "%s: %d read errors that are no 503, the last %ld %s", what,
                  l->read_other, l->last_read_other, l->read_other_body);
    ck_assert_msg(l->write_gave_up == 0, "%s: a write failed for %d ms", what,
                  l->retry_ms ? l->retry_ms : LOAD_RETRY_MS_DEFAULT);
    ck_assert_msg(l->written > 0 && l->reads > 0, "%s: nothing ran", what);
    for (int i = 0; i < l->written; i++) {
        char id[16], key[64];
        snprintf(id, sizeof(id), "w%d", i);
        redisReply *r = redis_admin_cmd(admin, "ZSCORE rankd:{%s}:z %s", l->board, id);
        int lossy = l->acked_ms[i] >= lossy_from && l->acked_ms[i] < lossy_to;
        if (r->type != REDIS_REPLY_STRING && lossy) {
            lost++;
            freeReplyObject(r);
            continue;
        }
        ck_assert_msg(r->type == REDIS_REPLY_STRING, "%s: write %s acknowledged, not there", what,
                      id);
        freeReplyObject(r);
        records_key("rankd", clustered, id, strlen(id), key, sizeof(key));
        r = redis_admin_cmd(admin, "HGET %s %s", key, id);
        char want[32];
        snprintf(want, sizeof(want), "{\"n\":%d}", i);
        ck_assert_msg(r->type == REDIS_REPLY_STRING && strcmp(r->str, want) == 0,
                      "%s: record of %s: %s", what, id,
                      r->type == REDIS_REPLY_STRING ? r->str : "-");
        freeReplyObject(r);
    }
    return lost;
}

int64_t load_wait_writes(const struct load *l, int more, int ms)
{
    int w = l->written;
    int64_t until = util_now_ms() + ms;
    while (l->written < w + more && util_now_ms() < until)
        usleep(20000);
    return util_now_ms();
}

void load_board(int port, const char *board)
{
    char body[4096] = "{\"entries\":[";
    for (int i = 0; i < 50; i++) {
        size_t l = strlen(body);
        snprintf(body + l, sizeof(body) - l, "%s{\"id\":\"base%d\",\"score\":%d}", i ? "," : "", i,
                 1000 + i);
    }
    strcat(body, "]}");
    char path[128];
    snprintf(path, sizeof(path), "/boards/%s/scores", board);
    struct http_result r;
    ck_assert_int_eq(http_write(port, "POST", path, body, &r), 0);
    ck_assert_msg(r.status == 200, "POST %s -> %ld %s", path, r.status, r.body);
    http_result_free(&r);
}

/* access.c -- request ids, the completion of a request: metrics and access line; see access.h. */
#include "access.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "log.h"
#include "metrics.h"
#include "util.h"

static atomic_ullong next_id;
static atomic_int id_seeded;

static int id_char_ok(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c && strchr("-_.:/+=@", c));
}

static int id_valid(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if (n == ACCESS_ID_MAX || !id_char_ok((unsigned char)s[n]))
            return 0;
    return n > 0;
}

static void seed(void)
{
    if (atomic_load_explicit(&id_seeded, memory_order_acquire))
        return;
    unsigned long long start = 0;
    if (getrandom(&start, sizeof(start), GRND_NONBLOCK) != (ssize_t)sizeof(start))
        start = (unsigned long long)util_now_us() * 6364136223846793005ULL ^
                (unsigned long long)time(NULL);
    unsigned long long zero = 0;
    atomic_compare_exchange_strong(&next_id, &zero, start); /* the first to seed wins */
    atomic_store_explicit(&id_seeded, 1, memory_order_release);
}

void access_request_id(const char *given, char out[ACCESS_ID_MAX + 1])
{
    if (given && id_valid(given)) {
        memcpy(out, given, strlen(given) + 1);
        return;
    }
    seed();
    unsigned long long v = atomic_fetch_add_explicit(&next_id, 1, memory_order_relaxed);
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--, v >>= 4)
        out[i] = hex[v & 15];
    out[16] = '\0';
}

struct access_fault *access_fault_of(int status, enum err_id error, const char *message)
{
    if (status < 500)
        return NULL;
    struct access_fault *f = calloc(1, sizeof(*f));
    if (!f)
        return NULL;
    util_copy(f->code, sizeof(f->code), err_code(error));
    util_copy(f->cause, sizeof(f->cause), message ? message : "the reply names no error message");
    return f;
}

void access_done(const struct access_record *r)
{
    metrics_request(r->route_metric, r->status, r->us);
    if (r->status < 500 && !log_access_enabled())
        return;
    struct log_request lr = {
        .method = r->method,
        .route = r->route,
        .status = r->status,
        .bytes = r->bytes,
        .us = r->us,
        .cache = r->cache,
        .request_id = r->request_id,
        .error = r->fault ? r->fault->code : NULL,
        .cause = r->fault ? r->fault->cause : NULL,
        .aborted = r->aborted,
        .client = r->client,
    };
    log_request(&lr);
}

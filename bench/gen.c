/*
 * gen.c -- data generator for the benchmark (bench/run.sh): boards with Zipf-like ties and ~100-byte
 * flat records, written straight to stdout in one of four forms.
 *
 *   gen resp   N BOARD IDPFX PREFIX TTL_MS RECORDS(0|1)   RESP for `redis-cli --pipe`: the board in
 *              rankd's own key format (schema/redis-keys.md, schema/score-layout.md): settings hash
 *              P:{B}:meta, registry P:boards, sorted set P:{B}:z, records in P:items
 *   gen ndjson N IDPFX [OP]                               NDJSON lines for POST /boards/{b}/scores
 *              (with "op":OP in every line when OP is given, e.g. set)
 *   gen pipe   N ZKEY ITEMSKEY IDPFX                      RESP: the same entries and records as
 *              `resp`, one `ZADD ZKEY stored id` and one `HSET ITEMSKEY id record` per entry (what
 *              a plain client pipelines; the baseline of the NDJSON import)
 *   gen csv    N IDPFX                                    id,score,record for PostgreSQL COPY (CSV)
 *   gen weight KEY COUNT BYTES NESTED(0|1)                RESP: HSET KEY f1 v1 .. fCOUNT vCOUNT, each
 *              value a JSON record of about BYTES bytes (flat, or nested objects and arrays)
 *
 * Member i (1..N) has ideal rank i and score floor(10^7 / i): a few high scores and long runs of
 * equal low scores (on 1M members the last ~100,000 share a handful of values), like real games.
 * Ids are a permutation of 1..N (i * 7919 mod N), so id order is not rank order. Board layout:
 * desc, tiebreak first, 0 decimals, page_size 20: stored = -score * 2^21 + tie, where tie counts
 * the members already in the score's group (emitted in rank order, so the first is 0).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TIE_BITS 21
#define BATCH 1000 /* entries per ZADD/HSET: each command stays ~1 ms on the Redis main thread */

static int64_t score_of(int64_t i)
{
    return 10000000 / i;
}

static int64_t id_of(int64_t i, int64_t n)
{
    /* 7919 is prime; when it divides n the map is not a permutation, so fall back to identity */
    if (n % 7919 == 0)
        return i;
    return (int64_t)(((__int128)i * 7919) % n) + 1;
}

static const char *const countries[] = {"DE", "FR", "US", "BR", "JP", "KR", "IN", "GB", "ES", "PL"};

/* A flat record of about 100 bytes (no id field: ids are found by `"id":"` in page bodies). */
static int record_of(int64_t idn, char *out, size_t len)
{
    uint64_t h = (uint64_t)idn * 0x9E3779B97F4A7C15u;
    return snprintf(out, len,
                    "{\"name\":\"player-%07" PRId64 "\",\"country\":\"%s\",\"level\":%u,"
                    "\"guild\":\"guild-%04u\",\"joined\":\"2024-%02u-%02u\",\"premium\":%s}",
                    idn, countries[h % 10], (unsigned)(h >> 8) % 100 + 1,
                    (unsigned)(h >> 16) % 5000, (unsigned)(h >> 24) % 12 + 1,
                    (unsigned)(h >> 32) % 28 + 1, (h >> 40) & 1 ? "true" : "false");
}

static void bulk(const char *s, size_t n)
{
    printf("$%zu\r\n", n);
    fwrite(s, 1, n, stdout);
    fputs("\r\n", stdout);
}

static void bulks(const char *s)
{
    bulk(s, strlen(s));
}

static void cmd_header(int argc)
{
    printf("*%d\r\n", argc);
}

static int gen_resp(int64_t n, const char *board, const char *idp, const char *prefix, long ttl,
                    int records)
{
    char key[256], meta[256], reg[256], items[256], v[64], id[64], rec[256];
    snprintf(key, sizeof(key), "%s:{%s}:z", prefix, board);
    snprintf(meta, sizeof(meta), "%s:{%s}:meta", prefix, board);
    snprintf(reg, sizeof(reg), "%s:boards", prefix);
    snprintf(items, sizeof(items), "%s:items", prefix);

    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    char gen[32];
    snprintf(gen, sizeof(gen), "%" PRIu64,
             ((uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u) * 1000u + 777u);
    cmd_header(14);
    bulks("HSET");
    bulks(meta);
    const char *kv[] = {"order", "desc", "tiebreak", "first", "score_decimals", "0", "page_size",
                        "20", "page_ttl_ms", NULL, "gen", gen};
    snprintf(v, sizeof(v), "%ld", ttl);
    kv[9] = v;
    for (int i = 0; i < 12; i++)
        bulks(kv[i]);
    cmd_header(3);
    bulks("SADD");
    bulks(reg);
    bulks(board);

    int64_t prev_score = INT64_MIN, tie = 0;
    for (int64_t start = 1; start <= n; start += BATCH) {
        int64_t end = start + BATCH - 1 < n ? start + BATCH - 1 : n;
        int64_t k = end - start + 1;
        cmd_header((int)(2 + 2 * k));
        bulks("ZADD");
        bulks(key);
        for (int64_t i = start; i <= end; i++) {
            int64_t s = score_of(i);
            if (s != prev_score) {
                prev_score = s;
                tie = 0;
            } else {
                tie++;
            }
            int64_t stored = -s * ((int64_t)1 << TIE_BITS) + tie;
            snprintf(v, sizeof(v), "%" PRId64, stored);
            snprintf(id, sizeof(id), "%s%" PRId64, idp, id_of(i, n));
            bulks(v);
            bulks(id);
        }
        if (!records)
            continue;
        cmd_header((int)(2 + 2 * k));
        bulks("HSET");
        bulks(items);
        for (int64_t i = start; i <= end; i++) {
            int64_t idn = id_of(i, n);
            snprintf(id, sizeof(id), "%s%" PRId64, idp, idn);
            int rl = record_of(idn, rec, sizeof(rec));
            bulks(id);
            bulk(rec, (size_t)rl);
        }
    }
    return 0;
}

static int gen_ndjson(int64_t n, const char *idp, const char *op)
{
    char rec[256];
    for (int64_t i = 1; i <= n; i++) {
        int64_t idn = id_of(i, n);
        record_of(idn, rec, sizeof(rec));
        printf("{\"id\":\"%s%" PRId64 "\",\"score\":%" PRId64 ",", idp, idn, score_of(i));
        if (op)
            printf("\"op\":\"%s\",", op);
        printf("\"record\":%s}\n", rec);
    }
    return 0;
}

/* One ZADD and one HSET per entry, stored scores as in gen_resp (desc, tiebreak first). */
static int gen_pipe(int64_t n, const char *zkey, const char *items, const char *idp)
{
    char v[64], id[64], rec[256];
    int64_t prev_score = INT64_MIN, tie = 0;
    for (int64_t i = 1; i <= n; i++) {
        int64_t s = score_of(i), idn = id_of(i, n);
        tie = s != prev_score ? 0 : tie + 1;
        prev_score = s;
        snprintf(v, sizeof(v), "%" PRId64, -s * ((int64_t)1 << TIE_BITS) + tie);
        snprintf(id, sizeof(id), "%s%" PRId64, idp, idn);
        cmd_header(4);
        bulks("ZADD");
        bulks(zkey);
        bulks(v);
        bulks(id);
        int rl = record_of(idn, rec, sizeof(rec));
        cmd_header(4);
        bulks("HSET");
        bulks(items);
        bulks(id);
        bulk(rec, (size_t)rl);
    }
    return 0;
}

static int gen_csv(int64_t n, const char *idp)
{
    char rec[256];
    for (int64_t i = 1; i <= n; i++) {
        int64_t idn = id_of(i, n);
        record_of(idn, rec, sizeof(rec));
        /* CSV quoting: a record's quotes doubled */
        printf("%s%" PRId64 ",%" PRId64 ",\"", idp, idn, score_of(i));
        for (const char *p = rec; *p; p++) {
            if (*p == '"')
                putchar('"');
            putchar(*p);
        }
        fputs("\"\n", stdout);
    }
    return 0;
}

/* A record of about `bytes` bytes: flat (one long string field) or nested (objects in arrays). */
static char *weighted_record(int64_t idn, size_t bytes, int nested)
{
    size_t cap = bytes + 512, len = 0;
    char *out = malloc(cap);
    if (!out)
        return NULL;
    if (!nested) {
        len = (size_t)record_of(idn, out, cap);
        /* pad with a string field when more than the ~100 bytes are asked for */
        if (len + 16 < bytes) {
            len--; /* drop the closing brace */
            len += (size_t)snprintf(out + len, cap - len, ",\"bio\":\"");
            while (len + 2 < bytes) {
                out[len] = (char)('a' + len % 26);
                len++;
            }
            len += (size_t)snprintf(out + len, cap - len, "\"}");
        }
        out[len] = 0;
        return out;
    }
    len += (size_t)snprintf(out, cap,
                            "{\"name\":\"player-%07" PRId64 "\",\"profile\":{\"country\":\"DE\","
                            "\"stats\":{\"level\":42,\"wins\":17,\"losses\":3}},\"inventory\":[",
                            idn);
    for (int k = 0; len + 120 < bytes; k++)
        len += (size_t)snprintf(out + len, cap - len,
                                "%s{\"slot\":%d,\"item\":{\"kind\":\"sword\",\"tier\":%d,"
                                "\"enchant\":[\"fire\",\"ice\"],\"durability\":0.%02d}}",
                                k ? "," : "", k, k % 5, k % 100);
    len += (size_t)snprintf(out + len, cap - len, "]}");
    return out;
}

static int gen_weight(const char *key, int count, size_t bytes, int nested)
{
    cmd_header(2 + 2 * count);
    bulks("HSET");
    bulks(key);
    for (int i = 1; i <= count; i++) {
        char f[32];
        snprintf(f, sizeof(f), "f%d", i);
        char *r = weighted_record(i, bytes, nested);
        if (!r)
            return 1;
        bulks(f);
        bulks(r);
        free(r);
    }
    return 0;
}

int main(int argc, char **argv)
{
    static char buf[1 << 20];
    setvbuf(stdout, buf, _IOFBF, sizeof(buf));
    int rc = 2;
    if (argc == 8 && strcmp(argv[1], "resp") == 0)
        rc = gen_resp(atoll(argv[2]), argv[3], argv[4], argv[5], atol(argv[6]), atoi(argv[7]));
    else if ((argc == 4 || argc == 5) && strcmp(argv[1], "ndjson") == 0)
        rc = gen_ndjson(atoll(argv[2]), argv[3], argc == 5 ? argv[4] : NULL);
    else if (argc == 6 && strcmp(argv[1], "pipe") == 0)
        rc = gen_pipe(atoll(argv[2]), argv[3], argv[4], argv[5]);
    else if (argc == 4 && strcmp(argv[1], "csv") == 0)
        rc = gen_csv(atoll(argv[2]), argv[3]);
    else if (argc == 6 && strcmp(argv[1], "weight") == 0)
        rc = gen_weight(argv[2], atoi(argv[3]), (size_t)atol(argv[4]), atoi(argv[5]));
    if (rc == 2)
        fprintf(stderr, "usage: see the header of bench/gen.c\n");
    if (fflush(stdout) != 0)
        rc = 1;
    return rc;
}

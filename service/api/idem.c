/* idem.c -- Idempotency-Key syntax and request digests; see idem.h. */
#include "idem.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

int idem_key_valid(const char *key, size_t len)
{
    if (!key || len == 0 || len > IDEM_KEY_LEN_MAX)
        return 0;
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)key[i] < 0x21 || (unsigned char)key[i] > 0x7e)
            return 0;
    return 1;
}

/* ---------------------------------------------------------------- SHA-256 (FIPS 180-4) */

static const uint32_t k256[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

static uint32_t ror(uint32_t x, int n)
{
    return (x >> n) | (x << (32 - n));
}

static void sha256_block(struct idem_sha256 *s, const unsigned char *p)
{
    uint32_t w[64];
    for (size_t i = 0; i < 16; i++)
        w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
               (uint32_t)p[4 * i + 2] << 8 | (uint32_t)p[4 * i + 3];
    for (size_t i = 16; i < 64; i++) {
        uint32_t s0 = ror(w[i - 15], 7) ^ ror(w[i - 15], 18) ^ (w[i - 15] >> 3);
        uint32_t s1 = ror(w[i - 2], 17) ^ ror(w[i - 2], 19) ^ (w[i - 2] >> 10);
        w[i] = w[i - 16] + s0 + w[i - 7] + s1;
    }
    uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4], f = s->h[5],
             g = s->h[6], h = s->h[7];
    for (int i = 0; i < 64; i++) {
        uint32_t t1 =
            h + (ror(e, 6) ^ ror(e, 11) ^ ror(e, 25)) + ((e & f) ^ (~e & g)) + k256[i] + w[i];
        uint32_t t2 = (ror(a, 2) ^ ror(a, 13) ^ ror(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
        h = g;
        g = f;
        f = e;
        e = d + t1;
        d = c;
        c = b;
        b = a;
        a = t1 + t2;
    }
    s->h[0] += a;
    s->h[1] += b;
    s->h[2] += c;
    s->h[3] += d;
    s->h[4] += e;
    s->h[5] += f;
    s->h[6] += g;
    s->h[7] += h;
}

void idem_sha256_init(struct idem_sha256 *s)
{
    static const uint32_t h0[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                   0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
    memcpy(s->h, h0, sizeof(h0));
    s->bytes = 0;
    s->used = 0;
}

void idem_sha256_update(struct idem_sha256 *s, const void *data, size_t len)
{
    const unsigned char *p = data;
    s->bytes += len;
    while (len > 0) {
        size_t take = sizeof(s->b) - s->used;
        if (take > len)
            take = len;
        memcpy(s->b + s->used, p, take);
        s->used += take;
        p += take;
        len -= take;
        if (s->used == sizeof(s->b)) {
            sha256_block(s, s->b);
            s->used = 0;
        }
    }
}

void idem_sha256_final(struct idem_sha256 *s, unsigned char out[32])
{
    uint64_t bits = s->bytes * 8;
    unsigned char pad[72] = {0x80};
    size_t padlen = (s->used < 56 ? 56 : 120) - s->used;
    for (int i = 0; i < 8; i++)
        pad[padlen + (size_t)i] = (unsigned char)(bits >> (56 - 8 * i));
    idem_sha256_update(s, pad, padlen + 8);
    for (size_t i = 0; i < 8; i++) {
        out[4 * i] = (unsigned char)(s->h[i] >> 24);
        out[4 * i + 1] = (unsigned char)(s->h[i] >> 16);
        out[4 * i + 2] = (unsigned char)(s->h[i] >> 8);
        out[4 * i + 3] = (unsigned char)s->h[i];
    }
}

/* ---------------------------------------------------------------- the canonical request */

/* A field of the canonical text: its length, ':', its bytes (so no field runs into the next). */
static void put_field(struct idem_sha256 *s, const char *p, size_t len)
{
    char n[24];
    int k = snprintf(n, sizeof(n), "%zu:", len);
    idem_sha256_update(s, n, (size_t)k);
    idem_sha256_update(s, p, len);
}

static void put_str(struct idem_sha256 *s, const char *p)
{
    put_field(s, p ? p : "", p ? strlen(p) : 0);
}

/* A number by its exact value (2.50 and 25e-1 alike); `has` 0: absent. */
static void put_number(struct idem_sha256 *s, const struct json_number *v, int has)
{
    char t[96];
    if (!has)
        snprintf(t, sizeof(t), "-");
    else if (v->wide)
        snprintf(t, sizeof(t), "w%s", v->text);
    else if (v->digits == 0)
        snprintf(t, sizeof(t), "0");
    else
        snprintf(t, sizeof(t), "%s%" PRIu64 "e%" PRId64, v->neg ? "-" : "", v->digits, v->exp);
    put_str(s, t);
}

void idem_digest(enum idem_shape shape, const char *const *boards, size_t nboards,
                 const struct entry_in *e, size_t n, char out[IDEM_DIGEST_HEX + 1])
{
    static const char *const shapes[] = {"entry", "batch", "boards"};
    static const char *const ops[] = {"set", "best", "incr"};
    struct idem_sha256 s;
    idem_sha256_init(&s);
    put_str(&s, "rankd write 1");
    put_str(&s, shapes[shape]);
    for (size_t b = 0; b < nboards; b++)
        put_str(&s, boards[b]);
    put_str(&s, "entries");
    for (size_t i = 0; i < n; i++) {
        put_str(&s, e[i].id);
        put_str(&s, ops[e[i].op]);
        put_number(&s, &e[i].score, 1);
        put_number(&s, &e[i].floor, e[i].has_floor);
        put_number(&s, &e[i].ceiling, e[i].has_ceiling);
        put_str(&s, e[i].record ? e[i].record : "-");
        /* sub-scores only when sent: the digests of entries without them stay what they were */
        for (int c = 0; c < e[i].nsub; c++) {
            char t[32];
            snprintf(t, sizeof(t), "s%" PRId64, e[i].sub[c]);
            put_str(&s, t);
        }
    }
    unsigned char d[32];
    idem_sha256_final(&s, d);
    for (size_t i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", d[i]);
}

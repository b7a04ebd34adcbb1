/*
 * fuzz_ndjson.c -- the NDJSON splitter (ndjson.c) fed in arbitrary chunks.
 *
 * Input: one byte for the longest line (1..64 bytes, so over-long lines are common), one for the
 * chunking, then the stream. Property: the events are those of a reference splitter that sees
 * the whole stream at once (below, written from ndjson.h's contract), whatever the chunking, and
 * every chunk is used up.
 */
#include <string.h>

#include "fuzz.h"
#include "ndjson.h"

#define EVENTS_MAX 8192

struct event {
    long line_no;
    int too_long;
    size_t off, len; /* the line's text: data[off..off+len) */
};

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* The contract: lines end at '\n' (the last one may not); a line of only spaces, tabs and '\r'
 * is skipped, however long; otherwise a line longer than max + 1 bytes is too long; otherwise one
 * '\r' at its end is dropped and what is left must be at most max bytes. Blank lines count in
 * the numbering. */
static size_t reference(const char *d, size_t n, size_t max, struct event *ev)
{
    size_t k = 0;
    long no = 1;
    for (size_t at = 0; at < n && k < EVENTS_MAX; no++) {
        const char *nl = memchr(d + at, '\n', n - at);
        size_t len = nl ? (size_t)(nl - (d + at)) : n - at;
        size_t text = len;
        if (blank(d + at, len)) {
            /* skipped */
        } else if (len > max + 1) {
            ev[k++] = (struct event){no, 1, 0, 0};
        } else {
            if (text && d[at + text - 1] == '\r')
                text--;
            ev[k++] = text > max ? (struct event){no, 1, 0, 0} : (struct event){no, 0, at, text};
        }
        at += len + (nl ? 1 : 0);
    }
    return k;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = {data, size};
    size_t max = 1 + fuzz_byte(&in) % 64;
    unsigned seed = fuzz_byte(&in);
    const char *d = (const char *)in.p;
    size_t n = in.n;
    static struct event want[EVENTS_MAX];
    size_t nwant = reference(d, n, max, want);
    if (nwant == EVENTS_MAX)
        return 0;
    struct ndjson nd;
    ndjson_init(&nd, max);
    size_t got = 0, off = 0;
    for (int end = 0; !end;) {
        /* chunk sizes from 0 to 16 bytes, or the rest at once */
        size_t step = seed % 17 == 16 ? n - off : seed % 17;
        seed = seed * 1103515245u + 12345u;
        if (step > n - off)
            step = n - off;
        end = off == n;
        size_t at = 0;
        for (;;) {
            const char *text = NULL;
            size_t tl = 0;
            long no = 0;
            enum ndjson_event e =
                ndjson_next(&nd, end ? NULL : d + off, step, &at, &text, &tl, &no);
            if (e == NDJSON_MORE)
                break;
            FUZZ_CHECK(e != NDJSON_NO_MEMORY, "out of memory");
            FUZZ_CHECK(got < nwant, "an extra event at line %ld", no);
            const struct event *w = &want[got++];
            FUZZ_CHECK(no == w->line_no, "event %zu: line %ld, want %ld", got, no, w->line_no);
            FUZZ_CHECK((e == NDJSON_TOO_LONG) == w->too_long, "line %ld: too long %d, want %d", no,
                       e == NDJSON_TOO_LONG, w->too_long);
            if (e == NDJSON_LINE)
                FUZZ_CHECK(tl == w->len && memcmp(text, d + w->off, tl) == 0 && text[tl] == '\0',
                           "line %ld: text of %zu bytes, want %zu", no, tl, w->len);
        }
        FUZZ_CHECK(end || at == step, "chunk not used up: %zu of %zu", at, step);
        off += step;
    }
    FUZZ_CHECK(got == nwant, "%zu events, want %zu", got, nwant);
    ndjson_free(&nd);
    return 0;
}

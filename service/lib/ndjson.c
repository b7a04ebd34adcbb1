/* ndjson.c -- the NDJSON line splitter; see ndjson.h. */
#include "ndjson.h"

#include <string.h>

void ndjson_init(struct ndjson *nd, size_t max)
{
    memset(nd, 0, sizeof(*nd));
    nd->line_no = 1;
    nd->max = max;
}

void ndjson_free(struct ndjson *nd)
{
    buf_free(&nd->line);
}

static int blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
            return 0;
    return 1;
}

/* The kept line as an event (or nothing when it is blank); the splitter moves to the next line.
 */
static enum ndjson_event take_line(struct ndjson *nd, const char **text, size_t *text_len,
                                   long *line_no)
{
    long no = nd->line_no++;
    int skipped = nd->skipping;
    nd->skipping = 0;
    nd->blank_over = 0; /* a blank line past max: its kept bytes are blank too, skipped below */
    size_t n = nd->line.len;
    nd->line.len = 0;
    if (skipped || !nd->line.data || blank(nd->line.data, n))
        return NDJSON_MORE;
    if (n && nd->line.data[n - 1] == '\r')
        n--;
    if (n > nd->max) { /* max + 1 bytes without a '\r' */
        *line_no = no;
        return NDJSON_TOO_LONG;
    }
    nd->line.data[n] = '\0';
    *text = nd->line.data;
    *text_len = n;
    *line_no = no;
    return NDJSON_LINE;
}

enum ndjson_event ndjson_next(struct ndjson *nd, const char *data, size_t len, size_t *at,
                              const char **text, size_t *text_len, long *line_no)
{
    if (!data) { /* the end: a last line without its '\n' */
        if (nd->line.len == 0 && !nd->skipping && !nd->blank_over)
            return NDJSON_MORE;
        return take_line(nd, text, text_len, line_no);
    }
    while (*at < len) {
        const char *p = data + *at;
        const char *nl = memchr(p, '\n', len - *at);
        size_t part = nl ? (size_t)(nl - p) : len - *at;
        /* a blank line is skipped however long it is: past max, its blank bytes are not kept;
         * anything else after them makes it a line past max */
        if (!nd->skipping && (nd->blank_over || nd->line.len + part > nd->max + 1) &&
            blank(p, part) && (!nd->line.data || blank(nd->line.data, nd->line.len))) {
            nd->blank_over = 1;
            nd->line.len = 0;
            part = 0;
        }
        /* one byte more than max may be kept: a '\r' before the '\n' is no part of the line */
        if (!nd->skipping && (nd->blank_over ? part > 0 : nd->line.len + part > nd->max + 1)) {
            nd->skipping = 1; /* reported now; its bytes are dropped up to the '\n' */
            nd->line.len = 0;
            *line_no = nd->line_no;
            return NDJSON_TOO_LONG;
        }
        if (!nd->skipping && part && buf_append(&nd->line, p, part))
            return NDJSON_NO_MEMORY;
        *at += nl ? (size_t)(nl - p) : len - *at;
        if (!nl)
            break;
        *at += 1; /* the '\n' */
        enum ndjson_event ev = take_line(nd, text, text_len, line_no);
        if (ev != NDJSON_MORE)
            return ev;
    }
    return NDJSON_MORE;
}

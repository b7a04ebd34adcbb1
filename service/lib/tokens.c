/* tokens.c -- write tokens and their scopes from a flag and a file, swapped on reload; see
 * tokens.h. */
#include "tokens.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

struct tokens {
    pthread_rwlock_t lock;
    char *fixed; /* NULL: none; grants admin */
    char *list[TOKENS_MAX];
    struct tokens_grant grants[TOKENS_MAX];
    int n; /* under lock */
    char *path;
};

static void free_list(char **list, int n)
{
    for (int i = 0; i < n; i++) {
        explicit_bzero(list[i], strlen(list[i]));
        free(list[i]);
    }
}

static int board_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

int tokens_scope_parse(const char *w, size_t len, struct tokens_grant *g)
{
    if (len == 5 && memcmp(w, "admin", 5) == 0) {
        g->admin = 1;
        return 0;
    }
    if (len == 6 && memcmp(w, "scores", 6) == 0) {
        g->scores = 1;
        return 0;
    }
    if (len <= 7 || memcmp(w, "scores:", 7) != 0 || g->nboards == TOKENS_SCOPES_MAX)
        return -EINVAL;
    const char *name = w + 7;
    size_t n = len - 7, chars = name[n - 1] == '*' ? n - 1 : n;
    if (chars == 0 || chars > TOKENS_BOARD_MAX)
        return -EINVAL;
    for (size_t i = 0; i < chars; i++)
        if (!board_char(name[i]))
            return -EINVAL;
    memcpy(g->boards[g->nboards], name, n);
    g->boards[g->nboards++][n] = '\0';
    return 0;
}

/* The reason token[0..len) cannot be a token, or NULL. */
static const char *token_rule(const char *token, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if ((unsigned char)token[i] <= 0x20 || (unsigned char)token[i] >= 0x7f)
            return "a token is visible ASCII without spaces";
    if (len < TOKENS_LEN_MIN)
        return "a token is at least 16 bytes (e.g. od -An -tx1 -N16 /dev/urandom | tr -d ' \\n')";
    if (len > TOKENS_LEN_MAX)
        return "a token is at most 512 bytes";
    return NULL;
}

int tokens_fixed_valid(const char *fixed, char *err, size_t errlen)
{
    const char *why = fixed && fixed[0] ? token_rule(fixed, strlen(fixed)) : NULL;
    if (why)
        snprintf(err, errlen, "%s", why);
    return why ? -EINVAL : 0;
}

/* One line's scopes, text[b..e) after the token: into g (admin when there are none). */
static const char *parse_scopes(const char *text, size_t b, size_t e, struct tokens_grant *g)
{
    memset(g, 0, sizeof(*g));
    int words = 0;
    while (b < e) {
        while (b < e && (text[b] == ' ' || text[b] == '\t'))
            b++;
        size_t w = b;
        while (b < e && text[b] != ' ' && text[b] != '\t')
            b++;
        if (w == b)
            break;
        if (++words > TOKENS_SCOPES_MAX)
            return "a token has at most 16 scopes";
        if (tokens_scope_parse(text + w, b - w, g))
            return "a scope is admin, scores, scores:NAME or scores:PREFIX* (a board name or "
                   "prefix of [A-Za-z0-9._-], at most 64 bytes)";
    }
    if (!words)
        g->admin = 1; /* the token alone: everything, as before scopes existed */
    return NULL;
}

int tokens_parse(const char *text, size_t len, char **list, struct tokens_grant *grants, int *n,
                 char *err, size_t errlen)
{
    int count = 0, line = 0;
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t end = nl ? (size_t)(nl - text) : len, b = at, e = end;
        line++;
        at = end + 1;
        while (b < e && (text[b] == ' ' || text[b] == '\t'))
            b++;
        while (e > b && (text[e - 1] == ' ' || text[e - 1] == '\t' || text[e - 1] == '\r'))
            e--;
        if (b == e || text[b] == '#')
            continue;
        size_t te = b;
        while (te < e && text[te] != ' ' && text[te] != '\t')
            te++;
        const char *why = token_rule(text + b, te - b);
        if (!why && count == TOKENS_MAX)
            why = "at most 64 tokens";
        if (!why)
            why = parse_scopes(text, te, e, &grants[count]);
        if (why) {
            snprintf(err, errlen, "line %d: %s", line, why);
            free_list(list, count);
            return -EINVAL;
        }
        if (!(list[count] = strndup(text + b, te - b))) {
            free_list(list, count);
            snprintf(err, errlen, "out of memory");
            return -ENOMEM;
        }
        count++;
    }
    *n = count;
    return 0;
}

/* Read and parse the file at path into list and *n; 0 or a negative errno with err. */
static int read_file(const char *path, char **list, struct tokens_grant *grants, int *n,
                     int *world_readable, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    if (fd < 0 || fstat(fd, &st)) {
        int rc = -errno;
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        if (fd >= 0)
            close(fd);
        return rc;
    }
    if (!S_ISREG(st.st_mode) || st.st_size > TOKENS_FILE_MAX) {
        close(fd);
        snprintf(err, errlen, "%s is not a regular file of at most %d bytes", path,
                 TOKENS_FILE_MAX);
        return -EINVAL;
    }
    *world_readable = (st.st_mode & S_IROTH) != 0;
    char *text = malloc((size_t)st.st_size + 1);
    size_t got = 0;
    while (text && got < (size_t)st.st_size) {
        ssize_t k = read(fd, text + got, (size_t)st.st_size - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd);
    if (!text) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    char why[256];
    int rc = tokens_parse(text, got, list, grants, n, why, sizeof(why));
    explicit_bzero(text, got);
    free(text);
    if (rc)
        snprintf(err, errlen, "%s: %s", path, why);
    return rc;
}

struct tokens *tokens_new(const char *fixed, const char *path, int *world_readable, char *err,
                          size_t errlen)
{
    *world_readable = 0;
    char why[256];
    if (tokens_fixed_valid(fixed, why, sizeof(why))) {
        snprintf(err, errlen, "--write-token: %s", why);
        return NULL;
    }
    struct tokens *t = calloc(1, sizeof(*t));
    if (!t || (fixed && fixed[0] && !(t->fixed = strdup(fixed))) ||
        !(t->path = strdup(path ? path : ""))) {
        snprintf(err, errlen, "out of memory");
        tokens_free(t);
        return NULL;
    }
    pthread_rwlock_init(&t->lock, NULL);
    if (t->path[0] && read_file(t->path, t->list, t->grants, &t->n, world_readable, err, errlen)) {
        tokens_free(t);
        return NULL;
    }
    return t;
}

int tokens_reload(struct tokens *t, int *world_readable, char *err, size_t errlen)
{
    *world_readable = 0;
    if (!t->path[0]) {
        snprintf(err, errlen, "no --write-token-file to read");
        return -ENOENT;
    }
    char *list[TOKENS_MAX];
    struct tokens_grant *grants = calloc(TOKENS_MAX, sizeof(*grants));
    int n = 0;
    if (!grants) {
        snprintf(err, errlen, "out of memory");
        return -ENOMEM;
    }
    int rc = read_file(t->path, list, grants, &n, world_readable, err, errlen);
    if (rc) {
        free(grants);
        return rc;
    }
    char *old[TOKENS_MAX];
    pthread_rwlock_wrlock(&t->lock);
    int nold = t->n;
    memcpy(old, t->list, sizeof(old));
    memcpy(t->list, list, sizeof(list));
    memcpy(t->grants, grants, TOKENS_MAX * sizeof(*grants));
    t->n = n;
    pthread_rwlock_unlock(&t->lock);
    free(grants);
    free_list(old, nold);
    return n + (t->fixed != NULL);
}

int tokens_count(struct tokens *t)
{
    pthread_rwlock_rdlock(&t->lock);
    int n = t->n + (t->fixed != NULL);
    pthread_rwlock_unlock(&t->lock);
    return n;
}

int tokens_check(struct tokens *t, const char *given, size_t len, struct tokens_grant *grant)
{
    int ok = t->fixed && util_secure_equal(given, len, t->fixed, strlen(t->fixed));
    int which = -1;
    if (ok && grant) {
        memset(grant, 0, sizeof(*grant));
        grant->admin = 1;
    }
    pthread_rwlock_rdlock(&t->lock);
    for (int i = 0; i < t->n; i++) {
        int eq = util_secure_equal(given, len, t->list[i], strlen(t->list[i]));
        which = eq && which < 0 ? i : which; /* every token is still compared */
    }
    if (!ok && which >= 0 && grant)
        *grant = t->grants[which];
    pthread_rwlock_unlock(&t->lock);
    return ok || which >= 0;
}

/* 1 when scope s (a board name, or a prefix ending in '*') covers board. */
static int board_matches(const char *s, const char *board)
{
    size_t n = strlen(s);
    if (n && s[n - 1] == '*')
        return strncmp(board, s, n - 1) == 0;
    return strcmp(board, s) == 0;
}

int tokens_allows(const struct tokens_grant *g, enum tokens_need need, const char *board,
                  char *scope, size_t cap)
{
    if (g->admin)
        return 1;
    if (need == TOKENS_NEED_ADMIN) {
        snprintf(scope, cap, "admin");
        return 0;
    }
    if (g->scores)
        return 1;
    if (need == TOKENS_NEED_BOARD && board)
        for (int i = 0; i < g->nboards; i++)
            if (board_matches(g->boards[i], board))
                return 1;
    if (need == TOKENS_NEED_BOARD && board)
        snprintf(scope, cap, "scores:%s", board);
    else
        snprintf(scope, cap, "scores");
    return 0;
}

const char *tokens_path(const struct tokens *t)
{
    return t->path;
}

void tokens_free(struct tokens *t)
{
    if (!t)
        return;
    free_list(t->list, t->n);
    free(t->fixed);
    free(t->path);
    if (t->path)
        pthread_rwlock_destroy(&t->lock);
    free(t);
}

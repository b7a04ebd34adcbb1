/* tokens.c -- write tokens from a flag and a file, swapped on reload; see tokens.h. */
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
    char *fixed; /* NULL: none */
    char *list[TOKENS_MAX];
    int n; /* under lock */
    char *path;
};

static void free_list(char **list, int n)
{
    for (int i = 0; i < n; i++)
        free(list[i]);
}

int tokens_parse(const char *text, size_t len, char **list, int *n, char *err, size_t errlen)
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
        const char *why = NULL;
        for (size_t i = b; i < e && !why; i++)
            if ((unsigned char)text[i] <= 0x20 || (unsigned char)text[i] >= 0x7f)
                why = "a token is visible ASCII without spaces";
        if (!why && e - b > TOKENS_LEN_MAX)
            why = "a token is at most 512 bytes";
        if (!why && count == TOKENS_MAX)
            why = "at most 64 tokens";
        if (why) {
            snprintf(err, errlen, "line %d: %s", line, why);
            free_list(list, count);
            return -EINVAL;
        }
        if (!(list[count] = strndup(text + b, e - b))) {
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
static int read_file(const char *path, char **list, int *n, int *world_readable, char *err,
                     size_t errlen)
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
    char why[160];
    int rc = tokens_parse(text, got, list, n, why, sizeof(why));
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
    struct tokens *t = calloc(1, sizeof(*t));
    if (!t || (fixed && fixed[0] && !(t->fixed = strdup(fixed))) ||
        !(t->path = strdup(path ? path : ""))) {
        snprintf(err, errlen, "out of memory");
        tokens_free(t);
        return NULL;
    }
    pthread_rwlock_init(&t->lock, NULL);
    if (t->path[0] && read_file(t->path, t->list, &t->n, world_readable, err, errlen)) {
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
    int n = 0;
    int rc = read_file(t->path, list, &n, world_readable, err, errlen);
    if (rc)
        return rc;
    char *old[TOKENS_MAX];
    pthread_rwlock_wrlock(&t->lock);
    int nold = t->n;
    memcpy(old, t->list, sizeof(old));
    memcpy(t->list, list, sizeof(list));
    t->n = n;
    pthread_rwlock_unlock(&t->lock);
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

int tokens_check(struct tokens *t, const char *given, size_t len)
{
    int ok = t->fixed && util_secure_equal(given, len, t->fixed, strlen(t->fixed));
    pthread_rwlock_rdlock(&t->lock);
    for (int i = 0; i < t->n; i++)
        ok |= util_secure_equal(given, len, t->list[i], strlen(t->list[i]));
    pthread_rwlock_unlock(&t->lock);
    return ok;
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

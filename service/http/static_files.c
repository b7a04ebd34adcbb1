/* static_files.c -- the web frontend's files; see static_files.h. */
#include "static_files.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "request.h"

static const struct {
    const char *ext, *type;
} types[] = {
    {".html", "text/html; charset=utf-8"},
    {".js", "text/javascript; charset=utf-8"},
    {".mjs", "text/javascript; charset=utf-8"},
    {".css", "text/css; charset=utf-8"},
    {".json", "application/json; charset=utf-8"},
    {".svg", "image/svg+xml"},
    {".png", "image/png"},
    {".ico", "image/x-icon"},
    {".txt", "text/plain; charset=utf-8"},
    {".ts", "text/plain; charset=utf-8"},
    {".map", "application/json; charset=utf-8"},
};

static const char *content_type(const char *path)
{
    const char *dot = strrchr(path, '.');
    for (size_t i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
        if (strcmp(dot, types[i].ext) == 0)
            return types[i].type;
    return "application/octet-stream";
}

/* 0 when every segment of a decoded path is an ordinary name. */
static int segments_ok(const char *p)
{
    if (strchr(p, '\\'))
        return -EACCES;
    for (const char *s = p; *s;) {
        while (*s == '/')
            s++;
        size_t n = strcspn(s, "/");
        if ((n == 1 && s[0] == '.') || (n == 2 && s[0] == '.' && s[1] == '.'))
            return -EACCES;
        s += n;
    }
    return 0;
}

int static_files_open(const char *root, const char *raw_path, struct static_file *out)
{
    char decoded[PATH_MAX];
    size_t n = 0;
    int rc = request_pct_decode(raw_path, strlen(raw_path), decoded, sizeof(decoded), &n);
    if (rc)
        return rc == -E2BIG ? -ENOENT : -EINVAL; /* too long to name a file: none is named so */
    if (strlen(decoded) != n)                    /* an escaped NUL */
        return -EACCES;
    rc = segments_ok(decoded);
    if (rc)
        return rc;
    char joined[PATH_MAX * 2], real[PATH_MAX];
    int is_index = strcmp(decoded, "/") == 0 || decoded[0] == '\0';
    snprintf(joined, sizeof(joined), "%s/%s", root, is_index ? "index.html" : decoded + 1);
    if (!realpath(joined, real))
        return -ENOENT;
    size_t rl = strlen(root);
    if (strncmp(real, root, rl) != 0 || real[rl] != '/') /* a symlink pointing outside */
        return -EACCES;
    /* Regular files only. This runs on an event thread, where opening a FIFO would wait for a
     * writer and a device may block or act on open: stat first, then open without blocking or
     * following a link swapped in meanwhile, and check what was opened. */
    struct stat st;
    if (stat(real, &st) || !S_ISREG(st.st_mode))
        return -ENOENT;
    int fd = open(real, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW | O_NOCTTY);
    if (fd < 0)
        return -ENOENT;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        close(fd);
        return -ENOENT;
    }
    out->fd = fd;
    out->size = (uint64_t)st.st_size;
    out->content_type = content_type(real);
    /* File names do not change between versions: revalidate every time (a cheap 304) so a new
     * index.html never runs with an old app.js. */
    out->cache_control = "no-cache";
    /* size, inode and mtime to the nanosecond: a same-size edit within a second still changes it */
    snprintf(out->etag, sizeof(out->etag), "\"%" PRIx64 "-%" PRIx64 "-%" PRIx64 "\"",
             (uint64_t)st.st_size, (uint64_t)st.st_ino,
             (uint64_t)st.st_mtim.tv_sec * 1000000000U + (uint64_t)st.st_mtim.tv_nsec);
    return 0;
}

int static_files_root(const char *configured, char *out, size_t len)
{
    char exe[PATH_MAX], cand[PATH_MAX + 64], real[PATH_MAX];
    if (configured && configured[0]) {
        if (!realpath(configured, real))
            return -ENOENT;
    } else {
        ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
        if (n <= 0)
            return -ENOENT;
        exe[n] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        /* build/rankd -> clients/web; PREFIX/bin/rankd -> PREFIX/share/rankd/web */
        snprintf(cand, sizeof(cand), "%s/../clients/web", exe);
        if (!realpath(cand, real)) {
            snprintf(cand, sizeof(cand), "%s/../../clients/web", exe);
            if (!realpath(cand, real)) {
                snprintf(cand, sizeof(cand), "%s/../share/rankd/web", exe);
                if (!realpath(cand, real))
                    return -ENOENT;
            }
        }
    }
    struct stat st;
    if (stat(real, &st) || !S_ISDIR(st.st_mode) || strlen(real) >= len)
        return -ENOENT;
    memcpy(out, real, strlen(real) + 1);
    return 0;
}

/*
 * Whole files: reading one into a buffer, writing one atomically (through an unnamed file
 * where the filesystem has them, so that a writer that dies leaves nothing), and the one
 * write loop every writer uses. heapsift's own files go through fdio.h, never the
 * program's descriptor table; only hs_write_all may be given a descriptor of the caller's
 * with write(2). Called by the dump path inside the profiled process (guard held, so
 * malloc is fine; no stdio FILE*) and by the CLI.
 */
#define _GNU_SOURCE
#include "fileio.h"
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int hs_read_file(const char *path, hs_buf_t *out)
{
    int fd = hs_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return -errno;
    int rc = 0;
    struct stat st;
    if (hs_fd_fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        rc = -EISDIR;
        goto out;
    }
    size_t start = out->len;
    for (;;) {
        if ((rc = hs_buf_reserve(out, 1 << 16)))
            break;
        ssize_t n = hs_fd_read(fd, out->data + out->len, out->cap - out->len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            rc = -errno;
            break;
        }
        if (n == 0)
            break;
        out->len += (size_t)n;
    }
    if (rc)
        out->len = start;
out:
    hs_fd_close(fd);
    return rc;
}

ssize_t hs_read_text(const char *path, char *buf, size_t cap)
{
    ssize_t n = cap > 1 ? hs_fd_read_file(path, buf, cap - 1) : -1;
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    return n;
}

#define FILE_HUGE ((size_t)2 << 20) /* a transparent huge page */

static size_t file_span(size_t len)
{
    return (len + FILE_HUGE - 1) & ~(FILE_HUGE - 1);
}

/* span bytes of fresh memory aligned on a huge page, asked for in huge pages. */
static uint8_t *file_area(size_t span)
{
    uint8_t *raw =
        mmap(NULL, span + FILE_HUGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED)
        return NULL;
    uint8_t *a = (uint8_t *)(((uintptr_t)raw + FILE_HUGE - 1) & ~(uintptr_t)(FILE_HUGE - 1));
    if (a > raw)
        munmap(raw, (size_t)(a - raw));
    if (raw + span + FILE_HUGE > a + span)
        munmap(a + span, (size_t)(raw + span + FILE_HUGE - (a + span)));
    madvise(a, span, MADV_HUGEPAGE);
    return a;
}

/* Reads fd's size bytes into a (the file may have shrunk since: *got says). -EAGAIN when
 * it has grown: the caller reads it the ordinary way. */
static int file_fill(int fd, uint8_t *a, size_t size, size_t *got)
{
    *got = 0;
    while (*got < size) {
        ssize_t n = hs_fd_read(fd, a + *got, size - *got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -errno;
        if (n == 0)
            return 0;
        *got += (size_t)n;
    }
    char more;
    ssize_t n;
    while ((n = hs_fd_read(fd, &more, 1)) < 0 && errno == EINTR)
        ;
    return n > 0 ? -EAGAIN : 0;
}

int hs_map_file(const char *path, const uint8_t **data, size_t *len)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return -errno;
    if (!S_ISREG(st.st_mode)) /* a FIFO is not opened twice: its writer would lose us */
        return -EINVAL;
    int fd = hs_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return -errno;
    int rc = 0;
    size_t size = 0, span = 0, got = 0;
    uint8_t *a = NULL;
    if (hs_fd_fstat(fd, &st) != 0)
        rc = -errno;
    else if (!S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size > SIZE_MAX / 4)
        rc = -EINVAL;
    else if (!(a = file_area(span = file_span(size = (size_t)st.st_size))))
        rc = -ENOMEM;
    else if ((rc = file_fill(fd, a, size, &got)) == 0 && got == 0)
        rc = -EINVAL;
    hs_fd_close(fd);
    if (rc != 0) {
        if (a)
            munmap(a, span);
        return rc;
    }
    if (file_span(got) < span) /* shrunk since fstat */
        munmap(a + file_span(got), span - file_span(got));
    *data = a;
    *len = got;
    return 0;
}

void hs_unmap_file(const uint8_t *data, size_t len)
{
    munmap((void *)(uintptr_t)data, file_span(len));
}

int hs_write_all(int fd, const void *data, size_t len,
                 ssize_t (*wr)(int fd, const void *buf, size_t n))
{
    const uint8_t *p = data;
    while (len) {
        ssize_t n = wr(fd, p, len < (1u << 20) ? len : (1u << 20));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -errno : -EIO;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* The descriptor is in a table only heapsift uses (fdio.h), so no other file can have
 * taken its number. */
static int fileio_write_all_own(int fd, const void *p, size_t len)
{
    return hs_write_all(fd, p, len, hs_fd_write);
}

/* Writes straight into path, which exists and is not a regular file (a device such as
 * /dev/null or /dev/stdout, a FIFO): renaming over it would replace the node itself. */
static int fileio_write_special(const char *path, const void *data, size_t len)
{
    int fd = hs_fd_open(path, O_WRONLY | O_NOCTTY, 0);
    if (fd < 0)
        return -errno;
    int rc = fileio_write_all_own(fd, data, len);
    if (hs_fd_close(fd) < 0 && !rc)
        rc = -errno;
    return rc;
}

/* The bytes in an unnamed file of path's directory (O_TMPFILE), given the name tmp only
 * once complete: a process that ends while writing (a forked child's _exit in the middle
 * of a trigger dump) leaves nothing behind. 1: named path; 0: named tmp; -errno when the
 * filesystem or kernel has no unnamed files, or /proc is not there to name one. */
static int fileio_write_unnamed(const char *path, const char *tmp, const void *data, size_t len)
{
    const char *slash = strrchr(path, '/');
    char *dir = slash ? strndup(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir)
        return -ENOMEM;
    int fd = hs_fd_open(dir, O_TMPFILE | O_WRONLY, 0644);
    free(dir);
    if (fd < 0)
        return -errno;
    int rc = fileio_write_all_own(fd, data, len);
    if (!rc) {
        /* Named path straight away when it is new (a trigger's numbered file); else tmp,
         * which the caller renames over path. */
        if (hs_fd_link(fd, path) == 0) {
            rc = 1;
        } else if (errno != EEXIST) {
            rc = -errno;
        } else {
            unlink(tmp); /* a leftover of an earlier process with this pid */
            if (hs_fd_link(fd, tmp) < 0)
                rc = -errno;
        }
    }
    hs_fd_close(fd);
    return rc;
}

int hs_write_file_atomic(const char *path, const void *data, size_t len)
{
    struct stat st;
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode))
            return -EISDIR;
        return fileio_write_special(path, data, len);
    }
    size_t plen = strlen(path);
    char *tmp = malloc(plen + 32);
    if (!tmp)
        return -ENOMEM;
    memcpy(tmp, path, plen); /* not "%s": GCC's ASan build then warns path may be NULL */
    snprintf(tmp + plen, 32, ".tmp.%ld", (long)getpid());
    int rc = fileio_write_unnamed(path, tmp, data, len);
    if (rc >= 0) {
        if (rc == 0 && rename(tmp, path) < 0) {
            rc = -errno;
            unlink(tmp);
        }
        rc = rc > 0 ? 0 : rc;
        goto out;
    }
    /* No unnamed file here: a named one, written in place. */
    int fd = hs_fd_open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    rc = fileio_write_all_own(fd, data, len);
    if (hs_fd_close(fd) < 0 && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path) < 0)
        rc = -errno;
    if (rc)
        unlink(tmp);
out:
    free(tmp);
    return rc;
}

int hs_pattern_dir_check(const char *pattern, char *dir, size_t cap)
{
    const char *slash = strrchr(pattern, '/');
    int n = !slash ? snprintf(dir, cap, ".")
                   : snprintf(dir, cap, "%.*s", (int)(slash - pattern), pattern);
    if (n < 0 || (size_t)n >= cap || strchr(dir, '%'))
        return -1;
    if (n == 0)
        snprintf(dir, cap, "/");
    struct stat st;
    return stat(dir, &st) != 0             ? errno
           : !S_ISDIR(st.st_mode)          ? ENOTDIR
           : access(dir, W_OK | X_OK) != 0 ? errno
                                           : 0;
}

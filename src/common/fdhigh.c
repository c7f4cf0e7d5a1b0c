/*
 * Descriptors above the numbers a program takes first (fdhigh.h): the move right after
 * open, and the identity checks that keep it from closing or keeping a program's file.
 */
#define _GNU_SOURCE
#include "fdhigh.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <unistd.h>

#define HS_FD_HIGH 1000 /* above the numbers a program takes first */
#define HS_FD_HIGH_LOW_LIMIT 64

bool hs_fd_is(int fd, dev_t dev, ino_t ino)
{
    struct stat st;
    return fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

int hs_fd_dup_high(int fd)
{
    int hi = fcntl(fd, F_DUPFD_CLOEXEC, HS_FD_HIGH);
    if (hi < 0 && errno == EINVAL) /* a descriptor limit under 1000 */
        hi = fcntl(fd, F_DUPFD_CLOEXEC, HS_FD_HIGH_LOW_LIMIT);
    return hi;
}

/* Moves fd, open on the file (dev, ino), above the low numbers: the new descriptor, fd
 * itself when no number is free up there, or -1 (EBADF) when fd is no longer that file.
 * The low number is closed only while still the file. */
static int fd_high(int fd, dev_t dev, ino_t ino)
{
    if (fd >= HS_FD_HIGH)
        return fd;
    int hi = hs_fd_dup_high(fd);
    if (hi < 0)
        return hs_fd_is(fd, dev, ino) ? fd : (errno = EBADF, -1);
    if (!hs_fd_is(hi, dev, ino)) {
        close(hi); /* a copy of someone else's file: the copy is ours, the original not */
        errno = EBADF;
        return -1;
    }
    if (hs_fd_is(fd, dev, ino))
        close(fd);
    return hi;
}

/* Whether st, what fstat said of the number open returned, is the file this open made
 * or found: an unnamed file not linked anywhere yet, or the one path names now. The
 * number may have changed hands in between: a program closing its descriptors in a loop
 * can close it and open a file of its own under it, which is then not ours to move,
 * write or close. */
static bool fd_opened_here(const char *path, int flags, const struct stat *st)
{
    struct stat now;
    if ((flags & O_TMPFILE) == O_TMPFILE)
        return S_ISREG(st->st_mode) && st->st_nlink == 0;
    return stat(path, &now) == 0 && now.st_dev == st->st_dev && now.st_ino == st->st_ino;
}

int hs_open_high(const char *path, int flags, mode_t mode)
{
    struct stat st;
    int fd = open(path, flags | O_CLOEXEC, mode);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0) {
        close(fd);
        return -1;
    }
    if (!fd_opened_here(path, flags, &st)) {
        errno = EBADF;
        return -1; /* the number changed hands at once: not ours to close */
    }
    return fd_high(fd, st.st_dev, st.st_ino);
}

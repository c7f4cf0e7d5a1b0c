/*
 * Descriptors above the numbers a program takes first. heapsift's threads share the
 * program's descriptor table where they cannot have one of their own (fdtable.c: a
 * seccomp filter refusing unshare): a program that closes its low numbers and opens
 * files of its own could then close a file heapsift reads or writes, or hand its number
 * to one of its own files, which heapsift would read, write or close in turn. A file
 * opened here is moved to 1000 or above (64 under a lower limit) at once.
 */
#ifndef HS_FDHIGH_H
#define HS_FDHIGH_H

#include <stdbool.h>
#include <sys/types.h>

/* Whether fd is open on the file (dev, ino) (a regular file's or socket's inode is its
 * own): a number closed by the program and reused for one of its files is not. */
bool hs_fd_is(int fd, dev_t dev, ino_t ino);

/* A close-on-exec copy of fd at 1000 or above (64 or above under a lower limit), or -1. */
int hs_fd_dup_high(int fd);

/* open(path, flags | O_CLOEXEC, mode), the descriptor moved above the low numbers when it
 * can be: -1 with errno as open's, or EBADF when the file changed hands before the move
 * (what is left open is not ours to close). */
int hs_open_high(const char *path, int flags, mode_t mode);

#endif

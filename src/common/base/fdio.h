/*
 * Descriptor operations on the files heapsift opens for itself (profiles it writes, /proc
 * files and binaries it reads). Inside a profiled process the program may close any
 * descriptor number at any moment and reuse it for a file of its own, so no check made
 * before a read, write or close can prove the number is still heapsift's. heapsift
 * therefore never touches its own files through the program's descriptor table: every
 * operation below runs either in a table only heapsift uses (its threads' private tables,
 * fdtable.c) or in heapsift's I/O thread (iothread.c), whose table the program cannot
 * reach. The library installs the route (hs_fdio_route); the CLI, which owns its process,
 * leaves it unset and the calls are plain system calls.
 *
 * The descriptors these return are only meaningful to these functions: never pass one to
 * read(2), close(2), fdopen or a library that makes its own calls on it.
 */
#ifndef HS_FDIO_H
#define HS_FDIO_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/* Runs system call nr with args in a table heapsift owns: its result, or -errno. NULL:
 * the calling process is heapsift's own (the CLI), plain system calls. Called with nr -1
 * (args NULL), it says whether the calling thread's calls are remote: 1 or 0. */
typedef long (*hs_fdio_route_t)(long nr, const long args[6]);
extern hs_fdio_route_t hs_fdio_route;

/* The route's one call that is several: open args[0] read-only, fstat it into args[1],
 * pread args[3] bytes at 0 into args[2], close it (hs_fd_read_head: one hand-off to the
 * I/O thread instead of four). sys makes one system call and returns its result or
 * -errno; the result is pread's, or the first failure's -errno. Only system calls, so the
 * I/O thread that must not touch glibc runs it too. */
#define HS_FDIO_HEAD (-100L)
typedef long (*hs_fdio_sys_t)(long nr, long a0, long a1, long a2, long a3);
long hs_fdio_head_run(hs_fdio_sys_t sys, const long args[6]);
/* The same for hs_fd_read_file: open args[0] read-only, read into args[1] until end of
 * file or args[2] bytes, close: the bytes read, or the first failure's -errno. */
#define HS_FDIO_SLURP (-101L)
long hs_fdio_slurp_run(hs_fdio_sys_t sys, const long args[6]);

/* Whether the calling thread's operations run in heapsift's I/O thread rather than in a
 * table of its own: then no descriptor may be handed to a library (libdwfl, ld.so), which
 * would use the number in the program's table. */
bool hs_fd_remote(void);

/* The first n bytes of the file at path into buf and its fstat into st, the file opened
 * read-only and closed again, as one operation: the bytes read, or -1 with errno. */
ssize_t hs_fd_read_head(const char *path, struct stat *st, void *buf, size_t n);

/* The file at path read into buf until its end or n bytes, opened read-only and closed
 * again, as one operation: the bytes read (n when it may hold more), or -1 with errno. */
ssize_t hs_fd_read_file(const char *path, void *buf, size_t n);

/* open(path, flags | O_CLOEXEC, mode): a descriptor, or -1 with errno. */
int hs_fd_open(const char *path, int flags, mode_t mode);
/* read, pread, write, close, fstat, getdents64: as the system calls (-1 with errno). */
ssize_t hs_fd_read(int fd, void *buf, size_t n);
ssize_t hs_fd_pread(int fd, void *buf, size_t n, off_t off);
ssize_t hs_fd_write(int fd, const void *buf, size_t n);
int hs_fd_close(int fd);
int hs_fd_fstat(int fd, struct stat *st);
long hs_fd_getdents(int fd, void *buf, size_t n);
/* mmap of fd (the mapping is the process's; only the descriptor lives elsewhere). */
void *hs_fd_mmap(size_t len, int prot, int flags, int fd, off_t off);
/* fallocate(fd, 0, off, len): reserves the blocks, so writes through a shared mapping of
 * them cannot meet a full disk. 0 or -1 with errno. */
int hs_fd_fallocate(int fd, off_t off, off_t len);
/* Gives the unnamed file fd (O_TMPFILE) the name path: 0 or -1 with errno. */
int hs_fd_link(int fd, const char *path);

/* Kept name of the one funnel heapsift opened its files through: hs_fd_open. */
#define hs_open_high hs_fd_open

#endif

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

/* Whether the calling thread's operations run in heapsift's I/O thread rather than in a
 * table of its own: then no descriptor may be handed to a library (libdwfl, ld.so), which
 * would use the number in the program's table. */
bool hs_fd_remote(void);

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

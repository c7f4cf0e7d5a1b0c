/*
 * The descriptor operations of fdio.h: each one system call (hs_fd_read_head and
 * hs_fd_read_file several, in one hand-off), made where hs_fdio_route says (the library's I/O
 * thread or the caller's own private table), or directly when no route is set (the CLI). Nothing
 * here allocates.
 */
#define _GNU_SOURCE
#include "fdio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

hs_fdio_route_t hs_fdio_route;

/* The result of system call nr, or -1 with errno. */
static long fdio_call(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
    const long args[6] = {a0, a1, a2, a3, a4, a5};
    hs_fdio_route_t route = __atomic_load_n(&hs_fdio_route, __ATOMIC_ACQUIRE);
    if (route == NULL)
        return syscall(nr, a0, a1, a2, a3, a4, a5);
    long r = route(nr, args);
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

__attribute__((optimize("no-stack-protector"))) long hs_fdio_head_run(hs_fdio_sys_t sys,
                                                                      const long args[6])
{
    long fd = sys(SYS_openat, AT_FDCWD, args[0], O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    long r = sys(SYS_fstat, fd, args[1], 0, 0);
    if (r == 0)
        r = sys(SYS_pread64, fd, args[2], args[3], 0);
    sys(SYS_close, fd, 0, 0, 0);
    return r;
}

__attribute__((optimize("no-stack-protector"))) long hs_fdio_slurp_run(hs_fdio_sys_t sys,
                                                                       const long args[6])
{
    long fd = sys(SYS_openat, AT_FDCWD, args[0], O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return fd;
    long got = 0, r = 1;
    while (got < args[2] && (r > 0 || r == -EINTR)) {
        r = sys(SYS_read, fd, args[1] + got, args[2] - got, 0);
        got += r > 0 ? r : 0;
    }
    sys(SYS_close, fd, 0, 0, 0);
    return r < 0 && r != -EINTR ? r : got;
}

/* A plain system call for hs_fdio_head_run: its result or -errno. */
static long fdio_sys(long nr, long a0, long a1, long a2, long a3)
{
    long r = syscall(nr, a0, a1, a2, a3);
    return r == -1 ? -errno : r;
}

/* A composite operation op (fdio.h): through the route in one hand-off, else run here
 * with plain system calls. Its result, or -1 with errno. */
static ssize_t fdio_composite(long op, long (*run)(hs_fdio_sys_t, const long[6]),
                              const long args[6])
{
    hs_fdio_route_t route = __atomic_load_n(&hs_fdio_route, __ATOMIC_ACQUIRE);
    long r = route ? route(op, args) : run(fdio_sys, args);
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

ssize_t hs_fd_read_head(const char *path, struct stat *st, void *buf, size_t n)
{
    const long args[6] = {(long)path, (long)st, (long)buf, (long)n, 0, 0};
    return fdio_composite(HS_FDIO_HEAD, hs_fdio_head_run, args);
}

ssize_t hs_fd_read_file(const char *path, void *buf, size_t n)
{
    const long args[6] = {(long)path, (long)buf, (long)n, 0, 0, 0};
    return fdio_composite(HS_FDIO_SLURP, hs_fdio_slurp_run, args);
}

bool hs_fd_remote(void)
{
    hs_fdio_route_t route = __atomic_load_n(&hs_fdio_route, __ATOMIC_ACQUIRE);
    return route != NULL && route(-1, NULL) == 1;
}

int hs_fd_open(const char *path, int flags, mode_t mode)
{
    return (int)fdio_call(SYS_openat, AT_FDCWD, (long)path, flags | O_CLOEXEC, mode, 0, 0);
}

ssize_t hs_fd_read(int fd, void *buf, size_t n)
{
    return fdio_call(SYS_read, fd, (long)buf, (long)n, 0, 0, 0);
}

ssize_t hs_fd_pread(int fd, void *buf, size_t n, off_t off)
{
    return fdio_call(SYS_pread64, fd, (long)buf, (long)n, (long)off, 0, 0);
}

ssize_t hs_fd_write(int fd, const void *buf, size_t n)
{
    return fdio_call(SYS_write, fd, (long)buf, (long)n, 0, 0, 0);
}

int hs_fd_close(int fd)
{
    return (int)fdio_call(SYS_close, fd, 0, 0, 0, 0, 0);
}

int hs_fd_fstat(int fd, struct stat *st)
{
    return (int)fdio_call(SYS_fstat, fd, (long)st, 0, 0, 0, 0);
}

long hs_fd_getdents(int fd, void *buf, size_t n)
{
    return fdio_call(SYS_getdents64, fd, (long)buf, (long)n, 0, 0, 0);
}

void *hs_fd_mmap(size_t len, int prot, int flags, int fd, off_t off)
{
    long r = fdio_call(SYS_mmap, 0, (long)len, prot, flags, fd, (long)off);
    return r == -1 ? MAP_FAILED : (void *)r;
}

int hs_fd_fallocate(int fd, off_t off, off_t len)
{
    return (int)fdio_call(SYS_fallocate, fd, 0, (long)off, (long)len, 0, 0);
}

int hs_fd_link(int fd, const char *path)
{
    /* thread-self: the thread making the call, whose table holds fd. */
    char proc[64];
    snprintf(proc, sizeof(proc), "/proc/thread-self/fd/%d", fd);
    return (int)fdio_call(SYS_linkat, AT_FDCWD, (long)proc, AT_FDCWD, (long)path, AT_SYMLINK_FOLLOW,
                          0);
}

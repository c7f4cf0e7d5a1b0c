/*
 * Diagnostics from inside the profiled process: one line on stderr per message, built on
 * the stack and written with a single write(2), so it never allocates, never takes a
 * stdio lock and may run in any context the hooks run in. Callers rate-limit with
 * hs_log_once; nothing here may ever abort the host. Every line goes to the program's own
 * descriptor 2 (the same open file, at its offset): heapsift's threads with tables of
 * their own (fdtable.c), whose 2 is /dev/null, take a copy of it for the write.
 */
#include "core.h"
#include "log.h"
#include "iothread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The program's descriptor 2 in this thread's table: 2 itself when the thread shares the
 * program's table, else a copy taken from the program's (pidfd_getfd: the same open file,
 * so the same offset, as the program's own writes to it). -1 when there is none. */
static int log_program_stderr(bool *copy)
{
    *copy = false;
    if (!hs_tls.private_fds)
        return STDERR_FILENO;
    int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
    int fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, STDERR_FILENO, 0) : -1;
    if (pidfd >= 0)
        close(pidfd);
    *copy = fd >= 0;
    return fd;
}

ssize_t hs_stderr_write(const void *p, size_t n, bool kept)
{
    bool copy;
    int fd = log_program_stderr(&copy);
    int fl = fd >= 0 ? fcntl(fd, F_GETFL) : -1;
    ssize_t w;
    if (fl >= 0 && (fl & O_ACCMODE) != O_RDONLY)
        w = write(fd, p, n);
    else if (kept) /* closed (a daemon's stdio): the copy of the start, if one was kept */
        w = hs_iothread_write_stderr(p, n);
    else
        w = (errno = EBADF, -1);
    if (copy)
        close(fd);
    return w;
}

void hs_log(const char *fmt, ...)
{
    char line[512];
    int saved_errno = errno;
    size_t n = 0;
    const char prefix[] = "heapsift: ";

    for (n = 0; prefix[n]; n++)
        line[n] = prefix[n];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(line + n, sizeof(line) - n - 1, fmt, ap);
    va_end(ap);
    if (k < 0)
        k = 0;
    n += (size_t)k < sizeof(line) - n - 1 ? (size_t)k : sizeof(line) - n - 2;
    line[n++] = '\n';
    ssize_t w = hs_stderr_write(line, n, false);
    (void)w;
    errno = saved_errno;
}

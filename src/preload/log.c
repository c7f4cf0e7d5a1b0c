/*
 * Diagnostics from inside the profiled process: one line on stderr per message, built on
 * the stack and written with a single write(2), so it never allocates, never takes a
 * stdio lock and may run in any context the hooks run in. Callers rate-limit with
 * hs_log_once; nothing here may ever abort the host. heapsift's own threads, whose
 * descriptor 2 is /dev/null (fdtable.c), reach the program's stderr through /proc.
 */
#include "core.h"
#include "fdhigh.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

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
    int fd = STDERR_FILENO;
    if (hs_tls.private_fds) /* the program's stderr, not the thread's /dev/null */
        fd = hs_open_high("/proc/self/fd/2", O_WRONLY | O_APPEND | O_NOCTTY, 0);
    ssize_t w = fd >= 0 ? write(fd, line, n) : -1;
    (void)w;
    if (fd != STDERR_FILENO && fd >= 0)
        close(fd);
    errno = saved_errno;
}

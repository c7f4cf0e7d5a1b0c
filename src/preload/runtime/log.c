/*
 * Diagnostics from inside the profiled process: one line on stderr per message, built on
 * the stack and written with a single write(2), so it never allocates, never takes a
 * stdio lock and may run in any context the hooks run in. Callers rate-limit with
 * hs_log_once; nothing here may ever abort the host. Every line goes to the program's own
 * descriptor 2 (the same open file, at its offset): heapsift's threads with tables of
 * their own (fdtable.c), whose 2 is /dev/null, take a copy of it for the write, and those
 * that run for long keep a reference to it while it is a log file (the pin, below).
 */
#include "core.h"
#include "base/monoclock.h"
#include "log.h"
#include "iothread.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <linux/kcmp.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
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

/* ---- the pin ----------------------------------------------------------------------------
 * When the program's 2 is a regular file opened without O_APPEND, each write lands at the
 * file's offset, and the kernel serialises writes at it (f_pos_lock) only while the open
 * file has more than one reference at the write's start. A program whose table one thread
 * uses takes none for its writes: a copy taken for one line of ours, by a thread with a
 * table of its own, could meet a program write in flight, both at the same offset, the
 * longer line covering the other (stderr_log: 2 of some 20 suite runs). So such a
 * thread keeps its copy while 2 is that file: from then on the program's writes take the
 * lock too. The first line after the pin waits LOG_PIN_SETTLE_MS for writes begun before
 * it. A job's thread (HS_FDS_JOB) needs none: the program thread that asked waits for
 * it, and were there others, the table's other users would make every write lock. */
#define LOG_PIN_SETTLE_MS 20

/* A regular file without O_APPEND: writes land at the shared offset. */
static bool log_positioned(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && !(fl & O_APPEND) && fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* a and b, in this thread's table, are the same open file. Without kcmp (a kernel built
 * without it), the same inode stands for it. */
static bool log_same_file(int a, int b)
{
    pid_t t = (pid_t)syscall(SYS_gettid);
    long r = syscall(SYS_kcmp, t, t, KCMP_FILE, a, b);
    if (r >= 0)
        return r == 0;
    struct stat x, y;
    return fstat(a, &x) == 0 && fstat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

static void log_unpin(hs_tls_t *t)
{
    if (t->err_pin > 0)
        close(t->err_pin - 1);
    t->err_pin = 0;
}

/* fd, a copy of the program's 2 that is positioned: the thread's pin from now on (fd is
 * closed when the pin is the same file). Returns the pin; with settle, once it is
 * LOG_PIN_SETTLE_MS old. */
static int log_pin(hs_tls_t *t, int fd, bool settle)
{
    if (t->err_pin > 0 && log_same_file(t->err_pin - 1, fd)) {
        close(fd);
    } else {
        log_unpin(t);
        t->err_pin = fd + 1;
        t->err_pin_ms = hs_mono_ms();
    }
    int64_t wait = t->err_pin_ms + LOG_PIN_SETTLE_MS - hs_mono_ms();
    if (settle && wait > 0) {
        struct timespec ts = {0, (long)wait * 1000000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    return t->err_pin - 1;
}

void hs_stderr_pin_refresh(void)
{
    hs_tls_t *t = &hs_tls;
    if (t->private_fds != HS_FDS_OWN)
        return;
    bool copy;
    int fd = log_program_stderr(&copy);
    if (fd >= 0 && log_positioned(fd)) {
        log_pin(t, fd, false);
        return;
    }
    log_unpin(t);
    if (copy)
        close(fd);
}

ssize_t hs_stderr_write(const void *p, size_t n, bool kept)
{
    bool copy;
    int fd = log_program_stderr(&copy);
    if (copy && hs_tls.private_fds == HS_FDS_OWN) {
        if (log_positioned(fd)) {
            fd = log_pin(&hs_tls, fd, true);
            copy = false;
        } else {
            log_unpin(&hs_tls);
        }
    }
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

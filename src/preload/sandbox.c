/*
 * Sandboxes (sandbox.h). The answer comes from the Seccomp_filters line of
 * /proc/self/status (Seccomp on kernels older than 5.9, which lack it), read with pread on
 * a descriptor opened in the constructor: opening one once a filter is in place is itself
 * a call a sandbox refuses and reports. The descriptor lives in the program's table, the
 * one exception to fdtable.c's rule, because it must be read from any thread after the
 * filter has made the I/O thread impossible; it is close-on-exec, and before each read
 * fstat checks that it still names the file opened (a program that closed it or reused its
 * number gets an "unknown", and heapsift behaves as it did before this module). Once a
 * filter is seen the answer is kept: a filter cannot be removed. Calls only raw system
 * calls; never allocates, takes no lock, logs nothing.
 */
#define _GNU_SOURCE
#include "sandbox.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Descriptor numbers a program picks by hand (a shell's 3-9) are left alone. */
#define SB_MIN_FD 100

static struct {
    int fd; /* -1: unknown */
    dev_t dev;
    ino_t ino;
    long at_start; /* filters at start; -1 unknown */
    int entered;   /* 1 once a filter installed since start was seen */
} sb = {-1, 0, 0, -1, 0};

/* The status into buf (NUL-terminated): false when it cannot be read. */
static bool sb_read_status(char *buf, size_t cap)
{
    struct stat st;
    if (sb.fd < 0 || fstat(sb.fd, &st) != 0 || st.st_dev != sb.dev || st.st_ino != sb.ino)
        return false;
    ssize_t n = pread(sb.fd, buf, cap - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

int hs_sandbox_threads(void)
{
    char buf[4096];
    const char *f = sb_read_status(buf, sizeof(buf)) ? strstr(buf, "\nThreads:") : NULL;
    return f ? (int)strtol(f + 9, NULL, 10) : -1;
}

/* Filters in force (Seccomp_filters, or Seccomp's mode when the kernel lacks the count),
 * or -1 when the status cannot be read. */
static long sb_read_filters(void)
{
    char buf[4096];
    if (!sb_read_status(buf, sizeof(buf)))
        return -1;
    const char *f = strstr(buf, "\nSeccomp_filters:");
    if (f)
        return strtol(f + 17, NULL, 10);
    f = strstr(buf, "\nSeccomp:");
    return f ? strtol(f + 9, NULL, 10) : -1;
}

static void sb_open(void)
{
    struct stat st;
    int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
    if (fd >= 0 && fd < SB_MIN_FD) {
        int high = fcntl(fd, F_DUPFD_CLOEXEC, SB_MIN_FD);
        close(fd);
        fd = high;
    }
    if (fd >= 0 && fstat(fd, &st) != 0) {
        close(fd);
        fd = -1;
    }
    sb.fd = fd;
    if (fd >= 0) {
        sb.dev = st.st_dev;
        sb.ino = st.st_ino;
    }
    sb.at_start = sb_read_filters();
}

void hs_sandbox_init(void)
{
    if (sb.fd < 0)
        sb_open();
}

void hs_sandbox_after_fork_child(void)
{
    if (__atomic_load_n(&sb.entered, __ATOMIC_ACQUIRE) || sb.fd < 0)
        return; /* filtered already (so is the child), or nothing to reopen */
    long parent_start = sb.at_start;
    struct stat st;
    if (fstat(sb.fd, &st) == 0 && st.st_dev == sb.dev && st.st_ino == sb.ino)
        close(sb.fd);
    sb.fd = -1;
    sb_open();
    if (parent_start >= 0 && sb.at_start > parent_start)
        __atomic_store_n(&sb.entered, 1, __ATOMIC_RELEASE); /* installed in between */
    else if (sb.at_start >= 0)
        sb.at_start = parent_start; /* the parent's baseline: a container's filters */
}

bool hs_sandbox_entered(void)
{
    if (__atomic_load_n(&sb.entered, __ATOMIC_ACQUIRE))
        return true;
    if (sb.at_start < 0)
        return false;
    long now = sb_read_filters();
    if (now <= sb.at_start)
        return false;
    __atomic_store_n(&sb.entered, 1, __ATOMIC_RELEASE);
    return true;
}

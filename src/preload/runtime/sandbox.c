/*
 * Sandboxes (sandbox.h). The answer comes from the Seccomp_filters line of
 * /proc/self/status (Seccomp on kernels older than 5.9, which lack it), read with pread on
 * a descriptor opened in the constructor: opening one once a filter is in place is itself
 * a call a sandbox refuses and reports. The descriptor lives in the program's table, the
 * one exception to fdtable.c's rule, because it must be read from any thread after the
 * filter has made the I/O thread impossible; it is close-on-exec, and before each read
 * fstat checks that it still names the file opened (a program that closed it or reused its
 * number gets an "unknown", and heapsift behaves as it did before this module). Once a
 * filter is seen the answer is kept: a filter cannot be removed. After the constructor it
 * makes only raw system calls (syscall(2): no cancellation point, which would read the
 * thread descriptor, absent in the child of a clone with a TLS of its own, as Chromium's
 * chroot helper is: pread's check faulted there); never allocates, takes no lock, logs
 * nothing.
 */
#define _GNU_SOURCE
#include "sandbox.h"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
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
    int *token;    /* a MADV_WIPEONFORK page: [0] 1 in the process that opened fd, [1] 1
                    * once this process took a sample of its own */
    int entered;   /* 1 once a filter installed since start was seen, or is assumed */
    int seen;      /* 1 when that filter was read in the status, not assumed */
} sb = {-1, 0, 0, -1, NULL, 0, 0};

/* The decimal number after p's blanks (strtol reads the locale through the thread
 * pointer, which a clone with a TLS of its own does not have). -1 when there is none. */
static long sb_number(const char *p)
{
    long v = -1;
    while (*p == ' ' || *p == '\t')
        p++;
    for (; *p >= '0' && *p <= '9'; p++)
        v = (v < 0 ? 0 : v * 10) + (*p - '0');
    return v;
}

/* The status into buf (NUL-terminated): false when it cannot be read. */
static bool sb_read_status(char *buf, size_t cap)
{
    struct stat st;
    if (sb.fd < 0 || syscall(SYS_fstat, sb.fd, &st) != 0 || st.st_dev != sb.dev ||
        st.st_ino != sb.ino)
        return false;
    ssize_t n = syscall(SYS_pread64, sb.fd, buf, cap - 1, 0);
    if (n <= 0)
        return false;
    buf[n] = '\0';
    return true;
}

int hs_sandbox_threads(void)
{
    char buf[4096];
    const char *f = sb_read_status(buf, sizeof(buf)) ? strstr(buf, "\nThreads:") : NULL;
    return f ? (int)sb_number(f + 9) : -1;
}

/* Filters in force (Seccomp_filters, or Seccomp's mode when the kernel lacks the count),
 * or -1 when the status cannot be read; LONG_MAX when the descriptor is a parent's: a
 * child made by a raw clone, which runs no fork handler (Chromium's zygote makes its
 * renderers so, each pid 1 of a namespace of its own), still holds it. Its token page,
 * MADV_WIPEONFORK, reads 0 then. Such a child cannot be told from a sandboxed one without
 * opening a file, which its sandbox may refuse and report, so it is taken for sandboxed. */
static long sb_read_filters(void)
{
    char buf[4096];
    if (sb.at_start >= 0 && sb.token && !__atomic_load_n(sb.token, __ATOMIC_ACQUIRE))
        return LONG_MAX;
    if (!sb_read_status(buf, sizeof(buf)))
        return -1;
    const char *f = strstr(buf, "\nSeccomp_filters:");
    if (f)
        return sb_number(f + 17);
    f = strstr(buf, "\nSeccomp:");
    return f ? sb_number(f + 9) : -1;
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
    if (!sb.token) {
        void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (page != MAP_FAILED && madvise(page, 4096, MADV_WIPEONFORK) == 0)
            sb.token = page;
        else if (page != MAP_FAILED)
            munmap(page, 4096); /* before Linux 4.14: a raw clone's child goes unseen */
    }
    if (sb.token)
        __atomic_store_n(sb.token, fd >= 0, __ATOMIC_RELEASE);
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
    if (parent_start >= 0 && sb.at_start > parent_start) { /* installed in between */
        sb.seen = sb.at_start != LONG_MAX;                 /* else its status could not be opened */
        __atomic_store_n(&sb.entered, 1, __ATOMIC_RELEASE);
    } else if (sb.at_start >= 0)
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
    if (now == LONG_MAX)
        return true; /* not kept: a vfork child shares its parent's memory */
    sb.seen = 1;
    __atomic_store_n(&sb.entered, 1, __ATOMIC_RELEASE);
    return true;
}

void hs_sandbox_note_sample(void)
{
    if (sb.token && !__atomic_load_n(&sb.token[1], __ATOMIC_RELAXED))
        __atomic_store_n(&sb.token[1], 1, __ATOMIC_RELAXED);
}

bool hs_sandbox_sampled(void)
{
    return !sb.token || __atomic_load_n(&sb.token[1], __ATOMIC_RELAXED);
}

const void *hs_sandbox_token(void)
{
    return sb.token;
}

bool hs_sandbox_seen(void)
{
    return hs_sandbox_entered() && __atomic_load_n(&sb.entered, __ATOMIC_ACQUIRE) && sb.seen;
}

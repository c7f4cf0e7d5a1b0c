/*
 * The copy-on-write snapshot of a leak check (issue 43), as Redis's background save: with
 * the program's threads stopped and their registers saved (stopworld.c), the process is
 * forked by a raw clone whose exit signal is 0, the threads go again, and the child scans
 * its own copy of the memory (reachscan.c) while the program runs on. The child answers
 * through a MAP_SHARED page mapped before the fork; heapsift reaps it with __WCLONE.
 *   - No atfork handler runs (no glibc fork), and the program never hears of the child:
 *     no SIGCHLD is sent (exit signal 0, even with SIGCHLD ignored it is not auto-reaped),
 *     and waitpid(-1) without __WALL/__WCLONE does not see it.
 *   - The child closes its copies of the descriptors first (a pipe's writer it kept would
 *     hold off the reader's end of file), sets its oom_score_adj to 1000 (under a memory
 *     limit the copy-on-write pages it costs kill it, not the program), dies with the
 *     thread that forked it, blocks every signal, allocates nothing and takes no lock (the
 *     stopped threads may have held any), and ends with exit_group.
 *   - Refused here, before anything stops (the scan then stops the world throughout, and
 *     the profile's comment says why): HEAPSIFT_LEAKS_SNAPSHOT=0; MADV_DONTFORK memory that
 *     is a root (smaps "dc": absent from the child, its pointers would be missed);
 *     MADV_WIPEONFORK memory that is a root, but for heapsift's own token pages (smaps
 *     "wf": zeros in the child, its pointers would be missed too); a cgroup
 *     memory.max, the process's cgroup's or an ancestor's, too close for the copy's page
 *     tables. A fork the kernel refuses (seccomp's
 *     EPERM or ENOSYS, ENOMEM, EAGAIN) falls back with the threads still stopped.
 * HEAPSIFT_TEST_SNAPSHOT=PREFIX (tests only, docs/testing.md): once the threads go, the
 * parent writes a byte to the fifo PREFIX.taken, and the child waits for a byte on
 * PREFIX.go before it scans, so a test changes its memory between snapshot and scan (the
 * process's first snapshot only).
 */
#define _GNU_SOURCE
#include "snapshot.h"
#include "base/monoclock.h"
#include "record/spool.h"
#include "runtime/options.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define SNAP_MARGIN (16ull << 20) /* below memory.max left free beyond the page tables */
#define SNAP_CLOSE_RANGE 436      /* close_range(2), Linux 5.9 */

/* Streams a /proc file's lines to fn (lines up to 4 KiB; longer ones are cut). */
static int snap_lines(const char *path, void (*fn)(const char *line, void *arg), void *arg)
{
    static char buf[16384];
    size_t len = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    for (;;) {
        ssize_t n = read(fd, buf + len, sizeof(buf) - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        len += (size_t)n;
        buf[len] = '\0';
        char *p = buf, *nl;
        while ((nl = strchr(p, '\n')) != NULL) {
            *nl = '\0';
            fn(p, arg);
            p = nl + 1;
        }
        len -= (size_t)(p - buf);
        memmove(buf, p, len);
        if (len > sizeof(buf) / 2) /* a line too long: its head only */
            len = 0;
    }
    close(fd);
    return 0;
}

typedef struct {
    uintptr_t lo, hi;           /* the current mapping */
    uintptr_t dd_lo, dd_hi;     /* the first writable MADV_DONTFORK one */
    uintptr_t wf_lo, wf_hi;     /* the first writable MADV_WIPEONFORK one not heapsift's */
    unsigned long long rss_kib; /* the whole process's resident memory */
} snap_smaps_t;

static bool snap_flag(const char *flags, const char *f)
{
    for (const char *p = flags; (p = strstr(p, f)) != NULL; p += 2)
        if ((p == flags || p[-1] == ' ') && (p[2] == ' ' || p[2] == '\0'))
            return true;
    return false;
}

static bool snap_own_page(uintptr_t p)
{
    return p && (p == (uintptr_t)hs_sandbox_token() || p == (uintptr_t)hs_spool_token());
}

/* A wipe-on-fork mapping [*lo, *hi) less heapsift's own pages at its ends (its owner
 * tokens, 4 KiB each: the kernel merges them with each other or with the program's
 * adjacent wipe-on-fork memory into one mapping); false when nothing else is left. */
static bool snap_trim_own(uintptr_t *lo, uintptr_t *hi)
{
    while (*lo < *hi && snap_own_page(*lo))
        *lo += 4096;
    while (*lo < *hi && snap_own_page(*hi - 4096))
        *hi -= 4096;
    return *lo < *hi;
}

static void snap_smaps_line(const char *line, void *arg)
{
    snap_smaps_t *m = arg;
    unsigned long lo, hi, kib;
    if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
        m->lo = lo;
        m->hi = hi;
    } else if (sscanf(line, "Rss: %lu kB", &kib) == 1) {
        m->rss_kib += kib;
    } else if (strncmp(line, "VmFlags:", 8) == 0 && !m->dd_hi && snap_flag(line + 8, "dc") &&
               snap_flag(line + 8, "rd") && snap_flag(line + 8, "wr")) {
        m->dd_lo = m->lo;
        m->dd_hi = m->hi;
    }
    uintptr_t wlo = m->lo, whi = m->hi;
    if (strncmp(line, "VmFlags:", 8) == 0 && !m->wf_hi && snap_flag(line + 8, "wf") &&
        snap_flag(line + 8, "rd") && snap_flag(line + 8, "wr") && snap_trim_own(&wlo, &whi)) {
        m->wf_lo = wlo;
        m->wf_hi = whi;
    }
}

static void snap_cgroup_line(const char *line, void *arg)
{
    if (strncmp(line, "0::", 3) == 0)
        snprintf(arg, 512, "%s", line + 3);
}

/* A cgroup v2 file's number (root + dir + "/" + name); false for "max", absent or
 * unreadable. */
static bool snap_read_u64(const char *root, const char *dir, const char *name,
                          unsigned long long *v)
{
    char path[1300], text[64];
    snprintf(path, sizeof(path), "%s%s/%s", root, dir, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return false;
    ssize_t n = read(fd, text, sizeof(text) - 1);
    close(fd);
    if (n <= 0)
        return false;
    text[n] = '\0';
    return sscanf(text, "%llu", v) == 1;
}

bool hs_snap_cgroup_room(const char *root, const char *dir, unsigned long long *room, char *at,
                         size_t cap)
{
    char p[512];
    bool any = false;
    snprintf(p, sizeof(p), "%s", strcmp(dir, "/") == 0 ? "" : dir);
    for (;;) {
        unsigned long long max, cur;
        if (snap_read_u64(root, p, "memory.max", &max) &&
            snap_read_u64(root, p, "memory.current", &cur)) {
            unsigned long long r = max > cur ? max - cur : 0;
            if (!any || r < *room) {
                *room = r;
                snprintf(at, cap, "%s", p[0] ? p : "/");
            }
            any = true;
        }
        char *slash = strrchr(p, '/');
        if (!p[0] || !slash)
            break;
        *slash = '\0'; /* the parent; "" is the root */
    }
    return any;
}

/* Why no snapshot: the memory at [lo, hi) marked by advice would <effect> a fork. */
static int snap_refuse(hs_snap_t *s, const char *advice, uintptr_t lo, uintptr_t hi,
                       const char *effect)
{
    snprintf(s->why, sizeof(s->why), "%s memory at 0x%lx-0x%lx (%lu KiB) would %s a fork", advice,
             (unsigned long)lo, (unsigned long)hi, (unsigned long)((hi - lo) >> 10), effect);
    return -EXDEV;
}

/* The copy's page tables (8 bytes a resident 4 KiB page) against the tightest memory.max
 * of the process's cgroup and its ancestors (a limit is often set on a parent: a
 * container's, a systemd slice's). */
static int snap_check_cgroup(hs_snap_t *s, unsigned long long rss_kib)
{
    char dir[512] = "", at[512];
    unsigned long long room, need = rss_kib * 2 + SNAP_MARGIN; /* rss/512 bytes */
    if (snap_lines("/proc/self/cgroup", snap_cgroup_line, dir) != 0 || !dir[0])
        return 0;
    if (!hs_snap_cgroup_room("/sys/fs/cgroup", dir, &room, at, sizeof(at)) || need <= room)
        return 0;
    snprintf(s->why, sizeof(s->why),
             "memory limit: memory.max of cgroup %.80s leaves %.1f MiB, a fork's copy needs "
             "about %.1f MiB",
             at, (double)room / (1 << 20), (double)need / (1 << 20));
    return -ENOMEM;
}

int hs_snap_check(hs_snap_t *s)
{
    snap_smaps_t m = {0};
    const char *test = getenv("HEAPSIFT_TEST_SNAPSHOT");
    memset(s, 0, sizeof(*s));
    if (!hs_opt.leaks_snapshot) {
        snprintf(s->why, sizeof(s->why), "HEAPSIFT_LEAKS_SNAPSHOT=0");
        return -ECANCELED;
    }
    static bool test_used; /* the first scan only: the exit's would wait for nobody */
    if (test && !test_used && strlen(test) < sizeof(s->test) - 8) {
        snprintf(s->test, sizeof(s->test), "%s", test);
        test_used = true;
    }
    int rc = snap_lines("/proc/self/smaps", snap_smaps_line, &m);
    if (rc != 0) {
        snprintf(s->why, sizeof(s->why), "/proc/self/smaps: %s", strerror(-rc));
        return rc;
    }
    if (m.dd_hi)
        return snap_refuse(s, "MADV_DONTFORK", m.dd_lo, m.dd_hi, "be missing from");
    if (m.wf_hi)
        return snap_refuse(s, "MADV_WIPEONFORK", m.wf_lo, m.wf_hi, "read as zeros in");
    return snap_check_cgroup(s, m.rss_kib);
}

int hs_snap_map(hs_snap_t *s, size_t n)
{
    size_t len = (sizeof(hs_snap_out_t) + n + 4095) & ~(size_t)4095;
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        snprintf(s->why, sizeof(s->why), "no shared memory for the answer: %s", strerror(errno));
        return -ENOMEM;
    }
    s->out = p;
    s->out_len = len;
    return 0;
}

pid_t hs_snap_fork(hs_snap_t *s)
{
    sigset_t all, old;
    sigfillset(&all);
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &all, &old, _NSIG / 8);
    int64_t t0 = hs_mono_ns();
    long pid = syscall(SYS_clone, 0ul, NULL, NULL, NULL, 0ul); /* flags 0: exit signal 0 */
    int err = errno;
    if (pid == 0)
        return 0; /* the child keeps every signal blocked */
    s->fork_ns = hs_mono_ns() - t0;
    syscall(SYS_rt_sigprocmask, SIG_SETMASK, &old, NULL, _NSIG / 8);
    if (pid < 0) {
        snprintf(s->why, sizeof(s->why), "fork refused: %s", strerror(err));
        return -err;
    }
    s->pid = (pid_t)pid;
    return s->pid;
}

/* The test hook's fifo: one byte, read (child) or written (parent). */
static void snap_test_fifo(const hs_snap_t *s, const char *suffix, bool write_it)
{
    char path[sizeof(s->test) + 8], byte = 'x';
    if (!s->test[0])
        return;
    snprintf(path, sizeof(path), "%s%s", s->test, suffix);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, (write_it ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0)
        return;
    if (write_it)
        (void)!syscall(SYS_write, fd, &byte, 1);
    else
        (void)!syscall(SYS_read, fd, &byte, 1);
    syscall(SYS_close, fd);
}

void hs_snap_child_begin(const hs_snap_t *s)
{
    static const char adj[] = "1000";
    syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
    if (syscall(SNAP_CLOSE_RANGE, 0u, ~0u, 0u) != 0)
        for (int fd = 0; fd < 1024; fd++)
            syscall(SYS_close, fd);
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        (void)!syscall(SYS_write, fd, adj, sizeof(adj) - 1);
        syscall(SYS_close, fd);
    }
    snap_test_fifo(s, ".go", false);
}

void hs_snap_child_exit(int status)
{
    for (;;)
        syscall(SYS_exit_group, status);
}

int hs_snap_wait(hs_snap_t *s)
{
    int st = 0;
    long rc;
    snap_test_fifo(s, ".taken", true);
    while ((rc = syscall(SYS_wait4, s->pid, &st, __WCLONE, NULL)) < 0 && errno == EINTR)
        ;
    s->pid = 0;
    bool answered = __atomic_load_n(&s->out->done, __ATOMIC_ACQUIRE) == 1;
    if (rc < 0 && answered) /* reaped by the program's waitpid(-1, __WALL): it answered */
        return 0;
    if (rc > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0 && answered)
        return 0;
    if (rc < 0)
        snprintf(s->why, sizeof(s->why), "the snapshot's child was lost: %s", strerror(errno));
    else if (WIFSIGNALED(st))
        snprintf(s->why, sizeof(s->why), "the snapshot's child died of signal %d", WTERMSIG(st));
    else
        snprintf(s->why, sizeof(s->why), "the snapshot's child failed (status %d)",
                 WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    return -ECHILD;
}

void hs_snap_free(hs_snap_t *s)
{
    if (s->out)
        munmap(s->out, s->out_len);
    s->out = NULL;
}

/*
 * The I/O thread: a thread of the profiled process with a descriptor table of its own,
 * where heapsift's file operations run whenever the calling thread shares the program's
 * table (the program's own threads calling the API or exiting, and heapsift's threads
 * where unshare(CLONE_FILES) is refused, as under a container's seccomp filter). Since
 * the program cannot name, close or reuse a descriptor in that table, nothing heapsift
 * reads, writes or closes there can be the program's file, and no check is needed.
 *
 * It runs only while there is work for it: a call starts it and ends it (waiting until it
 * has left /proc/self/task), unless a descriptor opened in it is still open or a session
 * holds it (hs_iothread_hold: a batch of calls, a heapsift thread of its own that shares
 * the program's table, the copy of stderr HEAPSIFT_LEAKS keeps). So a program sees no thread of
 * heapsift's that it did not ask for: Chromium's zygote, single-threaded by design, checks
 * /proc/self/task before it forks, and a program that unshares a user namespace must be
 * single-threaded.
 *
 * It shares the address space, so a call passes pointers as they are, and it is one of
 * two kinds:
 *   - where unshare(CLONE_FILES) works, an ordinary thread of heapsift's (threads.c) that
 *     takes a table of its own (fdtable.c), like the trigger thread; a held one also ends
 *     when only heapsift's threads are left (orphan.c), checked once a second;
 *   - where unshare is refused (a container's seccomp filter), a clone of the process
 *     without CLONE_FILES: the table is copied, and the copy's descriptors, the program's,
 *     are closed at once. glibc does not know this thread: it runs only raw system calls
 *     (no errno, no locks, no allocation), on a stack and a thread pointer of its own, and
 *     ends with the process (exit_group) or when the program's credentials change (a new
 *     one then starts with the new ones, as a thread glibc knows would have been changed
 *     by setuid). Valgrind refuses such a clone and ends the process: under it, only the
 *     first kind runs.
 * Both block every signal.
 *
 * Cost: one call is two futex hand-offs (about 10 us; a dump makes a few dozen), plus the
 * thread's start and end when no session holds it; the raw thread holds a 64 KiB stack,
 * the other one an 8 MiB reserve, each mapped once per process and reused. Callers: fdio.c through
 * the route installed here. Lock: io.lock (HS_RANK_IOTHREAD, a leaf: held across one call, nothing
 * else is taken under it).
 */
#define _GNU_SOURCE
#include "debugcheck.h"
#include "core.h"
#include "log.h"
#include "fdtable.h"
#include "orphan.h"
#include "threads.h"
#include "base/fdio.h"
#include "iothread.h"
#include "sandbox.h"

#include <errno.h>
#include <grp.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

#define IO_STACK (64 * 1024)
#define IO_GROUPS 64

typedef struct {
    uid_t uid[3];
    gid_t gid[3];
    int ngroups;
    gid_t groups[IO_GROUPS];
} io_creds_t;

static struct {
    pthread_mutex_t lock;
    uint32_t req;  /* futex: bumped by the caller for each call */
    uint32_t done; /* futex: set to req by the thread once the call returned */
    long nr, args[6], ret;
    pid_t pid;        /* the process the thread runs in; 0 = none */
    pid_t tid;        /* cleared by the kernel when the thread ends */
    pid_t started;    /* the last thread's id: waited for before its stack is reused */
    int holds;        /* sessions (hs_iothread_hold) keeping the thread between calls */
    bool start_batch; /* the constructor's session (hs_iothread_hold_start) is open */
    bool start_clear; /* in it, the sandbox was looked at and no filter found */
    int open_fds;     /* descriptors open in its table, which keep it too */
    hs_thread_t th;   /* a glibc thread's stack, reused by the next one */
    void *stack;      /* IO_STACK bytes, reused by the next raw thread */
    io_creds_t creds; /* what the thread was started with */
    bool said;        /* the failure to start one was logged */
    bool keep_stderr; /* the thread keeps its copy of the program's 2 */
    int err_fd;       /* that copy, in the thread's table */
    int kind;         /* IO_GLIBC or IO_RAW, while a thread runs */
    uint32_t verdict; /* futex: a glibc thread's start, IO_GLIBC or IO_RAW (refused) */
    uint64_t tls[64]; /* its thread pointer's block: never the caller's, which may end */
} io = {.lock = PTHREAD_MUTEX_INITIALIZER, .err_fd = -1};

enum { IO_GLIBC = 1, IO_RAW = 2 };
#define IO_QUIT (-2L) /* the call that ends a glibc thread (a raw one gets SYS_exit) */

/* A system call without errno (the thread shares no TLS with glibc). */
static inline long io_raw(long nr, long a0, long a1, long a2, long a3, long a4, long a5)
{
#if defined(__x86_64__)
    register long r10 __asm__("r10") = a3, r8 __asm__("r8") = a4, r9 __asm__("r9") = a5;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = nr, x0 __asm__("x0") = a0, x1 __asm__("x1") = a1;
    register long x2 __asm__("x2") = a2, x3 __asm__("x3") = a3, x4 __asm__("x4") = a4;
    register long x5 __asm__("x5") = a5;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
#else
#error "heapsift's I/O thread needs a raw system call for this architecture"
#endif
}

/* One of fdio.h's calls that are several system calls. */
static bool io_composite(long nr)
{
    return nr == HS_FDIO_HEAD || nr == HS_FDIO_SLURP;
}

/* io_raw for hs_fdio_head_run: its result is -errno already. */
__attribute__((optimize("no-stack-protector"))) static long io_sys(long nr, long a0, long a1,
                                                                   long a2, long a3)
{
    return io_raw(nr, a0, a1, a2, a3, 0, 0);
}

/* The call nr with args as a thread makes it: raw system calls only, so both kinds run it
 * (HS_FDIO_HEAD and HS_FDIO_SLURP are several of them). */
__attribute__((optimize("no-stack-protector"))) static long io_make(long nr, const long args[6])
{
    if (nr == HS_FDIO_HEAD)
        return hs_fdio_head_run(io_sys, args);
    if (nr == HS_FDIO_SLURP)
        return hs_fdio_slurp_run(io_sys, args);
    return io_raw(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
}

/* The thread: waits for a call, makes it, says so. Nothing here may touch glibc. */
__attribute__((optimize("no-stack-protector"))) static int io_main(void *arg)
{
    (void)arg;
    io_raw(SYS_close_range, io.keep_stderr ? 3 : 0, ~0L & 0xffffffffL, 0, 0, 0, 0);
    io_raw(SYS_prctl, PR_SET_NAME, (long)"heapsift-io", 0, 0, 0, 0);
    uint32_t seen = 0;
    for (;;) {
        uint32_t r = __atomic_load_n(&io.req, __ATOMIC_ACQUIRE);
        if (r == seen) {
            io_raw(SYS_futex, (long)&io.req, FUTEX_WAIT_PRIVATE, seen, 0, 0, 0);
            continue;
        }
        seen = r;
        long ret = io_make(io.nr, io.args); /* SYS_exit ends here */
        io.ret = ret;
        __atomic_store_n(&io.done, r, __ATOMIC_RELEASE);
        io_raw(SYS_futex, (long)&io.done, FUTEX_WAKE_PRIVATE, 1, 0, 0, 0);
    }
    return 0;
}

static void io_creds_now(io_creds_t *c)
{
    memset(c, 0, sizeof(*c));
    getresuid(&c->uid[0], &c->uid[1], &c->uid[2]);
    getresgid(&c->gid[0], &c->gid[1], &c->gid[2]);
    c->ngroups = getgroups(IO_GROUPS, c->groups);
}

/* The loop of a thread of the first kind. */
static void *io_glibc_main(void *arg)
{
    (void)arg;
    hs_guard_enter(&hs_tls); /* for life */
    pthread_setname_np(pthread_self(), "heapsift-io");
    io.started = (pid_t)syscall(SYS_gettid);
    uint32_t v = hs_fd_private() == 0 ? IO_GLIBC : IO_RAW;
    if (v == IO_GLIBC && io.keep_stderr) { /* a copy of the program's 2, in our table */
        int pidfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
        io.err_fd = pidfd >= 0 ? (int)syscall(SYS_pidfd_getfd, pidfd, STDERR_FILENO, 0) : -1;
        if (pidfd >= 0)
            close(pidfd);
    }
    if (v == IO_GLIBC)
        __atomic_store_n(&io.tid, io.started, __ATOMIC_RELEASE);
    __atomic_store_n(&io.verdict, v, __ATOMIC_RELEASE);
    syscall(SYS_futex, &io.verdict, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    if (v != IO_GLIBC)
        return NULL;
    hs_orphan_register();
    uint32_t seen = 0;
    for (;;) {
        uint32_t r = __atomic_load_n(&io.req, __ATOMIC_ACQUIRE);
        if (r == seen) {
            struct timespec ts = {1, 0};
            if (syscall(SYS_futex, &io.req, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0) != 0 &&
                errno == ETIMEDOUT && hs_orphan_program_gone())
                break; /* the last of heapsift's threads out makes glibc exit */
            continue;
        }
        seen = r;
        if (io.nr == IO_QUIT)
            break;
        long ret = io_composite(io.nr) ? io_make(io.nr, io.args)
                                       : syscall(io.nr, io.args[0], io.args[1], io.args[2],
                                                 io.args[3], io.args[4], io.args[5]);
        io.ret = !io_composite(io.nr) && ret == -1 ? -errno : ret;
        __atomic_store_n(&io.done, r, __ATOMIC_RELEASE);
        syscall(SYS_futex, &io.done, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
    if (io.err_fd >= 0)
        close(io.err_fd);
    io.err_fd = -1;
    __atomic_store_n(&io.tid, 0, __ATOMIC_RELEASE);
    syscall(SYS_futex, &io.tid, FUTEX_WAKE, 64, NULL, NULL, 0);
    return NULL;
}

/* Starts a thread of the first kind: 0, or -EPERM where unshare is refused. */
static int io_start_glibc(void)
{
    if (hs_fd_refused())
        return -EPERM;
    if (io.started)
        hs_thread_wait_gone(io.started); /* the last one's stack is reused */
    io.started = 0;
    __atomic_store_n(&io.verdict, 0, __ATOMIC_RELEASE);
    int rc = hs_thread_restart(&io.th, io_glibc_main, NULL);
    if (rc != 0)
        return rc;
    uint32_t v;
    while ((v = __atomic_load_n(&io.verdict, __ATOMIC_ACQUIRE)) == 0)
        syscall(SYS_futex, &io.verdict, FUTEX_WAIT_PRIVATE, 0, NULL, NULL, 0);
    if (v != IO_GLIBC) {
        hs_thread_wait_gone(io.started); /* it has returned */
        io.started = 0;
        return -EPERM;
    }
    io.kind = IO_GLIBC;
    io.pid = getpid();
    return 0;
}

/* Ends the thread and waits until it is gone from /proc/self/task: a raw one (its
 * credentials are stale, or its session is over) by SYS_exit, which the kernel reports by
 * clearing io.tid; a glibc one by IO_QUIT. */
static void io_stop(void)
{
    io.nr = io.kind == IO_GLIBC ? IO_QUIT : SYS_exit;
    memset(io.args, 0, sizeof(io.args));
    __atomic_add_fetch(&io.req, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &io.req, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    pid_t tid;
    while ((tid = __atomic_load_n(&io.tid, __ATOMIC_ACQUIRE)) != 0)
        syscall(SYS_futex, &io.tid, FUTEX_WAIT, tid, NULL, NULL, 0);
    hs_orphan_forget(io.started); /* its slot, for the next thread */
    hs_thread_wait_gone(io.started);
    io.started = 0;
    io.open_fds = 0; /* its table is gone with it */
    io.pid = 0;
    io.kind = 0;
}

/* Starts a raw thread (the second kind). */
static int io_start_raw(void)
{
    if (io.stack == NULL) {
        void *s = mmap(NULL, IO_STACK, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (s == MAP_FAILED)
            return -ENOMEM;
        io.stack = s;
    }
    io.req = io.done = 0;
    io.tls[0] = (uint64_t)(uintptr_t)&io.tls[0]; /* a TCB's self pointer, as x86-64 has */
    io_creds_now(&io.creds);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* inherited: no signal is ever its to take */
    int flags = CLONE_VM | CLONE_FS | CLONE_SIGHAND | CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS |
                CLONE_PARENT_SETTID | CLONE_CHILD_CLEARTID;
    int tid =
        clone(io_main, (char *)io.stack + IO_STACK, flags, NULL, &io.tid, &io.tls[0], &io.tid);
    int err = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (tid < 0) {
        if (!io.said) {
            io.said = true;
            hs_log("cannot start the I/O thread (%s): profiles cannot be written from a thread "
                   "that shares the program's descriptors",
                   strerror(err));
        }
        return -err;
    }
    io.pid = getpid();
    io.started = tid;
    io.kind = IO_RAW;
    io.err_fd = io.keep_stderr ? STDERR_FILENO : -1;
    hs_orphan_register_tid(tid);
    return 0;
}

static int io_start(void)
{
    io.req = io.done = 0;
    return io_start_glibc() == 0 ? 0 : io_start_raw();
}

static bool io_creds_same(void)
{
    io_creds_t now;
    io_creds_now(&now);
    return memcmp(&now, &io.creds, sizeof(now)) == 0;
}

/* Whether a sandbox's filter is in place (sandbox.h: a read of /proc/self/status, 21 to
 * 24 us). In the constructor's session of a process with no other thread (loaded at its
 * start, not by dlopen into a running program) no program code runs until it ends: one
 * look that finds no filter serves every call of it (cc1 made about 80 such reads at
 * each start). io.lock held. */
static bool io_sandboxed(void)
{
    if (io.start_batch && io.start_clear)
        return false;
    bool in = hs_sandbox_entered();
    io.start_clear = io.start_batch && !in;
    return in;
}

/* A running thread of this process with the caller's credentials: 0 or -errno. */
static int io_ready(void)
{
    /* Under a sandbox (sandbox.h) no call goes through: unshare, clone and getgroups (the
     * credentials check) are what it refuses and reports, and the files a call would open
     * it refuses anyway. */
    if (io_sandboxed())
        return -EPERM;
    if (io.pid == getpid() && __atomic_load_n(&io.tid, __ATOMIC_ACQUIRE) != 0) {
        if (io.kind == IO_GLIBC || io_creds_same()) /* glibc changes a glibc thread's */
            return 0;
        io_stop();
    }
    return io_start();
}

/* One call in the thread. The wait is bounded: a thread gone (which only the process's
 * end does) fails the call instead of hanging the caller. */
static long io_call(long nr, const long args[6])
{
    long r = io_ready();
    if (r != 0)
        return r;
    io.nr = nr;
    memcpy(io.args, args, sizeof(io.args));
    uint32_t want = __atomic_add_fetch(&io.req, 1, __ATOMIC_RELEASE);
    syscall(SYS_futex, &io.req, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    for (;;) {
        uint32_t d = __atomic_load_n(&io.done, __ATOMIC_ACQUIRE);
        if (d == want)
            return io.ret;
        if (__atomic_load_n(&io.tid, __ATOMIC_ACQUIRE) == 0)
            return -EIO;
        struct timespec ts = {1, 0};
        syscall(SYS_futex, &io.done, FUTEX_WAIT_PRIVATE, d, &ts, NULL, 0);
    }
}

/* Ends the thread when nothing holds it: no session, no descriptor open in its table
 * (they live in that table: a file opened by one call is read and closed by the next
 * ones). io.lock held. */
static void io_idle(void)
{
    if (io.holds == 0 && io.open_fds == 0 && !io.keep_stderr && io.pid == getpid() &&
        __atomic_load_n(&io.tid, __ATOMIC_ACQUIRE) != 0)
        io_stop();
}

/* One call in the thread, from any thread. */
static long io_remote(long nr, const long args[6])
{
    int saved = errno, cancel;
    hs_tls_t *t = &hs_tls;
    /* Guard held: starting the thread allocates (glibc's TLS), never to be sampled under
     * this lock (rank HS_RANK_IOTHREAD, above the tables'). */
    hs_guard_enter(t);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_lock(&io.lock, HS_RANK_IOTHREAD);
    long r = io_call(nr, args);
    if (nr == SYS_openat && r >= 0)
        io.open_fds++;
    else if (nr == SYS_close && r == 0 && io.open_fds > 0)
        io.open_fds--;
    io_idle();
    hs_unlock(&io.lock, HS_RANK_IOTHREAD);
    pthread_setcancelstate(cancel, NULL);
    hs_guard_exit(t);
    errno = saved;
    return r;
}

static long io_route(long nr, const long args[6])
{
    if (nr == -1)
        return !hs_tls.private_fds;
    if (hs_tls.private_fds) { /* a table of the thread's own (fdtable.c) */
        if (io_composite(nr))
            return io_make(nr, args);
        long r = syscall(nr, args[0], args[1], args[2], args[3], args[4], args[5]);
        return r == -1 ? -errno : r;
    }
    return io_remote(nr, args);
}

void hs_iothread_keep_stderr(void)
{
    hs_lock(&io.lock, HS_RANK_IOTHREAD);
    io.keep_stderr = true;
    if (io.pid == getpid() && __atomic_load_n(&io.tid, __ATOMIC_ACQUIRE) != 0)
        io_stop(); /* started without it */
    io_ready();
    hs_unlock(&io.lock, HS_RANK_IOTHREAD);
}

ssize_t hs_iothread_write_stderr(const void *p, size_t n)
{
    if (!io.keep_stderr) {
        errno = EBADF;
        return -1;
    }
    long args[6] = {-1, (long)p, (long)n, 0, 0, 0};
    int saved = errno, cancel;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_lock(&io.lock, HS_RANK_IOTHREAD);
    long r = io_ready();
    if (r == 0 && io.err_fd < 0)
        r = -EBADF;
    if (r == 0) {
        args[0] = io.err_fd;
        r = io_call(SYS_write, args);
    }
    hs_unlock(&io.lock, HS_RANK_IOTHREAD);
    pthread_setcancelstate(cancel, NULL);
    hs_guard_exit(t);
    errno = saved;
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

void hs_iothread_hold(void)
{
    hs_lock(&io.lock, HS_RANK_IOTHREAD);
    io.holds++;
    hs_unlock(&io.lock, HS_RANK_IOTHREAD);
}

void hs_iothread_hold_start(void)
{
    bool alone = hs_sandbox_threads() == 1; /* no thread of the program's to add a filter */
    hs_lock(&io.lock, HS_RANK_IOTHREAD);
    io.holds++;
    io.start_batch = alone;
    io.start_clear = false;
    hs_unlock(&io.lock, HS_RANK_IOTHREAD);
}

void hs_iothread_release(void)
{
    int saved = errno;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    hs_lock(&io.lock, HS_RANK_IOTHREAD);
    io.start_batch = io.start_clear = false; /* the program's code may run from here */
    if (io.holds > 0 && --io.holds == 0)
        io_idle();
    hs_unlock(&io.lock, HS_RANK_IOTHREAD);
    hs_guard_exit(t);
    errno = saved;
}

void hs_iothread_install(void)
{
    __atomic_store_n(&hs_fdio_route, io_route, __ATOMIC_RELEASE);
}

void hs_iothread_after_fork(void)
{
    /* The parent's thread is not here; its stack is ours to reuse. A call in progress
     * in another thread of the parent left the lock held. */
    pthread_mutex_init(&io.lock, NULL);
    io.pid = 0;
    io.tid = 0;
    io.kind = 0;
    io.started = 0; /* a task of the parent's */
    io.holds = 0;   /* the sessions of the parent's other threads */
    io.open_fds = 0;
    io.err_fd = -1; /* the parent thread's copy, in a table this process does not have */
}

/*
 * Descriptor tables of heapsift's own threads (the trigger thread and the HTTP server).
 * Each starts by taking a table of its own (unshare(CLONE_FILES)), closing the copies of
 * the program's descriptors it came with and putting /dev/null on 0, 1 and 2. Then:
 *   - what the thread opens (profile files, sockets, libmicrohttpd's epoll) is invisible
 *     to the program: a loop closing every descriptor, a descriptor number reused for
 *     the program's own file, or a fork cannot make the thread read, write or close the
 *     program's files, nor the program the thread's;
 *   - the thread holds none of the program's files open (a pipe the program closes
 *     reaches end-of-file as without heapsift).
 * The thread's messages go to the program's stderr as it is at the time of the message
 * (log.c). Where unshare is refused (a container's seccomp filter), the threads share the
 * program's table, and their file operations run in the I/O thread instead (iothread.c).
 *
 * hs_fdtable_run gives the same guarantee to work that starts on a program's thread (a
 * dump at exit or through the API, resolving a tracker): it runs on a short-lived thread
 * with a table of its own, since libdwfl and ld.so, which it calls, make their own
 * descriptor calls, which no route can redirect.
 */
#define _GNU_SOURCE
#include "core.h"
#include "debugcheck.h"
#include "fdtable.h"
#include "sandbox.h"
#include "iothread.h"
#include "threads.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <time.h>
#include <sys/resource.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_close_range
#define SYS_close_range 436
#endif

static void fd_close_all(void)
{
    if (syscall(SYS_close_range, 0u, ~0u, 0u) == 0)
        return;
    /* Kernels before 5.9: the numbers up to the limit (the table was copied with every
     * open descriptor under it). */
    struct rlimit rl;
    int max =
        getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 1u << 20 ? (int)rl.rlim_cur : 1 << 20;
    for (int fd = 0; fd < max; fd++)
        close(fd);
}

static int fd_refused; /* unshare was refused once: it always will be (seccomp) */

int hs_fd_private(void)
{
    /* Under a sandbox (sandbox.h) unshare is not tried: the filter would report it. */
    if (hs_sandbox_entered() || unshare(CLONE_FILES) != 0) {
        int e = hs_sandbox_entered() ? EPERM : errno;
        __atomic_store_n(&fd_refused, 1, __ATOMIC_RELAXED);
        return -e;
    }
    fd_close_all();
    int fd = open("/dev/null", O_RDWR);
    if (fd == 0) {
        dup2(0, 1);
        dup2(0, 2);
    }
    hs_tls.private_fds = HS_FDS_OWN;
    return 0;
}

bool hs_fd_refused(void)
{
    return __atomic_load_n(&fd_refused, __ATOMIC_RELAXED);
}

typedef struct {
    void (*fn)(void *);
    void *arg;
    bool ran;
    pid_t tid;      /* the thread's, for hs_thread_wait_gone */
    hs_held_t held; /* the caller's locks, held for the job while the caller waits */
    uint32_t go;    /* the caller's signal mask is its own again (a futex word) */
} fd_job_t;

/* hs_thread_start blocks every signal of the caller around pthread_create. A job that
 * stops the world (the leak check's scan) and began before the caller had its mask back
 * found the caller blocking the signal: left running, its registers unread (leak_reach
 * under load: "2 other threads stopped", one run in 60). So the job waits for the word,
 * 1 s at most. */
static void fd_job_wait_caller(fd_job_t *job)
{
    for (int i = 0; i < 1000 && !__atomic_load_n(&job->go, __ATOMIC_ACQUIRE); i++) {
        struct timespec ts = {0, 1000000};
        syscall(SYS_futex, &job->go, FUTEX_WAIT_PRIVATE, 0, &ts, NULL, 0);
    }
}

static void *fd_job_main(void *p)
{
    fd_job_t *job = p;
    job->tid = (pid_t)syscall(SYS_gettid);
    hs_guard_enter(&hs_tls); /* for life: what it allocates is the profiler's */
    hs_rank_restore(&job->held);
    fd_job_wait_caller(job);
    if (hs_fd_private() == 0) {
        hs_tls.private_fds = HS_FDS_JOB;
        job->fn(job->arg);
        job->ran = true;
    }
    return NULL;
}

void hs_fdtable_run(void (*fn)(void *), void *arg)
{
    fd_job_t job = {fn, arg, false, 0, {0}, 0};
    hs_rank_save(&job.held);
    if (hs_tls.private_fds) {
        fn(arg); /* its table already */
        return;
    }
    hs_thread_t th;
    if (!__atomic_load_n(&fd_refused, __ATOMIC_RELAXED) &&
        hs_thread_start(&th, fd_job_main, &job, false) == 0) {
        __atomic_store_n(&job.go, 1, __ATOMIC_RELEASE);
        syscall(SYS_futex, &job.go, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
        hs_thread_join(&th);
        hs_thread_wait_gone(job.tid); /* the program's own thread count, when it returns */
    }
    if (!job.ran) { /* none to be had: fdio.h's route serves it, one I/O thread for all */
        hs_iothread_hold();
        fn(arg);
        hs_iothread_release();
    }
}

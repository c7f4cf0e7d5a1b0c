/*
 * The attach thread of attach_thread.h. In order:
 *   1. a box (attach_box.h) mapped in the target by the syscall stub (mmap);
 *   2. the box filled: the target's dlopen, dlsym, dlerror and snprintf, the library's
 *      path and the options file (init), or nothing more (finish: the library is loaded);
 *   3. pthread_create(&box->tid, NULL, start, box) by the call stub on a program thread
 *      caught outside the allocator and the loader; start is the thread stub (init: it
 *      dlopens the library) or the library's heapsift_attach_thread (finish);
 *   4. the box polled until done, saying every 5 s what the thread waits for; SIGINT or
 *      SIGTERM, or 60 s, end the wait: the box is then marked cancelled (an init not yet
 *      begun hooks nothing) and left to the thread;
 *   5. once the thread has ended and the creating thread has stored pthread_create's
 *      result, the box unmapped by the syscall stub.
 * No program thread is stopped for more than one stub's set-up, and none waits for this
 * command.
 */
#define _GNU_SOURCE
#include "attach_thread.h"
#include "model/attach_box.h"
#include "attach_check.h"
#include "kit/cli.h"
#include "inject_thread.h"
#include "base/monoclock.h"
#include "inject_stub.h"
#include "ptrace_inject.h"

#include <errno.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define AT_BOX_BYTES ((sizeof(hs_attach_box_t) + 4095) & ~(size_t)4095)
/* To find a thread at a safe point: 10 s and 400 stops (with 16 threads inside malloc on a
 * quiet machine, 1 stop in 15 finds one; at load 12, 84 stops took 10 s), 60 s at most,
 * and never 10 s after the last stop of a thread that could have moved since its refusal. */
#define AT_SAFE_MS 10000
#define AT_SAFE_STOPS 400
#define AT_SAFE_MAX_MS 60000
#define AT_DONE_MS 60000 /* for the attach thread's work */

static void at_nap_ms(long ms)
{
    struct timespec d = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&d, NULL);
}

/* The address of name in the target: from libc, else from the other library given. */
static bool at_sym(pid_t pid, const char *name, const char *other, uintptr_t *addr)
{
    return hs_inject_remote_sym(pid, "libc.so", name, addr) ||
           (other && hs_inject_remote_sym(pid, other, name, addr));
}

static int at_box_map(hs_thr_t *s, const char *verb, uintptr_t *box)
{
    uint64_t a[6] = {
        0, AT_BOX_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, (uint64_t)-1, 0};
    uint64_t ret = 0;
    int rc = hs_thr_syscall(s, SYS_mmap, a, &ret);
    if (rc == 0 && (int64_t)ret < 0 && (int64_t)ret > -4096)
        rc = (int)(int64_t)ret;
    if (rc == -ESRCH || s->died)
        return hs_attach_died(s->pid, -1, "while its memory was being mapped");
    if (rc == -EINTR) {
        hs_cli_error("%s: interrupted; nothing was changed in process %d", verb, (int)s->pid);
        return HS_AT_FAIL;
    }
    if (rc != 0) {
        hs_cli_error("%s: cannot map memory in process %d: %s", verb, (int)s->pid, strerror(-rc));
        return HS_AT_FAIL;
    }
    *box = (uintptr_t)ret;
    return HS_AT_OK;
}

/* The thread's kernel id has left /proc/PID/task (1 s at most): it has ended. */
static void at_thread_gone(pid_t pid, int32_t ktid)
{
    char path[64];
    struct stat st;
    snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)ktid);
    for (int i = 0; ktid > 0 && i < 1000 && stat(path, &st) == 0; i++)
        at_nap_ms(1);
}

/* The traced attach thread's end status once its process is going (its memory can no
 * longer be read: the main thread has ended, or the kernel is tearing the process down), at
 * most 10 s; -1 if it was not seen. Its end is what says how the process ended. */
static int at_child_end(hs_thr_t *s)
{
    int st = -1;
    for (int i = 0; i < 10000; i++) {
        int r = hs_thr_child_poll(s, &st);
        if (r == 1)
            return st;
        if (r < 0)
            return -1;
        at_nap_ms(1);
    }
    return -1;
}

/* What the attach thread waits for, from /proc: its system call, for the message. */
static void at_thread_state(pid_t pid, int32_t ktid, char *out, size_t cap)
{
    char path[64], buf[128] = "";
    snprintf(path, sizeof(path), "/proc/%d/task/%d/wchan", (int)pid, (int)ktid);
    FILE *f = ktid > 0 ? fopen(path, "r") : NULL;
    if (f) {
        if (!fgets(buf, sizeof(buf), f))
            buf[0] = '\0';
        fclose(f);
    }
    snprintf(out, cap, "%s", buf[0] && strcmp(buf, "0") != 0 ? buf : "running");
}

/* Polls the box until done, following the thread (its seccomp traps, its end); HS_AT_OK,
 * or a status (said). */
static int at_box_wait(hs_thr_t *s, uintptr_t box, hs_attach_job_t *job, hs_attach_box_t *b)
{
    const char *during = job->op == HS_BOX_INIT ? "while its attach thread loaded and started "
                                                  "heapsift"
                                                : "while its attach thread wrote the profile";
    int st = -1, end_st = -1;
    long ended = -1; /* when the thread's end was seen, in polls */
    for (long waited = 0;; waited++) {
        if (hs_thr_child_poll(s, &st) == 1) {
            ended = waited;
            end_st = st;
        }
        if (hs_inject_mem(s->pid, box, b, sizeof(*b), false) != 0)
            return hs_attach_died(s->pid, ended >= 0 ? end_st : at_child_end(s), during);
        /* done, and the call stub has stored pthread_create's result (the new thread can
           finish before the creating one stores it: the box must outlive both) */
        if (__atomic_load_n(&b->done, __ATOMIC_ACQUIRE) && b->created[1]) {
            for (int i = 0; i < 1000 && hs_thr_child_poll(s, &st) == 0; i++)
                at_nap_ms(1); /* its end, reaped */
            hs_thr_child_release(s);
            return HS_AT_OK;
        }
        /* ended without answering: the process is going (its end gives the status) */
        if (ended >= 0 && !b->done && waited - ended > 1000 && kill(s->pid, 0) == 0) {
            hs_cli_error("%s: the attach thread in process %d ended without answering", job->verb,
                         (int)s->pid);
            return HS_AT_FAIL;
        }
        if (b->created[1] && (int64_t)b->created[0] != 0) {
            hs_cli_error("%s: process %d could not create a thread: %s", job->verb, (int)s->pid,
                         strerror((int)b->created[0]));
            return HS_AT_FAIL;
        }
        bool give_up = waited >= AT_DONE_MS || (job->stop && *job->stop);
        if (waited > 0 && waited % 5000 == 0 && !give_up) {
            char state[128];
            at_thread_state(s->pid, b->ktid, state, sizeof(state));
            fprintf(stderr,
                    "heapsift: %s: the attach thread in process %d has not finished "
                    "after %ld s (thread %d: %s); the program runs on\n",
                    job->verb, (int)s->pid, waited / 1000, (int)b->ktid, state);
        }
        if (give_up) {
            uint32_t one = 1;
            hs_thr_child_release(s);
            hs_inject_mem(s->pid, box + offsetof(hs_attach_box_t, cancel), &one, sizeof(one), true);
            hs_cli_error("%s: %s waiting for the attach thread in process %d (thread %d); it "
                         "runs on, and hooks nothing if it has not begun",
                         job->verb, waited >= AT_DONE_MS ? "gave up" : "interrupted", (int)s->pid,
                         (int)b->ktid);
            return HS_AT_FAIL;
        }
        at_nap_ms(1);
    }
}

/* What a failed call leaves: for a finish (detach, the end of attach --seconds), the
 * library stays in the process and keeps profiling until a detach succeeds. */
static const char *at_left(const hs_attach_job_t *job)
{
    return job->op == HS_BOX_FINISH ? "; the process stays attached (heapsift detach tries again)"
                                    : "";
}

/* Fills the box and starts the thread. HS_AT_OK or a status (said). */
static int at_box_start(hs_thr_t *s, uintptr_t box, hs_attach_job_t *job)
{
    static hs_attach_box_t b;
    uintptr_t create, start;
    memset(&b, 0, sizeof(b));
    b.magic = HS_BOX_MAGIC;
    b.op = (uint32_t)job->op;
    snprintf(b.sym, sizeof(b.sym), "heapsift_attach_thread");
    memcpy(b.fmt, "%s", 3);
    bool ok = at_sym(s->pid, "pthread_create", "libpthread.so", &create);
    if (job->op == HS_BOX_INIT) {
        snprintf(b.path, sizeof(b.path), "%s", job->link);
        snprintf(b.optfile, sizeof(b.optfile), "%s", job->optfile);
        uintptr_t f[4];
        ok = ok && at_sym(s->pid, "dlopen", "libdl.so", &f[0]) &&
             at_sym(s->pid, "dlsym", "libdl.so", &f[1]) &&
             at_sym(s->pid, "dlerror", "libdl.so", &f[2]) &&
             at_sym(s->pid, "snprintf", NULL, &f[3]);
        b.dlopen = f[0], b.dlsym = f[1], b.dlerror = f[2], b.snprintf = f[3];
        start = s->cave + s->off[HS_STUB_THREAD];
    } else {
        ok = ok && (start = job->entry) != 0;
    }
    if (!ok) {
        hs_cli_error("%s: process %d lacks a function the attach needs (pthread_create, "
                     "dlopen, dlsym, dlerror, snprintf, or the library's heapsift_attach_thread)",
                     job->verb, (int)s->pid);
        return HS_AT_FAIL;
    }
    if (hs_inject_mem(s->pid, box, &b, sizeof(b), true) != 0)
        return hs_attach_died(s->pid, -1, "while its memory was being written");
    uint64_t a[6] = {box + offsetof(hs_attach_box_t, tid), 0, start, box, 0, 0};
    int64_t t0 = hs_mono_ms();
    int rc = hs_thr_call(s, create, a, box + offsetof(hs_attach_box_t, created), AT_SAFE_MS,
                         AT_SAFE_STOPS, AT_SAFE_MAX_MS);
    job->tries = s->tries;
    if (rc == -ESRCH || s->died)
        return hs_attach_died(s->pid, -1, "while a thread was being created in it");
    if (rc == -EINTR) {
        hs_cli_error("%s: interrupted; nothing was changed in process %d but a mapping of %zu "
                     "bytes, which is unmapped%s",
                     job->verb, (int)s->pid, AT_BOX_BYTES, at_left(job));
        return HS_AT_FAIL;
    }
    if (rc == -ETIMEDOUT) {
        hs_cli_error("%s: no thread of process %d was outside the allocator and the loader in "
                     "%.1f s (%u stop%s; %u times a refused thread that had not moved since was "
                     "left alone; the last: %s): nothing was changed%s",
                     job->verb, (int)s->pid, (double)(hs_mono_ms() - t0) / 1000, s->tries,
                     s->tries == 1 ? "" : "s", s->unmoved, s->why, at_left(job));
        return HS_AT_FAIL;
    }
    if (rc != 0) {
        hs_cli_error("%s: cannot run code in process %d: %s%s%s", job->verb, (int)s->pid,
                     strerror(-rc), s->why[0] ? " (" : "", s->why[0] ? s->why : "");
        if (s->why[0])
            fputs(")\n", stderr);
        return HS_AT_FAIL;
    }
    return HS_AT_OK;
}

int hs_attach_thread_run(pid_t pid, hs_attach_job_t *job)
{
    static hs_attach_box_t b;
    hs_thr_t s;
    uintptr_t box = 0;
    int rc = hs_thr_open(&s, pid);
    s.stop = job->stop;
    if (rc == -ESRCH)
        return hs_attach_refused(pid, rc, job->verb);
    if (rc != 0) {
        hs_cli_error("%s: process %d maps no executable file with room for heapsift's 300 "
                     "bytes of code",
                     job->verb, (int)pid);
        return HS_AT_FAIL;
    }
    rc = at_box_map(&s, job->verb, &box);
    if (rc == HS_AT_OK)
        rc = at_box_start(&s, box, job);
    bool started = rc == HS_AT_OK;
    if (rc == HS_AT_OK)
        rc = at_box_wait(&s, box, job, &b);
    if (rc == HS_AT_OK) {
        job->rc = b.rc;
        memcpy(job->msg, b.msg, sizeof(job->msg));
        job->msg[sizeof(job->msg) - 1] = '\0';
        memcpy(job->out, b.out, sizeof(job->out));
        job->out[sizeof(job->out) - 1] = '\0';
        memcpy(job->report, b.report, sizeof(job->report));
        if (b.done == HS_BOX_NOLOAD)
            job->rc = -ENOENT;
        at_thread_gone(pid, b.ktid);
    }
    if (box && (!started || rc == HS_AT_OK)) { /* else the thread may still read it */
        s.stop = NULL;                         /* one quick call, even after a signal */
        uint64_t a[6] = {box, AT_BOX_BYTES, 0, 0, 0, 0}, ret;
        hs_thr_syscall(&s, SYS_munmap, a, &ret);
    }
    job->paused_us = s.paused_us;
    job->sigsys = s.sigsys;
    hs_thr_close(&s);
    return rc;
}

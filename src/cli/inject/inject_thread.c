/*
 * The engine of inject_thread.h: caves, stopping one thread, taking it to a clean point
 * (outside any interrupted system call), pointing it at a stub, and letting it go.
 */
#define _GNU_SOURCE
#include "inject_thread.h"
#include "base/fileio.h"
#include "inject_moved.h"
#include "inject_safe.h"
#include "inject_stub.h"
#include "ptrace_inject.h"

#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define THR_CAVE_MAX 1024         /* room for the stub image */
#define THR_STACK_NEED (64 << 10) /* stack a thread must have below its sp for the call */
#define THR_SYSCALL_MS 2000       /* a system call of the syscall stub */
#define THR_ENTRY_MS 200          /* a restarted system call's entry */
#define THR_TASKS_MAX 4096        /* threads hs_thr_call looks at */
/* A refused thread's run on to its next system calls (thr_safe_ahead): at most this much of
   its CPU time (a thread that makes no call), this long (a thread blocked or starved), and
   this many calls' entries (a thread whose calls are the allocator's own). */
#define THR_RUN_CPU_NS 50000000
#define THR_RUN_MS 500
#define THR_RUN_CALLS 16

static int64_t thr_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static void thr_nap_us(long us)
{
    struct timespec d = {0, us * 1000};
    nanosleep(&d, NULL);
}

/* ---- the cave ------------------------------------------------------------------------ */

/* For the executable mapping [lo, hi) at file offset off of path: where its PT_LOAD
 * segment's bytes end in memory (the cave starts there); 0 when not found. */
static uintptr_t thr_segment_end(pid_t pid, const char *path, uintptr_t lo, uintptr_t hi,
                                 uint64_t off)
{
    char full[PATH_MAX + 32];
    snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);
    int fd = open(full, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    Elf64_Ehdr eh;
    uintptr_t end = 0;
    if (pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) &&
        memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 && eh.e_ident[EI_CLASS] == ELFCLASS64 &&
        eh.e_phentsize == sizeof(Elf64_Phdr)) {
        for (unsigned i = 0; i < eh.e_phnum && !end; i++) {
            Elf64_Phdr ph;
            if (pread(fd, &ph, sizeof(ph), (off_t)(eh.e_phoff + i * sizeof(ph))) !=
                (ssize_t)sizeof(ph))
                break;
            uint64_t sz = ph.p_filesz > ph.p_memsz ? ph.p_filesz : ph.p_memsz;
            uint64_t segend = ph.p_offset + sz;
            if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X) || ph.p_offset > off + (hi - lo) ||
                segend < off || segend > off + (hi - lo))
                continue;
            end = lo + (uintptr_t)(segend - off);
        }
    }
    close(fd);
    return end;
}

/* Whether the n bytes at addr in the target (n a multiple of 8) may take img: each word
 * zero or img's already (a command killed while writing it left a part: ptrace writes a
 * word at a time). *ours: all of it is there. */
static bool thr_cave_free(pid_t pid, uintptr_t addr, const uint8_t *img, size_t n, bool *ours)
{
    uint8_t buf[THR_CAVE_MAX + 8];
    if (n > sizeof(buf) || hs_inject_mem(pid, addr, buf, n, false) != 0)
        return false;
    *ours = memcmp(buf, img, n) == 0;
    for (size_t i = 0; i < n; i += 8) {
        uint64_t w, v;
        memcpy(&w, buf + i, 8);
        memcpy(&v, img + i, 8);
        if (w != 0 && w != v)
            return false;
    }
    return true;
}

int hs_thr_open(hs_thr_t *s, pid_t pid)
{
    memset(s, 0, sizeof(*s));
    s->pid = pid;
    s->xroom = hs_stub_xsave_room();
    uint8_t img[THR_CAVE_MAX + 8];
    memset(img, 0, sizeof(img));
    size_t len = (hs_stub_image(img, THR_CAVE_MAX, s->off) + 7) & ~(size_t)7;
    char name[64], line[PATH_MAX + 128];
    snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(name, "r");
    if (!f)
        return -ESRCH;
    while (!s->cave && fgets(line, sizeof(line), f)) {
        unsigned long lo, hi, off;
        char perms[8];
        int pos = 0;
        if (sscanf(line, "%lx-%lx %7s %lx %*s %*s %n", &lo, &hi, perms, &off, &pos) < 4 ||
            pos == 0 || strcmp(perms, "r-xp") != 0 || line[pos] != '/')
            continue;
        char *path = line + pos;
        path[strcspn(path, "\n")] = '\0';
        uintptr_t end = thr_segment_end(pid, path, lo, hi, off);
        uintptr_t at = (end + 15) & ~(uintptr_t)15;
        bool ours = false;
        if (end && at + len <= hi && thr_cave_free(pid, at, img, len, &ours)) {
            s->cave = at;
            s->cave_written = ours;
        }
    }
    fclose(f);
    if (!s->cave)
        return -ENOSPC;
    return 0;
}

void hs_thr_close(hs_thr_t *s)
{
    hs_safe_close(s->safe);
    s->safe = NULL;
}

/* Writes the stub image into the cave through ptrace (the page is not writable: the
 * kernel copies it for this process). tid is seized and stopped. */
static int thr_cave_write(hs_thr_t *s, pid_t tid)
{
    uint8_t img[THR_CAVE_MAX + 8];
    size_t off[HS_STUB_COUNT];
    memset(img, 0, sizeof(img));
    size_t len = hs_stub_image(img, THR_CAVE_MAX, off);
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w;
        memcpy(&w, img + i, 8);
        if (ptrace(PTRACE_POKEDATA, tid, (void *)(s->cave + i), (void *)w) != 0)
            return -errno;
    }
    s->cave_written = true;
    return 0;
}

/* ---- one thread ------------------------------------------------------------------------ */

/* A thread held stopped since t0 (us) is let go now: the longest such hold is the pause
   attach reports (the wait for a thread to reach its stop is not one: it runs meanwhile). */
static void thr_held(hs_thr_t *s, int64_t t0)
{
    int64_t held = thr_now_us() - t0;
    if (held > s->paused_us)
        s->paused_us = held;
}

/* Waits up to ms for tid's next stop: 1 stopped (*st), -1 it exited or is gone, 0 not yet. */
static int thr_wait(pid_t tid, int *st, int ms)
{
    int64_t end = thr_now_us() + (int64_t)ms * 1000;
    for (;;) {
        pid_t r = waitpid(tid, st, __WALL | WNOHANG);
        if (r == tid)
            return WIFSTOPPED(*st) ? 1 : -1;
        if (r < 0 && errno != EINTR)
            return -1;
        if (thr_now_us() >= end)
            return 0;
        thr_nap_us(50);
    }
}

/* A signal-delivery stop: the signal is the program's, delivered now. */
static bool thr_is_signal(int st)
{
    int sig = WSTOPSIG(st);
    return (st >> 16) == 0 && sig != (SIGTRAP | 0x80) && sig != SIGTRAP;
}

/* Seizes tid and waits for it to stop. 0, or -ESRCH, -EPERM, -ETIMEDOUT (then detached). */
static int thr_stop(pid_t tid)
{
    if (ptrace(PTRACE_SEIZE, tid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD) != 0)
        return -errno;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
        return -ESRCH;
    for (int round = 0; round < 64; round++) {
        int st;
        int w = thr_wait(tid, &st, 2000);
        if (w < 0)
            return -ESRCH;
        if (w == 0)
            break;
        if ((st >> 16) == PTRACE_EVENT_STOP)
            return 0;
        ptrace(PTRACE_CONT, tid, 0, (void *)(long)(thr_is_signal(st) ? WSTOPSIG(st) : 0));
    }
    ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    int st;
    if (thr_wait(tid, &st, 10000) == 1) /* it is runnable: it gets there */
        ptrace(PTRACE_DETACH, tid, 0, 0);
    return -ETIMEDOUT;
}

static bool thr_restartable(const struct user_regs_struct *r)
{
    long ax = (long)r->rax;
    return (long)r->orig_rax >= 0 && (ax == -512 || ax == -513 || ax == -514 || ax == -516);
}

/* Takes a stopped tid to a clean point: not inside an interrupted system call. A thread
 * inside one is let into it again and taken at its entry (*entry true: rip is past the
 * syscall instruction, orig_rax its number). 0, or -ESRCH, -EAGAIN (still not clean). */
static int thr_clean(pid_t tid, struct user_regs_struct *r, bool *entry)
{
    *entry = false;
    for (int round = 0; round < 8; round++) {
        if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0)
            return -ESRCH;
        if (!thr_restartable(r))
            return 0;
        int sig = 0, st, w;
        for (;;) {
            if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)sig) != 0)
                return -ESRCH;
            w = thr_wait(tid, &st, THR_ENTRY_MS);
            if (w <= 0)
                break;
            if (WSTOPSIG(st) == (SIGTRAP | 0x80) && (st >> 16) == 0) {
                if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0)
                    return -ESRCH;
                *entry = true;
                return 0;
            }
            sig = thr_is_signal(st) ? WSTOPSIG(st) : 0;
        }
        if (w < 0)
            return -ESRCH;
        /* running user code (a handler, or its call did not restart): stop it again */
        if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
            return -ESRCH;
        for (;;) {
            w = thr_wait(tid, &st, 10000); /* it is runnable: it gets there */
            if (w <= 0)
                return w < 0 ? -ESRCH : -EAGAIN;
            if (WSTOPSIG(st) == (SIGTRAP | 0x80) && (st >> 16) == 0) {
                /* still under PTRACE_SYSCALL, it reached a call's entry first */
                if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0)
                    return -ESRCH;
                *entry = true;
                return 0;
            }
            if ((st >> 16) == PTRACE_EVENT_STOP)
                break;
            ptrace(PTRACE_CONT, tid, 0, (void *)(long)(thr_is_signal(st) ? WSTOPSIG(st) : 0));
        }
    }
    return -EAGAIN;
}

/* Points a clean tid at stub k with block words w[] (w[9], where it resumes, is filled
 * here). The block goes below the red zone; the thread returns to exactly r (a system
 * call taken at its entry is made again, from its first byte). */
static int thr_point(hs_thr_t *s, pid_t tid, struct user_regs_struct *r, bool entry,
                     hs_stub_kind_t k, uint64_t w[HS_STUB_BLOCK_WORDS])
{
    struct user_regs_struct n = *r;
    if (entry) {
        n.rip -= 2; /* the syscall instruction */
        n.rax = r->orig_rax;
    }
    w[HS_STUB_BLOCK_WORDS - 1] = n.rip;
    uintptr_t b = (n.rsp - HS_STUB_REDZONE - HS_STUB_BLOCK) & ~(uintptr_t)7;
    if (b + HS_STUB_BLOCK + HS_STUB_REDZONE != n.rsp)
        return -EINVAL; /* an rsp not 8-byte aligned: never in compiled code */
    if (!s->cave_written) {
        int rc = thr_cave_write(s, tid);
        if (rc != 0)
            return rc;
    }
    if (hs_inject_mem(s->pid, b, w, HS_STUB_BLOCK, true) != 0)
        return -EFAULT;
    n.rip = s->cave + s->off[k];
    n.rsp = b;
    n.orig_rax = (uint64_t)-1; /* no restart over the stub */
    return ptrace(PTRACE_SETREGS, tid, 0, &n) == 0 ? 0 : -ESRCH;
}

/* The offset just past the syscall stub's syscall instruction. */
static size_t thr_sys_end(void)
{
    size_t len;
    const uint8_t *c = hs_stub_code(HS_STUB_SYSCALL, &len);
    for (size_t i = 0; i + 1 < len; i++)
        if (c[i] == 0x0f && c[i + 1] == 0x05)
            return i + 2;
    return 0;
}

/* Follows tid, pointed at the syscall stub, to its call's exit and reads the result;
 * then lets it go. Every other stop on the way is passed on. */
static int thr_follow_syscall(hs_thr_t *s, pid_t tid, long nr, uint64_t *ret)
{
    uintptr_t at = s->cave + s->off[HS_STUB_SYSCALL] + thr_sys_end();
    int64_t end = thr_now_us() + (int64_t)THR_SYSCALL_MS * 1000;
    bool entered = false;
    int sig = 0;
    while (thr_now_us() < end) {
        int st;
        if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)sig) != 0)
            return -ESRCH;
        sig = 0;
        int w = thr_wait(tid, &st, THR_SYSCALL_MS);
        if (w < 0)
            return -ESRCH;
        if (w == 0)
            break;
        struct user_regs_struct r;
        if (WSTOPSIG(st) == (SIGTRAP | 0x80) && ptrace(PTRACE_GETREGS, tid, 0, &r) == 0 &&
            r.rip == at && (long)r.orig_rax == nr) {
            if (entered) {
                *ret = r.rax;
                ptrace(PTRACE_DETACH, tid, 0, 0);
                return 0;
            }
            entered = true;
        } else if (thr_is_signal(st)) {
            sig = WSTOPSIG(st);
        }
    }
    ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    int st;
    if (thr_wait(tid, &st, 2000) == 1)
        ptrace(PTRACE_DETACH, tid, 0, 0);
    return -ETIMEDOUT;
}

/* The threads of the target, leader first. */
static size_t thr_tasks(pid_t pid, pid_t *out, size_t cap)
{
    char dir[64];
    size_t n = 0;
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    out[n++] = pid;
    struct dirent *e;
    while (n < cap && (e = readdir(d)) != NULL) {
        pid_t tid = (pid_t)atoi(e->d_name);
        if (tid > 0 && tid != pid)
            out[n++] = tid;
    }
    closedir(d);
    return n;
}

int hs_thr_syscall(hs_thr_t *s, long nr, const uint64_t a[6], uint64_t *ret)
{
    pid_t tids[64];
    int rc = -ESRCH;
    /* Threads in turn until one is pointed at the stub (10 s at most): on a loaded machine
       a thread can take long to reach its stop or its call's entry. */
    for (int64_t end = thr_now_us() + 10000000; thr_now_us() < end; thr_nap_us(1000)) {
        size_t n = thr_tasks(s->pid, tids, 64);
        for (size_t i = 0; i < n; i++) {
            if (s->stop && *s->stop)
                return -EINTR;
            rc = thr_stop(tids[i]);
            if (rc == -ESRCH || rc == -ETIMEDOUT)
                continue;
            if (rc != 0)
                return rc;
            struct user_regs_struct r;
            bool entry;
            int64_t t0 = thr_now_us();
            rc = thr_clean(tids[i], &r, &entry);
            if (entry || rc != 0)
                t0 = thr_now_us(); /* it ran to its system call's entry */
            uint64_t w[HS_STUB_BLOCK_WORDS] = {(uint64_t)nr, a[0], a[1], a[2], a[3],
                                               a[4],         a[5], 0,    0,    0};
            if (rc == 0)
                rc = thr_point(s, tids[i], &r, entry, HS_STUB_SYSCALL, w);
            if (rc == 0) {
                thr_held(s, t0); /* (the syscall's own run, after it, is not a hold) */
                return thr_follow_syscall(s, tids[i], nr, ret); /* once pointed: no retry */
            }
            ptrace(PTRACE_DETACH, tids[i], 0, 0);
            thr_held(s, t0);
            if (rc != -ESRCH && rc != -EAGAIN)
                return rc;
        }
        if (n == 0 || kill(s->pid, 0) != 0) {
            s->died = true;
            return -ESRCH;
        }
    }
    return rc;
}

/* Whether tid's stack has room for the call below its sp. */
static bool thr_stack_room(pid_t pid, uintptr_t sp)
{
    char name[64], line[512];
    snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(name, "r");
    bool ok = false;
    if (!f)
        return false;
    while (fgets(line, sizeof(line), f)) {
        unsigned long lo, hi;
        if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 && sp > lo && sp <= hi) {
            ok = sp - lo >= THR_STACK_NEED || strstr(line, "[stack]") != NULL;
            break;
        }
    }
    fclose(f);
    return ok;
}

/* tid runs the call stub: followed to its clone (the thread pthread_create makes starts
 * traced), then let go. A signal meanwhile is delivered; no clone within 2 s (a thread
 * that could not be created, or one waiting for a lock): let go all the same. */
static void thr_follow_clone(hs_thr_t *s, pid_t tid)
{
    int sig = 0;
    ptrace(PTRACE_SETOPTIONS, tid, 0, (void *)(long)(PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE));
    int64_t end = thr_now_us() + 2000000;
    while (thr_now_us() < end) {
        int st;
        if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)sig) != 0)
            return;
        sig = 0;
        int w = thr_wait(tid, &st, 2000);
        if (w < 0)
            return;
        if (w == 0)
            break;
        unsigned long msg = 0;
        if ((st >> 16) == PTRACE_EVENT_CLONE && ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) == 0) {
            s->child = (pid_t)msg;
            ptrace(PTRACE_DETACH, tid, 0, 0);
            int cst;
            if (thr_wait(s->child, &cst, 2000) == 1) { /* its first stop */
                /* not its own clones: heapsift's threads run untraced */
                ptrace(PTRACE_SETOPTIONS, s->child, 0, (void *)(long)PTRACE_O_TRACESYSGOOD);
                ptrace(PTRACE_CONT, s->child, 0, 0);
            }
            return;
        }
        if (thr_is_signal(st))
            sig = WSTOPSIG(st);
    }
    ptrace(PTRACE_INTERRUPT, tid, 0, 0);
    int st;
    if (thr_wait(tid, &st, 2000) == 1)
        ptrace(PTRACE_DETACH, tid, 0, (void *)(long)(thr_is_signal(st) ? WSTOPSIG(st) : 0));
}

int hs_thr_child_poll(hs_thr_t *s, int *st)
{
    if (!s->child)
        return -1;
    for (;;) {
        pid_t r = waitpid(s->child, st, __WALL | WNOHANG);
        if (r == 0)
            return 0;
        if (r != s->child || !WIFSTOPPED(*st)) {
            bool ended = r == s->child;
            s->child = 0;
            return ended ? 1 : -1;
        }
        int sig = WSTOPSIG(*st);
        struct user_regs_struct r2;
        if ((*st >> 16) == 0 && sig == SIGSYS && ptrace(PTRACE_GETREGS, s->child, 0, &r2) == 0) {
            r2.rax = (uint64_t)-ENOSYS; /* a seccomp trap of a call of ours: not the program's */
            ptrace(PTRACE_SETREGS, s->child, 0, &r2);
            s->sigsys++;
            sig = 0;
        } else if (!thr_is_signal(*st)) {
            sig = 0;
        }
        ptrace(PTRACE_CONT, s->child, 0, (void *)(long)sig);
    }
}

void hs_thr_child_release(hs_thr_t *s)
{
    if (!s->child)
        return;
    int st;
    if (ptrace(PTRACE_INTERRUPT, s->child, 0, 0) == 0 && thr_wait(s->child, &st, 2000) == 1)
        ptrace(PTRACE_DETACH, s->child, 0, 0);
    s->child = 0;
}

/* Whether tid has ended: gone from /proc, or a zombie (Z, X) there. A thread that has
 * ended but is not reaped yet (in the middle of its exit, or kept by a tracer of its own
 * that has not waited for it) refuses PTRACE_SEIZE with EPERM, as a permission would. */
static bool thr_ended(pid_t pid, pid_t tid)
{
    char path[64], buf[512];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    if (hs_read_text(path, buf, sizeof(buf)) < 0)
        return true;
    const char *p = strrchr(buf, ')'); /* the name may hold anything, ')' included */
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* Whether stop st of tid is a system call's entry (under PTRACE_O_TRACESYSGOOD). */
static bool thr_at_entry(pid_t tid, int st)
{
    struct __ptrace_syscall_info si;
    return WSTOPSIG(st) == (SIGTRAP | 0x80) && (st >> 16) == 0 &&
           ptrace(PTRACE_GET_SYSCALL_INFO, tid, (void *)sizeof(si), &si) > 0 &&
           si.op == PTRACE_SYSCALL_INFO_ENTRY;
}

/* The bounds of one refused thread's run (thr_safe_ahead): its CPU time at the start (ns),
   the end (us), the entries left. */
typedef struct {
    pid_t pid;
    uint64_t cpu0;
    int64_t end;
    int calls;
} thr_run_t;

static bool thr_run_over(const thr_run_t *b, pid_t tid)
{
    uint64_t ns;
    return b->calls <= 0 || thr_now_us() >= b->end ||
           (hs_moved_cpu_ns(b->pid, tid, &ns) && ns - b->cpu0 >= THR_RUN_CPU_NS);
}

/* Stops tid, let run under PTRACE_SYSCALL, where it is: 1 at a call's entry it reached
 * first, 0 anywhere else (the interrupt's stop, or a call's exit or a group stop, which
 * take its place), -EAGAIN it did not stop in 10 s, -ESRCH gone. A signal's delivery on
 * the way is let through, and the thread interrupted again. */
static int thr_run_stop(pid_t tid)
{
    int st, w;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
        return -ESRCH;
    for (int round = 0; round < 64; round++) {
        if ((w = thr_wait(tid, &st, 10000)) != 1) /* it is runnable: it gets there */
            return w < 0 ? -ESRCH : -EAGAIN;
        if (thr_at_entry(tid, st))
            return 1;
        if (!thr_is_signal(st))
            return 0;
        if (ptrace(PTRACE_CONT, tid, 0, (void *)(long)WSTOPSIG(st)) != 0 ||
            ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0)
            return -ESRCH;
    }
    return -EAGAIN;
}

/* Lets tid, stopped, run on to its next system call's entry (a call's exit and signals on
 * the way are passed): 1 stopped there, 0 stopped anywhere else (its run's bounds are
 * over, or a group stop), -EAGAIN or -ESRCH as thr_run_stop. */
static int thr_run_to_call(pid_t tid, thr_run_t *b)
{
    int sig = 0, st, w;
    for (;;) {
        if (ptrace(PTRACE_SYSCALL, tid, 0, (void *)(long)sig) != 0)
            return -ESRCH;
        sig = 0;
        while ((w = thr_wait(tid, &st, 1)) == 0 && !thr_run_over(b, tid))
            ;
        if (w < 0)
            return -ESRCH;
        if (w == 0)
            return thr_run_stop(tid);
        if (thr_at_entry(tid, st)) {
            b->calls--;
            return 1;
        }
        if ((st >> 16) != 0)
            return 0;
        if (thr_is_signal(st))
            sig = WSTOPSIG(st);
    }
}

/* Whether tid, stopped, is at a safe point where it is: 1 (*r, *entry as thr_clean gives
 * them), 0 (s->why says why). *t0: when its hold began (later once it ran to an entry). */
static int thr_safe_here(hs_thr_t *s, pid_t tid, struct user_regs_struct *r, bool *entry,
                         int64_t *t0)
{
    int safe = hs_safe_check(s->safe, tid, s->why, sizeof(s->why));
    if (safe != 1)
        return 0;
    int rc = thr_clean(tid, r, entry);
    if (*entry) {
        thr_held(s, *t0);
        *t0 = thr_now_us(); /* it ran to its system call's entry */
    }
    if (rc == 0 && *entry) /* a handler may have run meanwhile */
        return hs_safe_check(s->safe, tid, s->why, sizeof(s->why)) == 1;
    return rc == 0;
}

/* tid, refused where it was stopped running the program's code, runs on to the entries of
 * its next system calls until one is a safe point, within thr_run_t's bounds: a program
 * busy in the allocator makes its own calls outside it, so a search no longer needs many
 * random stops to find it there. 1 safe (*r, *entry), 0 not (stopped), -1 gone or not
 * stopped. */
static int thr_safe_ahead(hs_thr_t *s, pid_t tid, struct user_regs_struct *r, bool *entry,
                          int64_t *t0)
{
    thr_run_t b = {s->pid, 0, thr_now_us() + (int64_t)THR_RUN_MS * 1000, THR_RUN_CALLS};
    if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0 || thr_restartable(r) ||
        !hs_moved_cpu_ns(s->pid, tid, &b.cpu0))
        return 0; /* blocked in a system call: thr_clean's, not this */
    for (;;) {
        thr_held(s, *t0);
        int k = thr_run_to_call(tid, &b);
        *t0 = thr_now_us();
        if (k < 0)
            return -1;
        if (k == 0)
            return thr_safe_here(s, tid, r, entry, t0);
        *entry = true;
        if (ptrace(PTRACE_GETREGS, tid, 0, r) != 0)
            return -1;
        if (hs_safe_check(s->safe, tid, s->why, sizeof(s->why)) == 1)
            return 1;
        if (thr_run_over(&b, tid))
            return 0;
    }
}

/* One try on tid: stopped, checked (and run on to a safe point ahead), pointed at the call
 * stub, let go. 1 done, 0 not at a safe point or ended (let go untouched; a refusal goes
 * in the ledger mv), or -errno. */
static int thr_call_on(hs_thr_t *s, pid_t tid, uint64_t w[HS_STUB_BLOCK_WORDS], hs_moved_t *mv)
{
    int rc = thr_stop(tid);
    if (rc == -EPERM && thr_ended(s->pid, tid))
        return 0;
    if (rc == -EPERM)
        snprintf(s->why, sizeof(s->why), "thread %d cannot be stopped (ptrace: %s)", (int)tid,
                 strerror(EPERM));
    if (rc != 0)
        return rc == -ESRCH || rc == -ETIMEDOUT ? 0 : rc;
    s->tries++;
    struct user_regs_struct r;
    bool entry = false;
    int64_t t0 = thr_now_us();
    int safe = thr_safe_here(s, tid, &r, &entry, &t0);
    if (safe == 0 && !entry)
        safe = thr_safe_ahead(s, tid, &r, &entry, &t0);
    if (safe < 0) {
        ptrace(PTRACE_DETACH, tid, 0, 0); /* (fails unless it stopped after all) */
        return 0;
    }
    if (safe == 1 && !thr_stack_room(s->pid, r.rsp)) {
        snprintf(s->why, sizeof(s->why), "thread %d has too little stack left", (int)tid);
        safe = 0;
    }
    rc = safe == 1 ? thr_point(s, tid, &r, entry, HS_STUB_CALL, w) : 0;
    if (safe != 1)
        hs_moved_refused(mv, tid); /* while stopped: where it is */
    thr_held(s, t0);
    if (safe == 1 && rc == 0)
        thr_follow_clone(s, tid);
    else
        ptrace(PTRACE_DETACH, tid, 0, 0);
    return rc < 0 ? rc : safe == 1;
}

/* hs_thr_call's search: its bounds (us), its stops' bound, the last stop of a thread that
   could have moved, the ledger of refusals, the threads left alone. */
typedef struct {
    int64_t end, last, ms, moved;
    unsigned stops, skipped;
    hs_moved_t *mv;
} thr_search_t;

/* Whether the search of hs_thr_call goes on at now (us): until max_ms, for ms and at least
   stops stops, but not for ms after the last stop of a thread that could have moved. */
static bool thr_searching(const hs_thr_t *s, const thr_search_t *q, int64_t now)
{
    return now < q->last && now - q->moved < q->ms && (now < q->end || s->tries < q->stops);
}

/* One pass over the threads: a thread refused before is stopped again only once it has
   moved (inject_moved.h). 1 to go on (*stopped: how many were stopped), 0 done (a thread
   was pointed), or -errno. */
static int thr_pass(hs_thr_t *s, thr_search_t *q, uint64_t w[HS_STUB_BLOCK_WORDS],
                    unsigned *stopped)
{
    pid_t tids[THR_TASKS_MAX];
    size_t n = thr_tasks(s->pid, tids, THR_TASKS_MAX);
    if (n == 0) {
        s->died = true;
        return -ESRCH;
    }
    *stopped = 0;
    for (size_t i = 0; i < n && thr_searching(s, q, thr_now_us()); i++) {
        if (s->stop && *s->stop)
            return -EINTR;
        if (!hs_moved_since(q->mv, tids[i])) {
            q->skipped++;
            continue;
        }
        q->moved = thr_now_us();
        (*stopped)++;
        int rc = thr_call_on(s, tids[i], w, q->mv);
        if (rc != 0)
            return rc > 0 ? 0 : rc;
    }
    return 1;
}

int hs_thr_call(hs_thr_t *s, uintptr_t fn, const uint64_t a[6], uintptr_t res, int ms,
                unsigned stops, int max_ms)
{
    if (!s->safe && !(s->safe = hs_safe_open(s->pid, s->why, sizeof(s->why))))
        return -ENOTSUP;
    uint64_t w[HS_STUB_BLOCK_WORDS] = {fn, a[0], a[1], a[2], a[3], a[4], a[5], res, s->xroom, 0};
    int64_t t0 = thr_now_us();
    thr_search_t q = {.end = t0 + (int64_t)ms * 1000,
                      .last = t0 + (int64_t)max_ms * 1000,
                      .ms = (int64_t)ms * 1000,
                      .moved = t0,
                      .stops = stops + s->tries,
                      .mv = hs_moved_open(s->pid)};
    int rc = 1;
    while (rc == 1 && thr_searching(s, &q, thr_now_us())) {
        unsigned stopped = 0;
        rc = thr_pass(s, &q, w, &stopped);
        if (rc == 1) /* a pass that stopped no one: the threads are starved or blocked */
            thr_nap_us(stopped ? 1000 : 4000);
    }
    hs_moved_close(q.mv);
    s->unmoved = q.skipped;
    return rc == 1 ? -ETIMEDOUT : rc;
}

/*
 * ptrace injection (x86-64), for `heapsift attach` (attach.c owns the verb and what is
 * called; docs/attach.md tells the whole story):
 *   - stop: PTRACE_SEIZE + PTRACE_INTERRUPT every thread of /proc/PID/task, until a pass
 *     finds no new one; a signal that arrives meanwhile is kept and delivered at detach;
 *   - remote calls on one stopped thread: registers and the stack bytes used saved,
 *     arguments in registers and strings on the stack below the red zone, a return
 *     address of 0, and the SIGSEGV at pc 0 that ends the call; then everything restored.
 *     Each call has a time limit: a stopped thread may hold the allocator's or the
 *     loader's lock, so when it expires the other threads are let go and the call is
 *     waited for;
 *   - the target's memory (process_vm_readv/writev), its maps, and the dynamic symbols of
 *     a mapped file (read through /proc/PID/root).
 * It never leaves the target stopped or traced on a path it controls: every error detaches
 * what was seized.
 */
#define _GNU_SOURCE
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
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define INJECT_CALL_MS 5000 /* a remote call's limit before the other threads are let go */
#define INJECT_MAX_THREADS 4096

int64_t hs_inject_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- stopping and resuming threads ---------------------------------------------------- */

static hs_inject_thread_t *inject_find(hs_inject_sess_t *s, pid_t tid)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i].tid == tid)
            return &s->t[i];
    return NULL;
}

/* Waits (up to ms) for tid's next stop; 1 stopped (*st), 0 timed out, -1 exited (*st its
 * wait status), -2 gone without a status. */
static int inject_wait(pid_t tid, int *st, int ms)
{
    int64_t end = hs_inject_now_ms() + ms;
    for (;;) {
        pid_t r = waitpid(tid, st, __WALL | WNOHANG);
        if (r == tid)
            return WIFSTOPPED(*st) ? 1 : -1;
        if (r < 0 && errno != EINTR)
            return -2;
        if (hs_inject_now_ms() >= end)
            return 0;
        struct timespec d = {0, 200000};
        nanosleep(&d, NULL);
    }
}

/* The thread has exited (a zombie, or gone): a thread-group leader's exit is reported only
 * once its other traced threads are reaped, so a wait for it alone would not end. */
static bool inject_thread_gone(pid_t pid, pid_t tid)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return true;
    ssize_t n = read(fd, buf, sizeof(buf) - 1);
    close(fd);
    if (n <= 0)
        return true;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
    return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

/* The target is dying: reaps every seized thread's exit (they were killed with the group),
 * keeping the leader's wait status for the message. */
static void inject_reap(hs_inject_sess_t *s)
{
    s->died = true;
    for (int round = 0; round < 200; round++) {
        bool left = false;
        for (size_t i = 0; i < s->n; i++) {
            hs_inject_thread_t *t = &s->t[i];
            int st;
            if (!t->seized)
                continue;
            pid_t r = waitpid(t->tid, &st, __WALL | WNOHANG);
            if (r == t->tid && WIFSTOPPED(st)) {
                ptrace(PTRACE_CONT, t->tid, 0, 0); /* on its way out */
                left = true;
            } else if (r == t->tid || r < 0) {
                t->seized = false;
                if (r == t->tid && t->tid == s->pid)
                    s->status = st;
            } else {
                left = true;
            }
        }
        if (!left)
            return;
        struct timespec d = {0, 10000000};
        nanosleep(&d, NULL);
    }
}

/* Waits for the stop PTRACE_INTERRUPT asked for, keeping any signal that comes first. */
static int inject_wait_interrupt(const hs_inject_sess_t *s, hs_inject_thread_t *t)
{
    for (int round = 0; round < 64; round++) {
        int st;
        int r = inject_wait(t->tid, &st, 2000);
        if (r < 0 || (r == 0 && inject_thread_gone(s->pid, t->tid)))
            return -ESRCH;
        if (r == 0)
            return -ETIMEDOUT;
        if ((st >> 16) == PTRACE_EVENT_STOP)
            return 0;
        int sig = WSTOPSIG(st);
        if (sig != SIGTRAP)
            t->sig = sig; /* suppressed now, delivered at detach */
        ptrace(PTRACE_CONT, t->tid, 0, 0);
    }
    return -EAGAIN;
}

static void inject_detach_one(hs_inject_thread_t *t)
{
    if (!t->seized)
        return;
    ptrace(PTRACE_DETACH, t->tid, 0, (void *)(long)t->sig);
    t->seized = false;
}

static void inject_detach_all(hs_inject_sess_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        inject_detach_one(&s->t[i]);
}

/* Seizes one thread and asks it to stop (PTRACE_INTERRUPT), without waiting: the stops
 * of all threads then overlap (one at a time, 16 busy threads on 2 CPUs took 8 ms each).
 * 0, -ESRCH (gone), or a refusal's errno (EPERM). */
static int inject_seize_one(hs_inject_sess_t *s, pid_t tid)
{
    if (s->n == INJECT_MAX_THREADS)
        return -E2BIG;
    hs_inject_thread_t *t = &s->t[s->n];
    memset(t, 0, sizeof(*t));
    t->tid = tid;
    if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0)
        return errno == ESRCH ? -ESRCH : -errno;
    t->seized = true;
    s->n++;
    if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) {
        t->stopped = true; /* gone: nothing to wait for */
        return -ESRCH;
    }
    return 0;
}

/* Waits for the stops asked of every seized thread. 0, or an error of inject_wait_interrupt. */
static int inject_wait_all(hs_inject_sess_t *s)
{
    for (size_t i = 0; i < s->n; i++) {
        hs_inject_thread_t *t = &s->t[i];
        if (t->stopped)
            continue;
        t->stopped = true;
        int rc = inject_wait_interrupt(s, t);
        if (rc == -ESRCH)
            t->seized = false; /* it exited: nothing to detach */
        else if (rc != 0)
            return rc;
    }
    return 0;
}

/* Stops every thread (one = the thread-group leader only), until no new one appears. */
static int inject_stop(hs_inject_sess_t *s, bool one)
{
    char dir[64];
    snprintf(dir, sizeof(dir), "/proc/%d/task", (int)s->pid);
    for (bool fresh = true; fresh;) {
        fresh = false;
        DIR *d = opendir(dir);
        if (!d)
            return -ESRCH;
        struct dirent *e;
        int rc = 0;
        while (rc == 0 && (e = readdir(d)) != NULL) {
            pid_t tid = (pid_t)atoi(e->d_name);
            if (tid <= 0 || inject_find(s, tid) || (one && tid != s->pid))
                continue;
            rc = inject_seize_one(s, tid);
            if (rc == -ESRCH)
                rc = 0; /* a thread that ended meanwhile */
            fresh = true;
        }
        closedir(d);
        if (rc == 0)
            rc = inject_wait_all(s);
        if (rc != 0)
            return rc;
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->t[i].seized)
            return 0;
    return -ESRCH;
}

/* ---- the target's memory, maps and symbols -------------------------------------------- */

int hs_inject_mem(pid_t pid, uintptr_t addr, void *buf, size_t n, bool write)
{
    struct iovec local = {buf, n}, remote = {(void *)addr, n};
    ssize_t k = write ? process_vm_writev(pid, &local, 1, &remote, 1, 0)
                      : process_vm_readv(pid, &local, 1, &remote, 1, 0);
    return k == (ssize_t)n ? 0 : -EIO;
}

bool hs_inject_map_find(pid_t pid, const char *prefix, uintptr_t *base, char *path, size_t cap)
{
    char name[64], line[PATH_MAX + 128];
    snprintf(name, sizeof(name), "/proc/%d/maps", (int)pid);
    FILE *f = fopen(name, "r");
    bool found = false;
    if (!f)
        return false;
    while (!found && fgets(line, sizeof(line), f)) {
        unsigned long lo, off;
        int pos = 0;
        if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %n", &lo, &off, &pos) < 2 || pos == 0)
            continue;
        char *p = line + pos;
        p[strcspn(p, "\n")] = '\0';
        const char *b = strrchr(p, '/');
        if (off != 0 || !b || strncmp(b + 1, prefix, strlen(prefix)) != 0)
            continue;
        if (strstr(p, " (deleted)"))
            continue;
        *base = lo;
        snprintf(path, cap, "%s", p);
        found = true;
    }
    fclose(f);
    return found;
}

static bool inject_pread(int fd, void *buf, size_t n, uint64_t off)
{
    return pread(fd, buf, n, (off_t)off) == (ssize_t)n;
}

/* The value of the dynamic symbol name in ELF file path (a definition, its default
 * version preferred): true when found. */
static bool inject_elf_sym(const char *path, const char *name, uint64_t *value)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    Elf64_Ehdr eh;
    bool found = false;
    if (fd < 0)
        return false;
    Elf64_Shdr *sh = NULL;
    char *str = NULL;
    if (!inject_pread(fd, &eh, sizeof(eh), 0) || memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
        eh.e_shentsize != sizeof(Elf64_Shdr) || eh.e_shnum == 0)
        goto out;
    sh = calloc(eh.e_shnum, sizeof(*sh));
    if (!sh || !inject_pread(fd, sh, eh.e_shnum * sizeof(*sh), eh.e_shoff))
        goto out;
    for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum)
            continue;
        const Elf64_Shdr *ss = &sh[sh[i].sh_link];
        free(str);
        str = malloc(ss->sh_size + 1);
        if (!str || !inject_pread(fd, str, ss->sh_size, ss->sh_offset))
            goto out;
        str[ss->sh_size] = '\0';
        size_t nsym = sh[i].sh_size / sizeof(Elf64_Sym);
        uint16_t ver = 0;
        const Elf64_Shdr *vs = NULL;
        for (unsigned k = 0; k < eh.e_shnum; k++)
            if (sh[k].sh_type == SHT_GNU_versym)
                vs = &sh[k];
        for (size_t k = 0; k < nsym; k++) {
            Elf64_Sym sym;
            if (!inject_pread(fd, &sym, sizeof(sym), sh[i].sh_offset + k * sizeof(sym)))
                break;
            if (sym.st_shndx == SHN_UNDEF || sym.st_name >= ss->sh_size ||
                strcmp(str + sym.st_name, name) != 0)
                continue;
            if (vs && inject_pread(fd, &ver, sizeof(ver), vs->sh_offset + k * sizeof(ver)) &&
                (ver & 0x8000) && found)
                continue; /* a hidden (non-default) version: only if nothing better */
            *value = sym.st_value;
            found = true;
            if (!(ver & 0x8000))
                break;
        }
    }
out:
    free(str);
    free(sh);
    close(fd);
    return found;
}

bool hs_inject_remote_sym(pid_t pid, const char *prefix, const char *name, uintptr_t *addr)
{
    char path[PATH_MAX], full[PATH_MAX + 32];
    uintptr_t base;
    uint64_t v;
    if (!hs_inject_map_find(pid, prefix, &base, path, sizeof(path)))
        return false;
    snprintf(full, sizeof(full), "/proc/%d/root%s", (int)pid, path);
    if (!inject_elf_sym(full, name, &v))
        return false;
    *addr = base + v; /* shared objects: p_vaddr of the first PT_LOAD is 0 */
    return true;
}

/* ---- remote calls --------------------------------------------------------------------- */

/* Lets every seized thread but keep go (detached, their signals delivered). */
static void inject_release_others(hs_inject_sess_t *s, const hs_inject_thread_t *keep)
{
    for (size_t i = 0; i < s->n; i++)
        if (&s->t[i] != keep)
            inject_detach_one(&s->t[i]);
}

/* SECCOMP_RET_TRAP: the system call was skipped, rax rolled back to its number, SIGSYS
 * sent. The signal is ours, not the program's: dropped, and the call sees -ENOSYS. */
static void inject_sigsys(hs_inject_sess_t *s, hs_inject_thread_t *t)
{
    struct user_regs_struct r;
    s->sigsys++;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) == 0) {
        r.rax = (uint64_t)-ENOSYS;
        ptrace(PTRACE_SETREGS, t->tid, 0, &r);
    }
}

/* Runs the call's function to its return (the SIGSEGV at pc 0). 0, or -ESRCH (the
 * target died), -EFAULT (it faulted elsewhere: a crash in the call). */
static int inject_run_call(hs_inject_sess_t *s, hs_inject_thread_t *t, struct user_regs_struct *r)
{
    int64_t start = hs_inject_now_ms();
    bool released = false;
    if (ptrace(PTRACE_CONT, t->tid, 0, 0) != 0)
        return -ESRCH;
    for (;;) {
        int st;
        int w = inject_wait(t->tid, &st, 1000);
        if (w == -1 && t->tid == s->pid)
            s->status = st;
        if (w < 0)
            t->seized = false; /* its exit was reaped */
        if (w < 0 || (w == 0 && inject_thread_gone(s->pid, t->tid))) {
            inject_reap(s);
            return -ESRCH;
        }
        if (w == 0) {
            int64_t waited = hs_inject_now_ms() - start;
            if (!released && waited >= INJECT_CALL_MS) {
                fprintf(stderr,
                        "heapsift: the call in thread %d has not returned after %d s: another "
                        "thread may hold a lock it needs; letting the other threads run\n",
                        (int)t->tid, INJECT_CALL_MS / 1000);
                inject_release_others(s, t);
                released = true;
            } else if (released && waited % 10000 < 1000) {
                fprintf(stderr, "heapsift: still waiting for thread %d (%lld s)\n", (int)t->tid,
                        (long long)(waited / 1000));
            }
            continue;
        }
        int sig = WSTOPSIG(st);
        if ((st >> 16) == 0 && sig == SIGSEGV && ptrace(PTRACE_GETREGS, t->tid, 0, r) == 0 &&
            r->rip == 0)
            return 0;
        if ((st >> 16) == 0 && (sig == SIGSEGV || sig == SIGBUS || sig == SIGILL))
            return -EFAULT;
        if ((st >> 16) == 0 && sig == SIGSYS)
            inject_sigsys(s, t); /* a seccomp filter trapped a system call of ours */
        else if ((st >> 16) == 0 && sig != SIGTRAP)
            t->sig = sig; /* for the program: delivered at detach */
        ptrace(PTRACE_CONT, t->tid, 0, 0);
    }
}

int hs_inject_call(hs_inject_sess_t *s, hs_inject_thread_t *t, hs_inject_call_t *c)
{
    struct user_regs_struct saved, r;
    struct user_fpregs_struct fp;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &saved) != 0 ||
        ptrace(PTRACE_GETFPREGS, t->tid, 0, &fp) != 0)
        return -ESRCH;
    /* Below the red zone: the data, then 16-byte aligned room, then the return address,
     * so that rsp % 16 == 8 at the function's entry as after a call. */
    uintptr_t data = (saved.rsp - 256 - c->len) & ~(uintptr_t)15;
    uintptr_t sp = data - 64;
    size_t span = saved.rsp - 128 - (sp - 8);
    uint8_t *orig = malloc(span);
    if (!orig)
        return -ENOMEM;
    int rc = hs_inject_mem(s->pid, sp - 8, orig, span, false);
    uint64_t zero = 0;
    if (rc == 0 && c->len)
        rc = hs_inject_mem(s->pid, data, (void *)c->data, c->len, true);
    if (rc == 0)
        rc = hs_inject_mem(s->pid, sp - 8, &zero, sizeof(zero), true);
    if (rc != 0) {
        free(orig);
        return -EFAULT;
    }
    c->data_addr = data;
    r = saved;
    unsigned long long *regs[6] = {&r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9};
    for (int i = 0; i < c->na; i++)
        *regs[i] = c->a[i];
    r.rip = c->fn;
    r.rsp = sp - 8;
    r.rax = 0;
    r.orig_rax = (uint64_t)-1; /* no syscall restart over our call */
    rc = ptrace(PTRACE_SETREGS, t->tid, 0, &r) == 0 ? inject_run_call(s, t, &r) : -ESRCH;
    if (rc == 0) {
        c->ret = r.rax;
        if (c->back && c->len)
            hs_inject_mem(s->pid, data, c->back, c->len, false);
    }
    if (rc != -ESRCH) {
        hs_inject_mem(s->pid, sp - 8, orig, span, true);
        ptrace(PTRACE_SETREGS, t->tid, 0, &saved);
        ptrace(PTRACE_SETFPREGS, t->tid, 0, &fp);
    }
    free(orig);
    return rc;
}

hs_inject_thread_t *hs_inject_pick(hs_inject_sess_t *s)
{
    hs_inject_thread_t *first = NULL;
    for (size_t i = 0; i < s->n; i++) {
        if (!s->t[i].seized)
            continue;
        if (s->t[i].tid == s->pid)
            return &s->t[i];
        if (!first)
            first = &s->t[i];
    }
    return first;
}

int hs_inject_open(hs_inject_sess_t *s, pid_t pid, bool one)
{
    memset(s, 0, sizeof(*s));
    s->pid = pid;
    s->status = -1;
    s->t = calloc(INJECT_MAX_THREADS, sizeof(*s->t));
    if (!s->t)
        return -ENOMEM;
    int rc = inject_stop(s, one);
    if (rc != 0) {
        inject_detach_all(s);
        free(s->t);
        s->t = NULL;
    }
    return rc;
}

void hs_inject_close(hs_inject_sess_t *s)
{
    inject_detach_all(s);
    free(s->t);
    s->t = NULL;
}

bool hs_inject_data_addr(const hs_inject_thread_t *t, size_t len, uint64_t *addr)
{
    struct user_regs_struct r;
    if (ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0)
        return false;
    *addr = (r.rsp - 256 - len) & ~(uint64_t)15; /* as hs_inject_call places it */
    return true;
}

bool hs_inject_get_pc(const hs_inject_thread_t *t, uint64_t *pc)
{
    struct user_regs_struct r;
    if (!t->seized || ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0)
        return false;
    *pc = r.rip;
    return true;
}

bool hs_inject_set_pc(const hs_inject_thread_t *t, uint64_t pc)
{
    struct user_regs_struct r;
    if (!t->seized || ptrace(PTRACE_GETREGS, t->tid, 0, &r) != 0)
        return false;
    r.rip = pc;
    return ptrace(PTRACE_SETREGS, t->tid, 0, &r) == 0;
}

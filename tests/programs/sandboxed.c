/*
 * sandboxed: a process that sandboxes itself after start, as a browser's content process
 * does, for sandbox_spool.sh. It allocates at known sites, then installs a seccomp filter
 * that refuses what a sandbox refuses (clone, clone3, fork, unshare, open, openat, creat,
 * rename*, unlink*, getgroups, process_vm_readv): with EPERM, or with --trap by SIGSYS
 * (SECCOMP_RET_TRAP), whose handler prints one "Sandbox: seccomp sandbox violation" line
 * per call, as Firefox's does, and makes the call fail with ENOSYS. After the filter a
 * thread started before it and the main thread allocate at more sites, and some blocks are
 * freed; then it returns from main (exit, so the exit profile is attempted under the
 * filter). With --fork the process forks first (a fork server) and the child does all of
 * that; the parent waits for it and exits.
 *
 * Live at exit, per process that sandboxes itself: before_filter 10 x 1000 B, in_thread
 * 5 x 3000 B, after_filter 7 x 2000 B; freed_after 4 x 500 B are freed. With --fork the
 * parent holds before_fork 3 x 4000 B, which its child inherits too.
 *
 * With --clone the process makes its child by a raw clone (the clone system call itself,
 * as Chromium's zygote makes its renderers: no fork handler runs), and the child installs
 * the filter first, then allocates in_clone 6 x 5000 B and frees freed_after 4 x 500 B:
 * its first sample comes under the filter. With --kill too, the child then says so on a
 * pipe and waits, and its parent kills it (SIGKILL), as a browser ends its renderers.
 *
 * With --newpid the clone makes the child the init of a new PID namespace (CLONE_NEWPID,
 * root only), as Chromium's zygote makes each renderer: run as the init of a namespace
 * itself (unshare -pf), parent and child then both have pid 1.
 *
 * With --vfork the process first makes a vfork child (sharing its memory, as posix_spawn's
 * and Chromium's chroot helper do) whose exec fails, so that it ends by _exit.
 *
 * With --outlive PATH (root only: CLONE_NEWPID) the process forks a helper that unshares
 * its PID namespace and forks again: that grandchild, a forked child (its fork handlers
 * run) and the init of a new PID namespace, opens PATH (a FIFO), waits for one byte there,
 * then lives the sandboxed life; the process exits as soon as the grandchild says on a pipe
 * that its fork returned (its spool is in place, its end not marked). It outlives the
 * process, whose exit ends `heapsift run`'s wait, as Chromium's forked zygote, in a PID
 * namespace of its own, outlives the browser.
 *
 * usage: sandboxed [--trap] [--vfork] [--fork | --clone [--kill] [--newpid] | --outlive PATH]
 */
#define _GNU_SOURCE
#include "site.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <ucontext.h>
#include <unistd.h>

void *sandboxed_keep[64]; /* extern: the compiler may not drop the stores, nor the mallocs */
int sandboxed_nkeep;

SITE void before_fork(void)
{
    sandboxed_keep[sandboxed_nkeep++] = malloc(4000);
}

SITE void before_filter(void)
{
    sandboxed_keep[sandboxed_nkeep++] = malloc(1000);
}

SITE void in_thread(void)
{
    sandboxed_keep[sandboxed_nkeep++] = malloc(3000);
}

SITE void after_filter(void)
{
    sandboxed_keep[sandboxed_nkeep++] = malloc(2000);
}

SITE void in_clone(void)
{
    sandboxed_keep[sandboxed_nkeep++] = malloc(5000);
}

SITE void *freed_after(void)
{
    return malloc(500);
}

/* SIGSYS: one line as Firefox's, then the call fails with ENOSYS. */
static void on_sigsys(int sig, siginfo_t *si, void *uc)
{
    char line[128];
    ucontext_t *u = uc;
    (void)sig;
    int n = snprintf(line, sizeof(line), "Sandbox: seccomp sandbox violation: pid %d, syscall %d\n",
                     (int)getpid(), si->si_syscall);
    if (write(2, line, (size_t)n) < 0) {
        /* nothing to do */
    }
    u->uc_mcontext.gregs[REG_RAX] = -ENOSYS;
}

static const int refused[] = {
    SYS_clone,     SYS_clone3, SYS_fork,     SYS_vfork,     SYS_unshare,
    SYS_open,      SYS_openat, SYS_creat,    SYS_rename,    SYS_renameat,
    SYS_renameat2, SYS_unlink, SYS_unlinkat, SYS_getgroups, SYS_process_vm_readv};
#define NREFUSED (sizeof(refused) / sizeof(refused[0]))

static int sandbox(int trap)
{
    unsigned ret = trap ? SECCOMP_RET_TRAP : SECCOMP_RET_ERRNO | (EPERM & SECCOMP_RET_DATA);
    struct sock_filter f[4 + NREFUSED + 2];
    size_t n = 0;
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch));
    f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] =
        (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
    for (size_t i = 0; i < NREFUSED; i++) /* a match jumps to the refusal, past the rest */
        f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)refused[i],
                                              (unsigned char)(NREFUSED - i), 0);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, ret);
    struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
    if (trap) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_sigaction = on_sigsys;
        sa.sa_flags = SA_SIGINFO;
        sigaction(SIGSYS, &sa, NULL);
    }
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    /* TSYNC: every thread is filtered, as Firefox's and Chromium's sandboxes do */
    return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog);
}

static int go_fd[2];

static void *thread_main(void *arg)
{
    char c;
    (void)arg;
    if (read(go_fd[0], &c, 1) != 1)
        return NULL;
    for (int i = 0; i < 5; i++)
        in_thread();
    return NULL;
}

static int sandboxed_life(int trap);

/* --vfork: a child that shares this memory and ends by _exit, its exec failed. */
static void vfork_failed_exec(void)
{
    char *argv[] = {"/nonexistent/sandboxed-vfork", NULL};
    pid_t pid = vfork();
    if (pid == 0) {
        execv(argv[0], argv);
        _exit(127);
    }
    if (pid > 0)
        waitpid(pid, NULL, 0);
}

/* --outlive: the grandchild waits for a byte on the FIFO at path, then lives. */
static int outlive(const char *path, int trap)
{
    int ready[2];
    char c;
    if (pipe(ready) != 0)
        return 1;
    pid_t helper = fork();
    if (helper < 0)
        return 1;
    if (helper > 0) { /* exits once the grandchild's fork handlers have run */
        close(ready[1]);
        return read(ready[0], &c, 1) != 1;
    }
    if (unshare(CLONE_NEWPID) != 0)
        _exit(1);
    pid_t pid = fork();
    if (pid != 0)
        _exit(pid < 0);
    if (write(ready[1], "r", 1) != 1)
        _exit(1);
    close(ready[0]);
    close(ready[1]);
    int fd = open(path, O_RDONLY);
    if (fd < 0 || read(fd, &c, 1) != 1)
        _exit(1);
    close(fd);
    exit(sandboxed_life(trap));
}

/* The sandboxed life: 0, or 1 when the filter could not be installed. */
static int sandboxed_life(int trap)
{
    pthread_t th;
    for (int i = 0; i < 10; i++)
        before_filter();
    if (pipe(go_fd) != 0 || pthread_create(&th, NULL, thread_main, NULL) != 0)
        return 1;
    if (sandbox(trap) != 0) {
        perror("sandboxed: seccomp");
        return 1;
    }
    if (write(go_fd[1], "g", 1) != 1)
        return 1;
    pthread_join(th, NULL); /* the thread's first sample comes after the filter */
    for (int i = 0; i < 7; i++)
        after_filter();
    void *f[4];
    for (int i = 0; i < 4; i++)
        f[i] = freed_after();
    for (int i = 0; i < 4; i++)
        free(f[i]);
    return 0;
}

/* The raw clone's child: filtered before its first allocation. With ready >= 0 it writes
 * there once done and waits to be killed. */
static int cloned_life(int trap, int ready)
{
    if (sandbox(trap) != 0)
        return 1;
    for (int i = 0; i < 6; i++)
        in_clone();
    void *f[4];
    for (int i = 0; i < 4; i++)
        f[i] = freed_after();
    for (int i = 0; i < 4; i++)
        free(f[i]);
    if (ready >= 0 && write(ready, "r", 1) == 1)
        for (;;)
            pause();
    return 0;
}

/* --clone: 0 when the child ended as asked (exited 0, or was killed with --kill). */
static int clone_parent(int trap, int kill_it, int newpid)
{
    int ready[2];
    if (pipe(ready) != 0)
        return 1;
    pid_t pid =
        (pid_t)syscall(SYS_clone, SIGCHLD | (newpid ? CLONE_NEWPID : 0), NULL, NULL, NULL, 0);
    if (pid < 0)
        return 1;
    if (pid == 0)
        exit(cloned_life(trap, kill_it ? ready[1] : -1));
    char c;
    if (kill_it && (read(ready[0], &c, 1) != 1 || kill(pid, SIGKILL) != 0))
        return 1;
    int st;
    if (waitpid(pid, &st, 0) != pid)
        return 1;
    return kill_it ? !(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
                   : !(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}

int main(int argc, char **argv)
{
    int trap = 0, forked = 0, cloned = 0, kill_it = 0, newpid = 0;
    const char *hold = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--vfork") == 0)
            vfork_failed_exec();
        if (strcmp(argv[i], "--outlive") == 0 && i + 1 < argc)
            hold = argv[++i];
        trap |= strcmp(argv[i], "--trap") == 0;
        forked |= strcmp(argv[i], "--fork") == 0;
        cloned |= strcmp(argv[i], "--clone") == 0;
        kill_it |= strcmp(argv[i], "--kill") == 0;
        newpid |= strcmp(argv[i], "--newpid") == 0;
    }
    if (!forked && !cloned && !hold)
        return sandboxed_life(trap);
    for (int i = 0; i < 3; i++)
        before_fork();
    if (hold)
        return outlive(hold, trap);
    if (cloned)
        return clone_parent(trap, kill_it, newpid);
    pid_t pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0)
        exit(sandboxed_life(trap));
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
        return 1;
    return WEXITSTATUS(st);
}

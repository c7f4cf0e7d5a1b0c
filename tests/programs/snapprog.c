/*
 * snapprog: staged heaps for the leak check's snapshot (tests/integration/leak_snapshot.sh,
 * src/preload/leaks/snapshot.c). Each mode sets up two sites, runs heapsift_leak_check(OUT)
 * once and prints "CHECK rc"; the truth at the check is printed as for reachprog:
 *   SITE NAME CLASS BYTES OBJECTS
 * usage: snapprog MODE OUT [PREFIX]
 *   change PREFIX  kept_then_lost (2000 B, a global's) is reachable at the snapshot and
 *                  lost_then_kept (3008 B, only XOR-hidden) is not; a thread blocked on the
 *                  fifo PREFIX.taken (written by heapsift once the threads go again, with
 *                  HEAPSIFT_TEST_SNAPSHOT=PREFIX) then drops the first pointer, unhides the
 *                  second into a global, frees a third block (freed_after, 4000 B, reachable)
 *                  and writes PREFIX.go, which lets the child scan: the scan must see the
 *                  heap of the snapshot.
 *   seccomp        a seccomp filter refuses clone without CLONE_THREAD (and fork, vfork)
 *                  with EPERM (clone3 with ENOSYS), then executes itself again ("seccomped":
 *                  heapsift sees the filter at its start, and writes its files under it as
 *                  usual); the check falls back to stop-the-world.
 *   dontfork       dontfork_kept (1504 B) is pointed to only from a MADV_DONTFORK mapping,
 *                  lost_plain (1008 B) is lost: no snapshot (the region is not in a fork).
 *   wipeonfork     the same with a MADV_WIPEONFORK mapping (zeros in a fork): wipe_kept
 *                  (1520 B) is pointed to only from there; no snapshot.
 *   sigchld        the program counts SIGCHLD, has a child of its own and a thread blocked
 *                  in waitpid(-1); after the check prints "SIGCHLD n" (0: nothing from the
 *                  snapshot's child), then lets its child exit and prints "WAITED ok" when
 *                  waitpid(-1) returned that child with its status, and "ECHILD yes" when
 *                  nothing is left to wait for.
 *   sigign         SIGCHLD ignored: the check answers, and "ECHILD yes" after it.
 * Pointers are kept in SITE functions' volatile locals cleared before they return, as
 * reachprog does, so no stale copy makes a lost block look reachable.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define HEAPSIFT_WEAK
#include "heapsift.h"

#define SITE __attribute__((noinline, noclone))
#define HIDE 0xa5a5a5a5a5a5a5a5ull /* a hidden pointer is no address */

static void *volatile g_kept;        /* kept_then_lost */
static void *volatile g_unhidden;    /* lost_then_kept, once unhidden */
static volatile uintptr_t g_hidden;  /* lost_then_kept, XOR-hidden */
static void *volatile g_freed;       /* freed_after */
static void *volatile *g_dontfork;   /* a MADV_DONTFORK page */
static volatile sig_atomic_t g_chld; /* SIGCHLD received */
static const char *g_prefix;

SITE static void *xmalloc(size_t n)
{
    void *p = malloc(n);
    if (!p)
        abort();
    memset(p, 0x11, n);
    return p;
}

SITE static void kept_then_lost(void)
{
    g_kept = xmalloc(2000);
}

SITE static void lost_then_kept(void)
{
    void *volatile p = xmalloc(3008);
    g_hidden = (uintptr_t)p ^ HIDE;
    p = NULL;
}

SITE static void freed_after(void)
{
    g_freed = xmalloc(4000);
}

SITE static void lost_plain(void)
{
    void *volatile p = xmalloc(1008);
    p = NULL;
}

SITE static void dontfork_kept(void)
{
    g_dontfork[0] = xmalloc(1504);
}

SITE static void wipe_kept(void)
{
    g_dontfork[0] = xmalloc(1520);
}

static void fifo_byte(const char *suffix, int flags)
{
    char path[4096], b = 'x';
    snprintf(path, sizeof(path), "%s%s", g_prefix, suffix);
    int fd = open(path, flags);
    if (fd < 0) {
        perror(path);
        exit(2);
    }
    if ((flags & O_ACCMODE) == O_WRONLY ? write(fd, &b, 1) != 1 : read(fd, &b, 1) != 1)
        exit(2);
    close(fd);
}

/* Waits for the snapshot, then changes the heap, then lets the scan go. */
static void *changer(void *arg)
{
    (void)arg;
    fifo_byte(".taken", O_RDONLY);
    g_kept = NULL;
    g_unhidden = (void *)(g_hidden ^ HIDE);
    g_hidden = 0;
    free(g_freed);
    g_freed = NULL;
    fifo_byte(".go", O_WRONLY);
    return NULL;
}

/* clone without CLONE_THREAD, fork, vfork: EPERM; clone3: ENOSYS. */
static void refuse_fork(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 2),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
        BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 5, 4),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_fork, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_vfork, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, 435 /* clone3: ENOSYS, glibc's threads use clone */, 0,
                 2),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EPERM),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof(f) / sizeof(f[0]), f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
        perror("seccomp");
        exit(2);
    }
}

static void on_chld(int sig)
{
    (void)sig;
    g_chld++;
}

static pid_t g_child;
static int g_waited; /* 1: waitpid(-1) returned g_child with status 7 */

static void *waiter(void *arg)
{
    (void)arg;
    int st = 0;
    pid_t p;
    while ((p = waitpid(-1, &st, 0)) < 0 && errno == EINTR)
        ;
    g_waited = p == g_child && WIFEXITED(st) && WEXITSTATUS(st) == 7;
    if (!g_waited)
        printf("WAITED pid %d (want %d) status %#x\n", (int)p, (int)g_child, st);
    return NULL;
}

static int check(const char *out)
{
    int rc = heapsift_leak_check(out);
    printf("CHECK %d\n", rc);
    return rc;
}

/* The program's own child (exits 7 when its pipe closes), a thread in waitpid(-1). */
static int mode_sigchld(const char *out, bool ignore)
{
    struct sigaction sa = {.sa_handler = ignore ? SIG_IGN : on_chld, .sa_flags = SA_RESTART};
    int pfd[2];
    pthread_t w;
    sigaction(SIGCHLD, &sa, NULL);
    if (pipe(pfd) != 0)
        return 2;
    if (!ignore) {
        g_child = fork();
        if (g_child == 0) {
            char b;
            close(pfd[1]);
            while (read(pfd[0], &b, 1) > 0)
                ;
            _exit(7);
        }
        pthread_create(&w, NULL, waiter, NULL);
    }
    close(pfd[0]);
    check(out);
    printf("SIGCHLD %d\n", (int)g_chld);
    close(pfd[1]);
    if (!ignore) {
        pthread_join(w, NULL);
        printf("WAITED %s\n", g_waited ? "ok" : "wrong");
    }
    errno = 0;
    printf("ECHILD %s\n", waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD ? "yes" : "no");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        return 1;
    const char *mode = argv[1], *out = argv[2];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "change") == 0 && argc > 3) {
        pthread_t t;
        g_prefix = argv[3];
        kept_then_lost();
        lost_then_kept();
        freed_after();
        pthread_create(&t, NULL, changer, NULL);
        printf("SITE kept_then_lost reachable 2000 1\nSITE lost_then_kept unreachable 3008 1\n");
        check(out);
        pthread_join(t, NULL);
    } else if (strcmp(mode, "seccomp") == 0) {
        refuse_fork(); /* before heapsift starts, which then writes its files as usual */
        execl("/proc/self/exe", argv[0], "seccomped", out, (char *)NULL);
        return 2;
    } else if (strcmp(mode, "seccomped") == 0 || strcmp(mode, "dontfork") == 0 ||
               strcmp(mode, "wipeonfork") == 0) {
        int advice = mode[0] == 'd' ? MADV_DONTFORK : mode[0] == 'w' ? MADV_WIPEONFORK : -1;
        g_dontfork = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (g_dontfork == MAP_FAILED ||
            (advice >= 0 && madvise((void *)g_dontfork, 4096, advice) != 0))
            return 2;
        kept_then_lost();
        lost_plain();
        if (mode[0] == 'd')
            dontfork_kept();
        if (mode[0] == 'w')
            wipe_kept();
        printf("SITE kept_then_lost reachable 2000 1\nSITE lost_plain unreachable 1008 1\n");
        if (mode[0] == 'd')
            printf("SITE dontfork_kept reachable 1504 1\n");
        if (mode[0] == 'w')
            printf("SITE wipe_kept reachable 1520 1\n");
        check(out);
    } else if (strcmp(mode, "sigchld") == 0 || strcmp(mode, "sigign") == 0) {
        return mode_sigchld(out, mode[3] == 'i');
    } else {
        return 1;
    }
    return 0;
}

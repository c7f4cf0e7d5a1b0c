/*
 * forker: fork, fork+exec and explicit-dump scenarios for the integration tests.
 *
 * usage: forker fork        parent allocates in site_parent, forks; the child allocates in
 *                           site_child and calls exit(0) (so at-exit work runs); the parent
 *                           waits for it. Prints "parent=PID child=PID" on stdout.
 *        forker exec        parent allocates in site_parent, forks, the child execs
 *                           /proc/self/exe (argv[0] if that fails) in mode "child"; the
 *                           parent waits. Prints "parent=PID child=PID".
 *        forker child       allocates in site_exec_child and exits 0 (the exec'd mode).
 *        forker dump PATH   allocates in site_dump, calls heapsift_dump(PATH) and prints its
 *                           return value; exits 0 if it returned 0, 1 if not, 2 if the
 *                           library is not loaded.
 *        forker burst N     allocates in site_parent, then forks N children one after the
 *                           other, each ending with _exit 0 to 3.8 ms after its fork.
 * Exit status 0 on success; a child's failure is passed on as the parent's status.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "site.h"

extern int heapsift_dump(const char *path) __attribute__((weak));

#define NPARENT 1000
#define PARENTSZ 4096
#define NCHILD 300
#define CHILDSZ 8192
#define NEXEC 200
#define EXECSZ 2048
#define NDUMP 100
#define DUMPSZ 1024

static void *volatile g_keep[NPARENT];
static volatile unsigned long g_sink;

static void die(const char *what)
{
    fprintf(stderr, "forker: %s failed: %s\n", what, strerror(errno));
    exit(99);
}

SITE void site_parent(void)
{
    for (int i = 0; i < NPARENT; i++) {
        char *p = malloc(PARENTSZ);
        if (!p)
            die("malloc");
        memset(p, 1, PARENTSZ);
        g_keep[i] = p;
    }
}

SITE void site_child(void)
{
    for (int i = 0; i < NCHILD; i++) {
        char *p = malloc(CHILDSZ);
        if (!p)
            die("malloc");
        memset(p, 2, CHILDSZ);
        g_keep[i] = p;
    }
}

SITE void site_exec_child(void)
{
    for (int i = 0; i < NEXEC; i++) {
        char *p = malloc(EXECSZ);
        if (!p)
            die("malloc");
        memset(p, 3, EXECSZ);
        g_keep[i] = p;
    }
}

SITE void site_dump(void)
{
    for (int i = 0; i < NDUMP; i++) {
        char *p = malloc(DUMPSZ);
        if (!p)
            die("malloc");
        memset(p, 4, DUMPSZ);
        g_keep[i] = p;
    }
}

static int wait_child(pid_t pid)
{
    int st;
    while (waitpid(pid, &st, 0) < 0) {
        if (errno != EINTR)
            die("waitpid");
    }
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    fprintf(stderr, "forker: child %d killed by signal %d\n", (int)pid, WTERMSIG(st));
    return 128 + WTERMSIG(st);
}

static int run_fork(int do_exec, const char *argv0)
{
    site_parent();
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        if (!do_exec) {
            site_child();
            exit(0);
        }
        char *args[] = {(char *)argv0, "child", NULL};
        execv("/proc/self/exe", args);
        execv(argv0, args);
        fprintf(stderr, "forker: exec %s: %s\n", argv0, strerror(errno));
        _exit(127);
    }
    printf("parent=%d child=%d\n", (int)getpid(), (int)pid);
    fflush(stdout);
    return wait_child(pid);
}

static int run_dump(const char *path)
{
    site_dump();
    if (!heapsift_dump) {
        printf("heapsift_dump: not loaded\n");
        return 2;
    }
    int ret = heapsift_dump(path);
    printf("heapsift_dump: %d\n", ret);
    return ret == 0 ? 0 : 1;
}

/* N children, each gone by _exit 0 to 3.8 ms after its fork (so some end in the middle of
 * a trigger dump of their own), one after the other. */
static int run_burst(int n)
{
    for (int i = 0; i < n; i++) {
        pid_t p = fork();
        if (p < 0)
            return 1;
        if (p == 0) {
            struct timespec ts = {0, (i % 20) * 200000L};
            nanosleep(&ts, NULL);
            _exit(0);
        }
        waitpid(p, NULL, 0);
    }
    return 0;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "fork";
    int status;
    if (!strcmp(mode, "fork") || !strcmp(mode, "exec")) {
        status = run_fork(!strcmp(mode, "exec"), argv[0]);
    } else if (!strcmp(mode, "child")) {
        site_exec_child();
        status = 0;
    } else if (!strcmp(mode, "dump") && argc > 2) {
        status = run_dump(argv[2]);
    } else if (!strcmp(mode, "burst") && argc > 2) {
        site_parent();
        status = run_burst(atoi(argv[2]));
    } else {
        fprintf(stderr, "usage: forker fork|exec|child|dump PATH|burst N\n");
        return 64;
    }
    g_sink += 1;
    return status;
}

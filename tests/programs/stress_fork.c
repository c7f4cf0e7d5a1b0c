/*
 * stress_fork: process creation while other threads allocate.
 *
 * usage: stress_fork fork DIR [FORKERS [FORKS [RELEASE]]]
 *            ALLOCATORS threads allocate and free pattern-checked blocks; FORKERS threads
 *            (default 4) each fork FORKS times (default 8). A child allocates NCHILD blocks
 *            of CHILDSZ bytes in site_child, checks them, calls heapsift_dump on
 *            DIR/child.PID.pb.gz and exit(0). Prints "child PID" for each child.
 *            With RELEASE (any mode), once every child is reaped it prints "forked" and,
 *            its allocators still running, waits until the file RELEASE exists (60 s at
 *            most, else it fails): a test fetching from it while it runs has as long as
 *            it needs (http_fork_storm).
 *        stress_fork vfork DIR  /  stress_fork spawn DIR
 *            the same allocating threads; FORKERS threads each start FORKS children with
 *            vfork + execve (or posix_spawn) of /proc/self/exe in mode "exec-child", with
 *            HEAPSIFT_OUT=DIR/exec.%p.pb.gz in the child's environment; one extra vfork
 *            child execs a path that does not exist and _exits 127. Prints "child PID" for
 *            each exec'd child and "failed PID" for the one that could not exec.
 *        stress_fork exec-child
 *            allocates NEXEC blocks of EXECSZ bytes in site_exec_child, exits 0.
 * A child that does not finish within 20 s is reported ("hung PID"), killed, and the
 * program fails. Exit 0 ok, 1 a failure (reason on stderr), 64 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "site.h"

extern int heapsift_dump(const char *path) __attribute__((weak));
extern char **environ;

#define ALLOCATORS 4
#define MAX_FORKERS 16
#define NCHILD 64
#define CHILDSZ 3000
#define NEXEC 50
#define EXECSZ 5000

static volatile int g_stop;
static volatile int g_bad;
static const char *g_mode, *g_dir;
static int g_forks = 8;
static const char *g_release;
static char **g_child_env;
static pthread_mutex_t g_out_lock = PTHREAD_MUTEX_INITIALIZER;
static void *volatile g_keep[NCHILD > NEXEC ? NCHILD : NEXEC];

static void bad(const char *fmt, const char *arg, long v)
{
    fprintf(stderr, "stress_fork: ");
    fprintf(stderr, fmt, arg, v);
    fputc('\n', stderr);
    g_bad = 1;
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

static void *allocator(void *arg)
{
    uint64_t rng = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    unsigned char *slot[128] = {0};
    size_t len[128] = {0};
    while (!g_stop) {
        unsigned i = next_rand(&rng) % 128;
        if (slot[i]) {
            for (size_t k = 0; k < len[i]; k++)
                if (slot[i][k] != (unsigned char)(i + k)) {
                    bad("%s block corrupt (size %ld)", "allocator", (long)len[i]);
                    break;
                }
            free(slot[i]);
            slot[i] = NULL;
        } else {
            len[i] = 1 + next_rand(&rng) % 4000;
            slot[i] = malloc(len[i]);
            if (!slot[i]) {
                bad("%s: malloc(%ld) failed", "allocator", (long)len[i]);
                continue;
            }
            for (size_t k = 0; k < len[i]; k++)
                slot[i][k] = (unsigned char)(i + k);
        }
    }
    for (unsigned i = 0; i < 128; i++)
        free(slot[i]);
    return NULL;
}

SITE void site_child(void)
{
    for (int i = 0; i < NCHILD; i++) {
        unsigned char *p = malloc(CHILDSZ);
        if (!p)
            _exit(3);
        memset(p, i, CHILDSZ);
        g_keep[i] = p;
    }
}

SITE void site_exec_child(void)
{
    for (int i = 0; i < NEXEC; i++) {
        unsigned char *p = malloc(EXECSZ);
        if (!p)
            _exit(3);
        memset(p, i, EXECSZ);
        g_keep[i] = p;
    }
}

/* The forked child: allocate, check, dump, exit(0) (at-exit work included). */
static void child_main(void)
{
    site_child();
    for (int i = 0; i < NCHILD; i++) {
        const unsigned char *p = g_keep[i];
        for (int k = 0; k < CHILDSZ; k++)
            if (p[k] != (unsigned char)i)
                _exit(4);
    }
    char path[4096];
    snprintf(path, sizeof(path), "%s/child.%d.pb.gz", g_dir, (int)getpid());
    if (!heapsift_dump || heapsift_dump(path) != 0)
        _exit(5);
    exit(0);
}

/* One write(2) to descriptor 1, no stdio: a child forked by another thread between a
 * printf and its fflush would inherit the line and print it again at exit, and so would
 * one forked while dprintf's FILE (on this thread's stack, in glibc's stdio list) still
 * holds the line: the child's exit() flushes it (fork_storm saw 13 "child" lines for 12
 * children). */
static void say(const char *what, pid_t pid)
{
    char line[64];
    int n = snprintf(line, sizeof(line), "%s %d\n", what, (int)pid);
    pthread_mutex_lock(&g_out_lock);
    if (n > 0 && write(STDOUT_FILENO, line, (size_t)n) != n) {
        /* the test reads what arrived */
    }
    pthread_mutex_unlock(&g_out_lock);
}

/* Waits up to 20 s for pid; a child still running then is reported and killed. */
static void reap(pid_t pid, const char *what, int want)
{
    int st = 0;
    for (int i = 0; i < 2000; i++) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid) {
            if (!WIFEXITED(st))
                bad("%s child %ld killed by a signal", what, (long)pid);
            else if (WEXITSTATUS(st) != want)
                bad("%s child exited with an unexpected status (pid %ld)", what, (long)pid);
            return;
        }
        if (r < 0 && errno != EINTR) {
            bad("%s: waitpid %ld failed", what, (long)pid);
            return;
        }
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    say("hung", pid);
    bad("%s child %ld hung for 20 s; killed", what, (long)pid);
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
}

static void *forker(void *arg)
{
    (void)arg;
    char *self = "/proc/self/exe";
    char *args[] = {"stress_fork", "exec-child", NULL};
    for (int i = 0; i < g_forks && !g_bad; i++) {
        pid_t pid = -1;
        if (!strcmp(g_mode, "fork")) {
            pid = fork();
            if (pid == 0)
                child_main();
        } else if (!strcmp(g_mode, "vfork")) {
            pid = vfork();
            if (pid == 0) {
                execve(self, args, g_child_env);
                _exit(127);
            }
        } else {
            int rc = posix_spawn(&pid, self, NULL, NULL, args, g_child_env);
            if (rc != 0) {
                bad("%s: posix_spawn failed: %ld", g_mode, (long)rc);
                break;
            }
        }
        if (pid < 0) {
            bad("%s failed: errno %ld", g_mode, (long)errno);
            break;
        }
        say("child", pid);
        reap(pid, g_mode, 0);
    }
    return NULL;
}

/* Waits, 60 s at most, until the file g_release exists. */
static void hold(void)
{
    if (write(STDOUT_FILENO, "forked\n", 7) != 7) {
        /* the test waits for the line and fails saying so */
    }
    for (int i = 0; i < 6000; i++) {
        if (access(g_release, F_OK) == 0)
            return;
        struct timespec ts = {0, 10 * 1000 * 1000};
        nanosleep(&ts, NULL);
    }
    bad("%s never appeared in 60 s", g_release, 0);
}

/* HEAPSIFT_OUT=DIR/exec.%p.pb.gz in a copy of the environment, for exec'd children. */
static char **child_env(void)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 2, sizeof(char *));
    size_t j = 0;
    for (size_t i = 0; i < n; i++)
        if (strncmp(environ[i], "HEAPSIFT_OUT=", 13) != 0)
            env[j++] = environ[i];
    size_t len = strlen(g_dir) + 64;
    env[j] = malloc(len);
    snprintf(env[j], len, "HEAPSIFT_OUT=%s/exec.%%p.pb.gz", g_dir);
    return env;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "exec-child")) {
        site_exec_child();
        return 0;
    }
    if (argc < 3 ||
        (strcmp(argv[1], "fork") && strcmp(argv[1], "vfork") && strcmp(argv[1], "spawn"))) {
        fprintf(stderr, "usage: stress_fork fork|vfork|spawn DIR [FORKERS [FORKS [RELEASE]]]\n");
        return 64;
    }
    g_mode = argv[1];
    g_dir = argv[2];
    int nforkers = argc > 3 ? atoi(argv[3]) : 4;
    if (nforkers < 1 || nforkers > MAX_FORKERS)
        nforkers = 4;
    if (argc > 4)
        g_forks = atoi(argv[4]);
    if (argc > 5)
        g_release = argv[5];
    g_child_env = child_env();

    pthread_t at[ALLOCATORS], ft[MAX_FORKERS];
    for (uintptr_t i = 0; i < ALLOCATORS; i++)
        pthread_create(&at[i], NULL, allocator, (void *)(i + 1));
    for (int i = 0; i < nforkers; i++)
        pthread_create(&ft[i], NULL, forker, NULL);
    for (int i = 0; i < nforkers; i++)
        pthread_join(ft[i], NULL);
    if (strcmp(g_mode, "fork") != 0) {
        /* An exec that fails in a vfork child: _exit(127), no profile written. */
        pid_t pid = vfork();
        if (pid == 0) {
            char *args[] = {"missing", NULL};
            execve("/nonexistent/heapsift-stress", args, g_child_env);
            _exit(127);
        }
        if (pid > 0) {
            say("failed", pid);
            reap(pid, "failed-exec vfork", 127);
        }
    }
    if (g_release)
        hold();
    g_stop = 1;
    for (int i = 0; i < ALLOCATORS; i++)
        pthread_join(at[i], NULL);
    return g_bad ? 1 : 0;
}

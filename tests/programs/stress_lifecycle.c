/*
 * stress_lifecycle: allocations at the edges of a process's and a thread's life.
 *
 * usage: stress_lifecycle ctor DUMP
 *            a constructor(101) allocated NCTOR blocks of CTORSZ bytes in site_ctor before
 *            main (and before the profiler's own constructor when that runs later); main
 *            checks them, calls heapsift_dump(DUMP), frees half and keeps half until a
 *            destructor frees them after main returns; that destructor also allocates and
 *            frees. Prints "ctor_bytes=N" (the site_ctor bytes live at the dump).
 *        stress_lifecycle churn DIR SECONDS
 *            short-lived threads, 4 at a time, each allocating, keeping some blocks (in
 *            site_thread_keep, handed to the main thread) and freeing the rest, with a
 *            pthread_key destructor that frees a block at thread exit, while another
 *            thread calls heapsift_dump back to back on DIR/churn.N.pb.gz. At the end the
 *            main thread dumps DIR/churn.end.pb.gz. Prints "threads=N dumps=N kept=N"
 *            (kept: the site_thread_keep bytes live at the end dump).
 *        stress_lifecycle proctitle
 *            does what setproctitle() does in redis, nginx or postgres: moves environ to
 *            the heap and overwrites the original argv and environment strings with a
 *            title; then allocates and returns (the profiler must still know where to
 *            write its exit profile).
 *        stress_lifecycle cancel DIR
 *            a thread calling heapsift_dump(DIR/cancel.pb.gz) in a loop is cancelled
 *            (pthread_cancel, deferred: the dump's open and write are cancellation points)
 *            at varying moments, 10 times; then the main thread dumps DIR/after.pb.gz and
 *            allocates. A watchdog reports a hang ("hung ...", exit 3) after 10 s.
 *        stress_lifecycle exit-thread MS
 *            8 threads allocate and free in a loop; after MS ms one of them calls exit(0)
 *            while the others are still allocating (the main thread waits in pthread_join).
 *        stress_lifecycle main-exit [LEVELS]
 *            main calls pthread_exit while a worker allocates for 0.3 s; the process ends
 *            with status 0 when the worker returns. With LEVELS, that is done by the
 *            LEVELS-th descendant (each process forks the next 0.2 s after it starts and
 *            waits for it, exiting with its status): heapsift's threads of the processes
 *            before must not count in it.
 * Exit 0 ok, 1 corruption or a failed call (reason on stderr), 64 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "site.h"

extern int heapsift_dump(const char *path) __attribute__((weak));

#define NCTOR 100
#define CTORSZ 1000

static unsigned char *g_ctor[NCTOR];
static int g_ctor_ok;
static volatile int g_stop, g_bad;
static void *volatile g_last;

SITE void *site_ctor(size_t n)
{
    void *p = malloc(n);
    g_last = p;
    return p;
}

__attribute__((constructor(101))) static void early(void)
{
    for (int i = 0; i < NCTOR; i++) {
        g_ctor[i] = site_ctor(CTORSZ);
        if (!g_ctor[i])
            return;
        memset(g_ctor[i], i, CTORSZ);
    }
    g_ctor_ok = 1;
}

static int ctor_check(int from, int to)
{
    for (int i = from; i < to; i++)
        for (int k = 0; k < CTORSZ; k++)
            if (g_ctor[i][k] != (unsigned char)i)
                return 0;
    return 1;
}

__attribute__((destructor(101))) static void late(void)
{
    if (!g_ctor_ok)
        return;
    if (!ctor_check(NCTOR / 2, NCTOR)) {
        fprintf(stderr, "stress_lifecycle: constructor blocks corrupt at exit\n");
        _exit(1);
    }
    for (int i = NCTOR / 2; i < NCTOR; i++)
        free(g_ctor[i]);
    void *volatile p = calloc(100, 100);
    p = realloc(p, 100000);
    free(p);
}

static int run_ctor(const char *dump)
{
    if (!g_ctor_ok || !ctor_check(0, NCTOR)) {
        fprintf(stderr, "stress_lifecycle: constructor blocks missing or corrupt in main\n");
        return 1;
    }
    int rc = heapsift_dump ? heapsift_dump(dump) : -1;
    if (rc != 0) {
        fprintf(stderr, "stress_lifecycle: heapsift_dump(%s) = %d\n", dump, rc);
        return 1;
    }
    for (int i = 0; i < NCTOR / 2; i++)
        free(g_ctor[i]);
    printf("ctor_bytes=%d\n", NCTOR * CTORSZ);
    return 0;
}

/* ---- churn ---------------------------------------------------------------------------- */

#define KEEP_MAX 100000
#define KEEPSZ 96

static pthread_mutex_t g_keep_lock = PTHREAD_MUTEX_INITIALIZER;
static void *g_keep[KEEP_MAX];
static int g_nkeep;
static pthread_key_t g_key;
static const char *g_dir;
static int g_dumps;

SITE void *site_thread_keep(void)
{
    void *p = malloc(KEEPSZ);
    g_last = p;
    return p;
}

static void key_free(void *p)
{
    unsigned char *b = p;
    for (int k = 0; k < 500; k++)
        if (b[k] != 0x77) {
            fprintf(stderr, "stress_lifecycle: thread-specific block corrupt at exit\n");
            g_bad = 1;
            break;
        }
    free(p);
}

static void *short_thread(void *arg)
{
    (void)arg;
    unsigned char *tsd = malloc(500);
    if (!tsd)
        return NULL;
    memset(tsd, 0x77, 500);
    pthread_setspecific(g_key, tsd);
    void *tmp[20];
    for (int i = 0; i < 20; i++) {
        tmp[i] = malloc(16 + (size_t)i * 40);
        if (tmp[i])
            memset(tmp[i], i, 16 + (size_t)i * 40);
    }
    void *k = site_thread_keep();
    for (int i = 0; i < 20; i++)
        free(tmp[i]);
    if (k) {
        memset(k, 0x33, KEEPSZ);
        pthread_mutex_lock(&g_keep_lock);
        if (g_nkeep < KEEP_MAX)
            g_keep[g_nkeep++] = k;
        else
            free(k);
        pthread_mutex_unlock(&g_keep_lock);
    }
    return NULL;
}

static void *churn_dumper(void *arg)
{
    (void)arg;
    char path[4096];
    while (!g_stop) {
        snprintf(path, sizeof(path), "%s/churn.%d.pb.gz", g_dir, g_dumps);
        int rc = heapsift_dump(path);
        if (rc != 0) {
            fprintf(stderr, "stress_lifecycle: heapsift_dump(%s) = %d\n", path, rc);
            g_bad = 1;
        }
        g_dumps++;
    }
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int run_churn(const char *dir, double secs)
{
    if (!heapsift_dump) {
        fprintf(stderr, "stress_lifecycle: heapsift_dump not found (library not loaded)\n");
        return 2;
    }
    g_dir = dir;
    pthread_key_create(&g_key, key_free);
    pthread_t d;
    pthread_create(&d, NULL, churn_dumper, NULL);
    double end = now() + secs;
    unsigned long nthreads = 0;
    while (now() < end && !g_bad) {
        pthread_t t[4];
        for (int i = 0; i < 4; i++)
            if (pthread_create(&t[i], NULL, short_thread, NULL) != 0) {
                fprintf(stderr, "stress_lifecycle: pthread_create: %s\n", strerror(errno));
                g_bad = 1;
                return 1;
            }
        for (int i = 0; i < 4; i++)
            pthread_join(t[i], NULL);
        nthreads += 4;
    }
    g_stop = 1;
    pthread_join(d, NULL);
    for (int i = 0; i < g_nkeep; i++)
        for (int k = 0; k < KEEPSZ; k++)
            if (((unsigned char *)g_keep[i])[k] != 0x33) {
                fprintf(stderr, "stress_lifecycle: kept block corrupt\n");
                return 1;
            }
    char path[4096];
    snprintf(path, sizeof(path), "%s/churn.end.pb.gz", dir);
    if (heapsift_dump(path) != 0) {
        fprintf(stderr, "stress_lifecycle: final heapsift_dump failed\n");
        return 1;
    }
    printf("threads=%lu dumps=%d kept=%d\n", nthreads, g_dumps, g_nkeep * KEEPSZ);
    for (int i = 0; i < g_nkeep; i++)
        free(g_keep[i]);
    return g_bad ? 1 : 0;
}

/* ---- exit from a thread --------------------------------------------------------------- */

static void *busy(void *arg)
{
    uintptr_t me = (uintptr_t)arg;
    unsigned char *slot[64] = {0};
    for (unsigned long i = 0;; i++) {
        unsigned j = (unsigned)(i * 2654435761u % 64);
        if (slot[j]) {
            if (slot[j][0] != (unsigned char)j || slot[j][99] != (unsigned char)j) {
                fprintf(stderr, "stress_lifecycle: block corrupt in thread %lu\n",
                        (unsigned long)me);
                _exit(1);
            }
            free(slot[j]);
            slot[j] = NULL;
        } else {
            slot[j] = malloc(100 + (i % 900));
            if (slot[j])
                memset(slot[j], (int)j, 100);
        }
    }
    return NULL;
}

static void *exiter(void *arg)
{
    unsigned ms = (unsigned)(uintptr_t)arg;
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    exit(0);
}

static int run_exit_thread(unsigned ms)
{
    pthread_t t[9];
    for (uintptr_t i = 0; i < 8; i++)
        pthread_create(&t[i], NULL, busy, (void *)i);
    pthread_create(&t[8], NULL, exiter, (void *)(uintptr_t)ms);
    pthread_join(t[8], NULL);
    fprintf(stderr, "stress_lifecycle: exit() from a thread returned\n");
    return 1;
}

/* ---- cancellation during a dump ------------------------------------------------------ */

static void *dump_loop(void *arg)
{
    const char *path = arg;
    for (;;) {
        heapsift_dump(path);
        void *volatile p = malloc(100);
        free(p);
    }
    return NULL;
}

static volatile const char *g_phase = "starting";

static void *watchdog(void *arg)
{
    (void)arg;
    sleep(10);
    fprintf(stderr, "stress_lifecycle: hung for 10 s: %s\n", g_phase);
    _exit(3);
}

static int run_cancel(const char *dir)
{
    if (!heapsift_dump) {
        fprintf(stderr, "stress_lifecycle: heapsift_dump not found (library not loaded)\n");
        return 2;
    }
    static char path[4096], after[4096];
    snprintf(path, sizeof(path), "%s/cancel.pb.gz", dir);
    snprintf(after, sizeof(after), "%s/after.pb.gz", dir);
    pthread_t w;
    pthread_create(&w, NULL, watchdog, NULL);
    for (int i = 0; i < 10; i++) {
        pthread_t t;
        g_phase = "cancelling a thread in heapsift_dump";
        pthread_create(&t, NULL, dump_loop, path);
        struct timespec ts = {0, (long)(1 + i * 7) * 1000 * 1000};
        nanosleep(&ts, NULL);
        pthread_cancel(t);
        pthread_join(t, NULL);
    }
    g_phase = "heapsift_dump after the cancellations";
    int rc = heapsift_dump(after);
    g_phase = "malloc after the cancellations";
    void *volatile p = malloc(1 << 20);
    free(p);
    if (rc != 0) {
        fprintf(stderr, "stress_lifecycle: heapsift_dump(%s) after cancellations = %d\n", after,
                rc);
        return 1;
    }
    printf("cancelled 10 dumping threads\n");
    return 0;
}

/* ---- setproctitle ------------------------------------------------------------------- */

extern char **environ;

static int run_proctitle(char **argv)
{
    /* The argv and environment strings are contiguous; find their end. */
    char *start = argv[0], *end = argv[0] + strlen(argv[0]) + 1;
    for (int i = 1; argv[i] && argv[i] == end; i++)
        end = argv[i] + strlen(argv[i]) + 1;
    size_t n = 0;
    while (environ[n])
        n++;
    char **copy = malloc((n + 1) * sizeof(char *));
    if (!copy)
        return 1;
    for (size_t i = 0; i < n; i++) {
        if (environ[i] == end)
            end = environ[i] + strlen(environ[i]) + 1;
        copy[i] = strdup(environ[i]);
    }
    copy[n] = NULL;
    environ = copy;
    memset(start, 0, (size_t)(end - start));
    snprintf(start, (size_t)(end - start), "stress_lifecycle: title set");
    void *volatile p = malloc(12345);
    free(p);
    printf("title set over %zu bytes\n", (size_t)(end - start));
    return 0;
}

static void *main_exit_worker(void *arg)
{
    (void)arg;
    for (int i = 0; i < 300; i++) {
        void *p = malloc(100000);
        memset(p, 1, 64);
        free(p);
        usleep(1000);
    }
    return NULL;
}

/* main ends with pthread_exit while a worker allocates for 0.3 s: the process then ends
 * as by exit(0) when the worker returns. */
static int run_main_exit(int levels)
{
    for (int i = 0; i < levels; i++) {
        usleep(200000); /* this process's heapsift threads start meanwhile */
        pid_t pid = fork();
        if (pid < 0)
            return 1;
        if (pid > 0) {
            int st = 0;
            if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
                return 1;
            return WEXITSTATUS(st);
        }
    }
    pthread_t t;
    if (pthread_create(&t, NULL, main_exit_worker, NULL) != 0)
        return 1;
    pthread_exit(NULL);
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "cancel"))
        return run_cancel(argv[2]);
    if (argc == 2 && !strcmp(argv[1], "proctitle"))
        return run_proctitle(argv);
    if (argc == 3 && !strcmp(argv[1], "ctor"))
        return run_ctor(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "churn"))
        return run_churn(argv[2], atof(argv[3]));
    if (argc == 3 && !strcmp(argv[1], "exit-thread"))
        return run_exit_thread((unsigned)atoi(argv[2]));
    if ((argc == 2 || argc == 3) && !strcmp(argv[1], "main-exit"))
        return run_main_exit(argc == 3 ? atoi(argv[2]) : 0);
    fprintf(stderr,
            "usage: stress_lifecycle ctor DUMP | churn DIR SECONDS | cancel DIR | proctitle | "
            "exit-thread MS | main-exit [LEVELS]\n");
    return 64;
}

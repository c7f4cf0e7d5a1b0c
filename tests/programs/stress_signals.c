/*
 * stress_signals: allocation under a storm of asynchronous signals.
 *
 * usage: stress_signals prof HZ SECONDS THREADS DUMP
 *            a SIGPROF handler that only bumps a counter, driven by setitimer(ITIMER_PROF)
 *            at HZ and by a thread sending SIGPROF to each thread in turn at HZ
 *            (pthread_kill), interrupts THREADS threads (and the main thread) that allocate,
 *            realloc and free pattern-checked blocks in site_sig/site_sig_realloc for
 *            SECONDS. Then the timer stops, heapsift_dump(DUMP) is called with every block
 *            still live, and everything is freed. Prints "signals=N sent=N ops=N live_bytes=N".
 *        stress_signals usr2 HZ SECONDS THREADS
 *            the same allocating threads; one more thread sends SIGUSR2 to the process
 *            at HZ (kill(getpid())), for the profiler's signal trigger to dump. Prints
 *            "sent=N ops=N".
 *        stress_signals fdclose FILE [usr2]
 *            does what daemons do at start: closes every descriptor above 2 (the profiler's
 *            among them), then opens FILE.0 .. FILE.3 (which take the lowest free numbers),
 *            writes a line to each, allocates (and with "usr2" sends itself SIGUSR2) five
 *            times. Each file must hold its line only, its offset unmoved, its descriptor
 *            open: prints "intact", or what is corrupted and exits 1.
 *        stress_signals probe SIG
 *            prints "handled" when signal SIG has a handler installed (the profiler's
 *            signal trigger), "default" otherwise.
 * Exit 0 ok, 1 corruption or a failed call (reason on stderr), 64 usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include "site.h"

extern int heapsift_dump(const char *path) __attribute__((weak));

#define MAX_THREADS 32
#define SLOTS 256

typedef struct {
    uint64_t rng;
    unsigned long ops;
    unsigned char *p[SLOTS];
    size_t n[SLOTS];
} worker_t;

static worker_t g_w[MAX_THREADS + 1];
static volatile int g_stop, g_bad;
static volatile sig_atomic_t g_signals;
static void *volatile g_last;

static void on_prof(int sig)
{
    (void)sig;
    int saved = errno; /* nothing here touches errno, but a handler must not leak it */
    g_signals = g_signals + 1;
    errno = saved;
}

static uint64_t next_rand(uint64_t *s)
{
    uint64_t x = *s;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    return *s = x;
}

SITE void *site_sig(size_t n)
{
    void *p = malloc(n);
    g_last = p;
    return p;
}

SITE void *site_sig_realloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    g_last = q;
    return q;
}

static int verify(const unsigned char *p, size_t n, unsigned tag)
{
    for (size_t i = 0; i < n; i++)
        if (p[i] != (unsigned char)(tag + i))
            return 0;
    return 1;
}

static void step(worker_t *w, unsigned tag)
{
    unsigned i = next_rand(&w->rng) % SLOTS;
    size_t n = 1 + next_rand(&w->rng) % 3000;
    if (!w->p[i]) {
        unsigned char *p = site_sig(n);
        if (!p) {
            fprintf(stderr, "stress_signals: malloc(%zu) failed: %s\n", n, strerror(errno));
            g_bad = 1;
            return;
        }
        for (size_t k = 0; k < n; k++)
            p[k] = (unsigned char)(tag + i + k);
        w->p[i] = p;
        w->n[i] = n;
    } else if (!verify(w->p[i], w->n[i], tag + i)) {
        fprintf(stderr, "stress_signals: block of %zu bytes corrupt\n", w->n[i]);
        g_bad = 1;
    } else if (next_rand(&w->rng) % 2) {
        unsigned char *q = site_sig_realloc(w->p[i], n);
        if (!q) {
            fprintf(stderr, "stress_signals: realloc(%zu) failed\n", n);
            g_bad = 1;
            return;
        }
        size_t keep = n < w->n[i] ? n : w->n[i];
        if (!verify(q, keep, tag + i)) {
            fprintf(stderr, "stress_signals: realloc lost the data\n");
            g_bad = 1;
        }
        for (size_t k = keep; k < n; k++)
            q[k] = (unsigned char)(tag + i + k);
        w->p[i] = q;
        w->n[i] = n;
    } else {
        free(w->p[i]);
        w->p[i] = NULL;
        w->n[i] = 0;
    }
    w->ops++;
}

static void *worker(void *arg)
{
    worker_t *w = arg;
    unsigned tag = (unsigned)(w - g_w) * 31;
    while (!g_stop && !g_bad)
        step(w, tag);
    return NULL;
}

static double g_hz;
static pthread_t g_tid[MAX_THREADS + 1];
static int g_nthreads;

/* setitimer's signals come at most once a scheduler tick; this thread makes the storm
 * dense, sending SIGPROF to one allocating thread after another at HZ. */
static void *prof_kicker(void *arg)
{
    unsigned long *sent = arg;
    long ns = (long)(1e9 / g_hz);
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    for (unsigned i = 0; !g_stop; i++) {
        pthread_kill(g_tid[i % (unsigned)(g_nthreads + 1)], SIGPROF);
        (*sent)++;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static void *usr2_sender(void *arg)
{
    unsigned long *sent = arg;
    long ns = (long)(1e9 / g_hz);
    struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
    while (!g_stop) {
        kill(getpid(), SIGUSR2);
        (*sent)++;
        nanosleep(&ts, NULL);
    }
    return NULL;
}

static int probe(const char *name)
{
    int sig = !strcmp(name, "USR2") ? SIGUSR2 : atoi(name);
    struct sigaction sa;
    if (sigaction(sig, NULL, &sa) != 0)
        return 1;
    int handled = (sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != NULL
                                             : sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN;
    printf("%s\n", handled ? "handled" : "default");
    return 0;
}

/* Closes every descriptor above 2, opens NFILES files (they take the lowest numbers, the
 * profiler's old ones among them), writes a line to each, then allocates (and sends itself
 * SIGUSR2) while nothing else touches them; each file must hold its line only. */
#define NFILES 4

static int fdclose(const char *path, int usr2)
{
    static const char line[] = "the application's own data\n";
    const size_t len = sizeof(line) - 1;
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL); /* let the profiler's thread start */
    for (int fd = 3; fd < 1024; fd++)
        close(fd);
    int fds[NFILES];
    char name[4096];
    for (int i = 0; i < NFILES; i++) {
        snprintf(name, sizeof(name), "%s.%d", path, i);
        fds[i] = open(name, O_RDWR | O_CREAT | O_TRUNC, 0600);
        if (fds[i] < 0 || write(fds[i], line, len) != (ssize_t)len) {
            perror(name);
            return 1;
        }
    }
    for (int i = 0; i < 5; i++) {
        if (usr2)
            kill(getpid(), SIGUSR2);
        for (int k = 0; k < 2000; k++) {
            void *volatile p = site_sig(100 + (size_t)k);
            free(p);
        }
        nanosleep(&ts, NULL);
    }
    int bad = 0;
    for (int i = 0; i < NFILES; i++) {
        char buf[256];
        struct stat st;
        int gone = fstat(fds[i], &st) != 0;
        if (gone || !S_ISREG(st.st_mode)) {
            printf("fd %d is no longer the application's file (%s)\n", fds[i],
                   gone                   ? "closed"
                   : S_ISFIFO(st.st_mode) ? "now a pipe"
                                          : "now something else");
            bad = 1;
            continue;
        }
        ssize_t n = pread(fds[i], buf, sizeof(buf), 0);
        off_t off = lseek(fds[i], 0, SEEK_CUR);
        if (n != (ssize_t)len || memcmp(buf, line, len) != 0 || off != (off_t)len) {
            printf("fd %d: the file holds %zd bytes (want %zu), offset %lld (want %zu)\n", fds[i],
                   n, len, (long long)off, len);
            bad = 1;
        }
        close(fds[i]);
    }
    if (!bad)
        printf("intact\n");
    return bad;
}

int main(int argc, char **argv)
{
    if ((argc == 3 || argc == 4) && !strcmp(argv[1], "fdclose"))
        return fdclose(argv[2], argc == 4 && !strcmp(argv[3], "usr2"));
    if (argc == 3 && !strcmp(argv[1], "probe"))
        return probe(argv[2]);
    int prof = argc == 6 && !strcmp(argv[1], "prof");
    int usr2 = argc == 5 && !strcmp(argv[1], "usr2");
    if (!prof && !usr2) {
        fprintf(stderr, "usage: stress_signals prof HZ SECONDS THREADS DUMP | "
                        "usr2 HZ SECONDS THREADS | fdclose FILE [usr2] | probe SIG\n");
        return 64;
    }
    g_hz = atof(argv[2]);
    double secs = atof(argv[3]);
    int nthreads = atoi(argv[4]);
    if (g_hz <= 0 || nthreads < 0 || nthreads > MAX_THREADS)
        return 64;

    pthread_t stid;
    unsigned long sent = 0;
    for (int i = 0; i <= nthreads; i++)
        g_w[i].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(i + 1);
    if (prof) {
        struct sigaction sa;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_prof;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGPROF, &sa, NULL);
        long us = (long)(1e6 / g_hz);
        struct itimerval it = {{us / 1000000, us % 1000000}, {us / 1000000, us % 1000000}};
        if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
            perror("setitimer");
            return 1;
        }
    }
    g_nthreads = nthreads;
    g_tid[0] = pthread_self();
    for (int i = 0; i < nthreads; i++)
        pthread_create(&g_tid[i + 1], NULL, worker, &g_w[i + 1]);
    pthread_create(&stid, NULL, usr2 ? usr2_sender : prof_kicker, &sent);

    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        for (int k = 0; k < 1000 && !g_bad; k++)
            step(&g_w[0], 0);
        clock_gettime(CLOCK_MONOTONIC, &t1);
    } while (!g_bad && (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9 < secs);
    g_stop = 1;
    pthread_join(stid, NULL);
    for (int i = 0; i < nthreads; i++)
        pthread_join(g_tid[i + 1], NULL);

    unsigned long ops = 0;
    unsigned long long live = 0;
    for (int i = 0; i <= nthreads; i++) {
        ops += g_w[i].ops;
        for (int j = 0; j < SLOTS; j++)
            live += g_w[i].n[j];
    }
    if (prof) {
        struct itimerval off;
        memset(&off, 0, sizeof(off));
        setitimer(ITIMER_PROF, &off, NULL);
        int rc = heapsift_dump ? heapsift_dump(argv[5]) : -1;
        if (rc != 0) {
            fprintf(stderr, "stress_signals: heapsift_dump(%s) = %d\n", argv[5], rc);
            g_bad = 1;
        }
        printf("signals=%ld sent=%lu ops=%lu live_bytes=%llu\n", (long)g_signals, sent, ops, live);
    } else {
        printf("sent=%lu ops=%lu\n", sent, ops);
    }
    for (int i = 0; i <= nthreads; i++)
        for (int j = 0; j < SLOTS; j++)
            free(g_w[i].p[j]);
    return g_bad ? 1 : 0;
}

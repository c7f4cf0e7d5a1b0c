/*
 * attach_target: a running multi-threaded program for `heapsift attach` (attach_*.sh).
 * It allocates before any attach (site_pre: 300 blocks of 48 bytes, kept), starts its
 * worker threads, prints "ready" and waits. Each time the file GO/go.N appears (N = 1, 2,
 * ...), every worker allocates in named functions:
 *   site_keep: 250 blocks of 100 bytes each, kept live;
 *   site_churn: 125 blocks of 4000 bytes each, freed at once;
 * and the main thread frees half of site_pre's blocks (allocated before the attach: their
 * frees must pass unnoticed). Then it prints "round N done" and waits for the next go file
 * or for GO/end, and exits 0 after printing "bye".
 *
 * usage: attach_target DIR [--expect [lib]] [--spin] [--lib PATH]
 *   --expect  print the truth of one round, one line per site (sites_exact.sh's format):
 *             NAME flat ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE; with "lib",
 *             got_lib_keep's line too
 *   --spin    instead of rounds, 16 threads allocate and free as fast as they can until
 *             DIR/end appears; prints "spun" and exits 0
 *   --lib     at the end of each round the main thread loads PATH with dlopen (the first
 *             time), allocates once as programs do, and calls its got_lib_keep (100 blocks
 *             of 300 bytes, kept: tests/programs/lib/got_lib.c)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "site.h"

#define NWORKERS 4
#define NKEEP 250
#define KEEPSZ 100
#define NCHURN 125
#define CHURNSZ 4000
#define NPRE 300
#define PRESZ 48
#define NSPIN 16

static const char *dir;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int round_no, done_count;
static volatile int stop;
static void *volatile pre[NPRE];

SITE static void site_pre(void)
{
    for (int i = 0; i < NPRE; i++)
        pre[i] = malloc(PRESZ);
}

SITE static void site_keep(void **out)
{
    for (int i = 0; i < NKEEP; i++) {
        out[i] = malloc(KEEPSZ);
        memset(out[i], 1, KEEPSZ);
    }
}

SITE static void site_churn(void)
{
    for (int i = 0; i < NCHURN; i++) {
        char *volatile p = malloc(CHURNSZ);
        p[0] = 1;
        free(p);
    }
}

static void *worker(void *arg)
{
    (void)arg;
    int seen = 0;
    for (;;) {
        pthread_mutex_lock(&lock);
        while (round_no == seen && !stop)
            pthread_cond_wait(&cond, &lock);
        if (stop) {
            pthread_mutex_unlock(&lock);
            return NULL;
        }
        seen = round_no;
        pthread_mutex_unlock(&lock);
        void **keep = calloc(NKEEP, sizeof(void *)); /* worker's own site */
        site_keep(keep);
        site_churn();
        pthread_mutex_lock(&lock);
        done_count++;
        pthread_cond_broadcast(&cond);
        pthread_mutex_unlock(&lock);
        (void)keep; /* kept live, on purpose */
    }
}

static int exists(const char *name)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/%s", dir, name);
    return access(path, F_OK) == 0;
}

static void *spinner(void *arg)
{
    (void)arg;
    unsigned n = 0;
    while (!stop) {
        void *p = malloc(16 + (n++ % 512));
        free(p);
    }
    return NULL;
}

static int spin(void)
{
    pthread_t t[NSPIN];
    for (int i = 0; i < NSPIN; i++)
        pthread_create(&t[i], NULL, spinner, NULL);
    printf("ready\n");
    fflush(stdout);
    while (!exists("end"))
        usleep(10000);
    stop = 1;
    for (int i = 0; i < NSPIN; i++)
        pthread_join(t[i], NULL);
    printf("spun\n");
    return 0;
}

/* --lib: loads lib the first time, then calls its got_lib_keep. */
static int lib_round(const char *lib)
{
    static int (*keep)(void);
    if (!keep) {
        void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);
        keep = h ? (int (*)(void))dlsym(h, "got_lib_keep") : NULL;
        if (!keep) {
            fprintf(stderr, "attach_target: %s: %s\n", lib, dlerror());
            return -1;
        }
        char *volatile p = malloc(64); /* heapsift looks at objects loaded since on its */
        free(p);                       /* sampled path (a bare free(malloc()) is elided) */
    }
    return keep();
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 1;
    dir = argv[1];
    if (argc > 2 && strcmp(argv[2], "--expect") == 0) {
        long k = (long)NWORKERS * NKEEP, c = (long)NWORKERS * NCHURN;
        printf("site_keep flat %ld %ld %ld %ld\n", k, k * KEEPSZ, k, k * KEEPSZ);
        printf("site_churn flat %ld %ld 0 0\n", c, c * CHURNSZ);
        printf("site_pre flat 0 0 0 0\n");
        if (argc > 3 && strcmp(argv[3], "lib") == 0)
            printf("got_lib_keep flat 100 30000 100 30000\n");
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "--spin") == 0)
        return spin();
    const char *lib = argc > 3 && strcmp(argv[2], "--lib") == 0 ? argv[3] : NULL;
    site_pre();
    pthread_t t[NWORKERS];
    for (int i = 0; i < NWORKERS; i++)
        pthread_create(&t[i], NULL, worker, NULL);
    printf("ready\n");
    fflush(stdout);
    for (int r = 1;; r++) {
        char go[64];
        snprintf(go, sizeof(go), "go.%d", r);
        while (!exists(go) && !exists("end"))
            usleep(10000);
        if (!exists(go))
            break;
        pthread_mutex_lock(&lock);
        round_no = r;
        pthread_cond_broadcast(&cond);
        while (done_count < r * NWORKERS)
            pthread_cond_wait(&cond, &lock);
        pthread_mutex_unlock(&lock);
        for (int i = (r - 1) % 2; i < NPRE; i += 2) /* blocks from before the attach */
            if (pre[i]) {
                free(pre[i]);
                pre[i] = NULL;
            }
        if (lib && lib_round(lib) != 0)
            return 2;
        printf("round %d done\n", r);
        fflush(stdout);
    }
    pthread_mutex_lock(&lock);
    stop = 1;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
    for (int i = 0; i < NWORKERS; i++)
        pthread_join(t[i], NULL);
    printf("bye\n");
    return 0;
}

/*
 * The diagnosis' scenario program (tests/integration/diagnose.sh): makes the process hold
 * memory of one known cause when it exits (the exit profile is diagnosed):
 *   diag_prog frag     300000 blocks of 1000 bytes, every other one freed: 150 MB of free
 *                      chunks between live ones, which glibc cannot trim
 *   diag_prog burst    a burst of 100000 blocks of 1000 bytes (100 MB), all freed, and
 *                      1000 blocks kept: under jemalloc with decay off, dirty pages
 *   diag_prog threads  64 threads each touching 512 KiB of its stack, all alive (blocked)
 *                      when main exits: 32 MiB of thread stacks
 *   diag_prog steady   30 steps of allocating and freeing 4 MB, beside 8 MB kept from the
 *                      start; with DIR, writes DIR/step.NNN.pb.gz with heapsift_dump after
 *                      each step: no growth, no leak
 * It prints the truth on stdout: "TRUTH BYTES". Built with HEAPSIFT_WEAK.
 * usage: diag_prog frag|burst|threads|steady [DIR]
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void *volatile sink;
static void *blocks[300000];

__attribute__((noinline)) static void *site_block(size_t n)
{
    void *p = malloc(n);
    if (!p)
        exit(99);
    memset(p, 1, n);
    return p;
}

static void frag(void)
{
    for (int i = 0; i < 300000; i++)
        blocks[i] = site_block(1000);
    for (int i = 0; i < 300000; i += 2)
        free(blocks[i]);
    printf("TRUTH %d\n", 150000 * 1000);
}

static void burst(void)
{
    for (int i = 0; i < 101000; i++)
        blocks[i] = site_block(1000);
    for (int i = 0; i < 100000; i++) /* the oldest go; the last 1000 stay */
        free(blocks[i]);
    printf("TRUTH %d\n", 100000 * 1000);
}

static pthread_barrier_t started;

/* Touches every page of 512 KiB of this thread's stack (through a volatile pointer, so no
 * store is dropped as dead). */
__attribute__((noinline)) static void touch_stack(void)
{
    char buf[512 * 1024];
    volatile char *v = buf;
    for (size_t i = 0; i < sizeof(buf); i += 1024)
        v[i] = 1;
    sink = (void *)(size_t)v[4096];
}

static void *thread_main(void *arg)
{
    (void)arg;
    touch_stack();
    pthread_barrier_wait(&started);
    for (;;) /* alive at exit: its stack is counted */
        pthread_barrier_wait(&started);
    return NULL;
}

static void threads(void)
{
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, 1024 * 1024);
    pthread_barrier_init(&started, NULL, 65);
    for (int i = 0; i < 64; i++) {
        pthread_t t;
        if (pthread_create(&t, &a, thread_main, NULL) != 0)
            exit(98);
    }
    pthread_barrier_wait(&started);
    printf("TRUTH %d\n", 64 * 512 * 1024);
}

__attribute__((noinline)) static void *site_kept(size_t n)
{
    return site_block(n);
}

__attribute__((noinline)) static void *site_churn(size_t n)
{
    return site_block(n);
}

static void steady(const char *dir)
{
    for (int i = 0; i < 2000; i++)
        blocks[i] = site_kept(4096);
    for (int step = 0; step < 30; step++) {
        for (int i = 0; i < 1000; i++)
            blocks[2000 + i] = site_churn(4000);
        for (int i = 0; i < 1000; i++)
            free(blocks[2000 + i]);
        if (dir) {
            char path[4096];
            snprintf(path, sizeof(path), "%s/step.%03d.pb.gz", dir, step);
            int rc = heapsift_dump(path);
            if (rc)
                fprintf(stderr, "diag_prog: heapsift_dump %s: %d\n", path, rc);
        }
    }
    printf("TRUTH 0\n");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "frag") == 0)
        frag();
    else if (strcmp(mode, "burst") == 0)
        burst();
    else if (strcmp(mode, "threads") == 0)
        threads();
    else if (strcmp(mode, "steady") == 0)
        steady(argc > 2 ? argv[2] : NULL);
    else {
        fprintf(stderr, "usage: diag_prog frag|burst|threads|steady [DIR]\n");
        return 1;
    }
    fflush(stdout);
    return 0;
}

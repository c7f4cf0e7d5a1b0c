/*
 * attach_target: the process bench/attach.sh attaches to: HEAP_MB of live heap (64 KiB
 * blocks, every page touched) and THREADS threads that malloc and free small blocks as
 * fast as they can, so every thread is busy when it is stopped. Prints "ready" once the
 * heap is built and the threads run, then runs until killed.
 *
 * Usage: attach_target [THREADS [HEAP_MB]]   (defaults 16, 1024)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile sink;
static void **volatile keep; /* the heap's table, reachable for bench/leakscan.sh's scans */

static void *spin(void *arg)
{
    unsigned x = (unsigned)(size_t)arg * 2654435761u + 1;
    for (;;) {
        x = x * 1664525u + 1013904223u;
        void *p = malloc(16 + (x >> 24));
        sink = p;
        free(p);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = argc > 1 ? atoi(argv[1]) : 16;
    size_t mb = argc > 2 ? (size_t)atol(argv[2]) : 1024;
    size_t n = mb * 16; /* 64 KiB blocks */
    void **heap = malloc(n * sizeof(*heap));
    keep = heap;
    for (size_t i = 0; heap && i < n; i++) {
        heap[i] = malloc(64 << 10);
        if (heap[i])
            memset(heap[i], (int)i, 64 << 10);
    }
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        pthread_create(&t, NULL, spin, (void *)(size_t)i);
    }
    printf("ready\n");
    fflush(stdout);
    for (;;)
        pause();
}

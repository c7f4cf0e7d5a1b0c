/*
 * forkfloor: what the leak check's snapshot cannot go below on this machine: the time of
 * the fork alone (a raw clone with exit signal 0, as src/preload/leaks/snapshot.c makes)
 * of a process holding HEAP_MB of touched heap, with no thread to stop and nothing else
 * running in it. The child exits at once; the parent reaps it with __WCLONE. Prints the
 * median and the range of ROUNDS forks in ms. With "thp", the heap is madvised
 * MADV_HUGEPAGE (transparent huge pages in "madvise" mode).
 * Usage: forkfloor [HEAP_MB [ROUNDS [thp]]]   (defaults 1024, 21)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    size_t mb = argc > 1 ? (size_t)atol(argv[1]) : 1024;
    int rounds = argc > 2 ? atoi(argv[2]) : 21;
    size_t len = mb << 20;
    char *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    double t[256];
    if (p == MAP_FAILED || rounds < 1 || rounds > 256)
        return 1;
    if (argc > 3 && strcmp(argv[3], "thp") == 0)
        madvise(p, len, MADV_HUGEPAGE);
    memset(p, 1, len);
    for (int i = 0; i < rounds; i++) {
        double t0 = now_ms();
        long pid = syscall(SYS_clone, 0ul, NULL, NULL, NULL, 0ul);
        if (pid == 0)
            syscall(SYS_exit_group, 0);
        t[i] = now_ms() - t0;
        if (pid < 0 || waitpid((pid_t)pid, NULL, __WCLONE) < 0)
            return 1;
    }
    qsort(t, (size_t)rounds, sizeof(t[0]), cmp);
    printf("fork of %zu MiB%s: median %.1f ms, min %.1f, max %.1f (%d rounds)\n", mb,
           argc > 3 ? " (THP)" : "", t[rounds / 2], t[0], t[rounds - 1], rounds);
    return 0;
}

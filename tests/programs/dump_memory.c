/*
 * Dumps give their memory back: after a warm-up dump, 20 more dumps (symbolization,
 * profile building, compression included) must leave the heap in use (glibc's
 * mallinfo2().uordblks, which counts the profiler's own allocations too) where it was,
 * within a small margin. Prints "before AFTER growth" and exits 1 beyond the margin.
 * Usage: dump_memory DIR.
 */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int heapsift_dump(const char *path) __attribute__((weak));

static void *volatile keep[4096];

__attribute__((noinline)) static void site_a(int i)
{
    keep[i] = malloc(1000 + (size_t)i);
}

__attribute__((noinline)) static void site_b(int i)
{
    keep[i] = calloc(1, 3000 + (size_t)i);
}

int main(int argc, char **argv)
{
    char path[4096];
    if (argc < 2 || !heapsift_dump) {
        fprintf(stderr, "usage: dump_memory DIR (under libheapsift.so)\n");
        return 2;
    }
    for (int i = 0; i < 4096; i++)
        (i & 1 ? site_a : site_b)(i);
    snprintf(path, sizeof(path), "%s/warm.pb.gz", argv[1]);
    if (heapsift_dump(path) != 0)
        return 3;
    size_t before = mallinfo2().uordblks;
    for (int k = 0; k < 20; k++) {
        snprintf(path, sizeof(path), "%s/d%d.pb.gz", argv[1], k);
        if (heapsift_dump(path) != 0)
            return 3;
    }
    size_t after = mallinfo2().uordblks;
    long growth = (long)after - (long)before;
    printf("%zu %zu %ld\n", before, after, growth);
    return growth > 64 * 1024 ? 1 : 0;
}

/*
 * pairs: N malloc/free pairs of one size on one thread, nothing else, for counting the
 * instructions the profiler adds to the non-sampled path. bench/targets.sh runs it under
 * valgrind --tool=callgrind --toggle-collect=run_pairs, so only the loop (and what it
 * calls: malloc, free and whatever the preloaded library adds) is counted, not start-up,
 * symbol resolution or an at-exit dump; then (Ir with the profiler - Ir without) / N is the
 * cost of the hooks per pair. The pointer goes through a volatile sink so the compiler
 * cannot pair the malloc with the free and remove both.
 *
 * Usage: pairs [N [SIZE]]   (defaults 1000000, 64)
 */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

/* The function callgrind's --toggle-collect names; noinline so it exists. */
__attribute__((noinline)) void run_pairs(unsigned long n, size_t size);

__attribute__((noinline)) void run_pairs(unsigned long n, size_t size)
{
    for (unsigned long i = 0; i < n; i++) {
        sink = malloc(size);
        free(sink);
    }
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    size_t size = argc > 2 ? strtoul(argv[2], NULL, 10) : 64;

    if (n == 0 || size == 0) {
        fprintf(stderr, "usage: %s [N [SIZE]]  (both positive)\n", argv[0]);
        return 1;
    }
    run_pairs(n, size);
    printf("pairs: %lu x malloc(%zu)+free\n", n, size);
    return 0;
}

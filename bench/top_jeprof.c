/*
 * top_jeprof: the program whose jemalloc heap_v2 profiles bench/top_jeprof.sh reads with
 * jeprof and with `heapsift top`. Run under libjemalloc.so.2 with MALLOC_CONF=prof:true.
 *   top_jeprof small       1,240 allocations from ten sites (with lg_prof_sample:0: a
 *                          file of about 7 KB, most of it the MAPPED_LIBRARIES section)
 *   top_jeprof paths N S   N live objects from S distinct stacks (with lg_prof_sample:0,
 *                          every one sampled): the stack of object i is the binary
 *                          expansion of i % S as a path through two mutually recursive
 *                          functions, one frame per bit (bench/dump_latency.c's scheme)
 * Deterministic: the same stacks and sizes at every run.
 */
#include <stdlib.h>
#include <string.h>
#include "bitpaths.h" /* path_zero: one frame per bit of id, a stack per id */

#define NOINLINE __attribute__((noinline))
#define KEEP_FRAME() __asm__ volatile("" ::: "memory")

static void *keep[1 << 16];
static unsigned nkeep;

NOINLINE void *big_site(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}

NOINLINE void *small_site(size_t n)
{
    void *p = malloc(n);
    memset(p, 2, n);
    return p;
}

NOINLINE void *deep(int d, size_t n)
{
    void *p = d ? deep(d - 1, n) : small_site(n);
    KEEP_FRAME();
    return p;
}

static int small(void)
{
    for (int i = 0; i < 40; i++)
        keep[nkeep++] = big_site(100000 + i);
    for (int i = 0; i < 1200; i++) {
        void *p = deep(i % 9, 64 + i % 2000);
        if (i % 4 == 0 && nkeep < sizeof(keep) / sizeof(keep[0]))
            keep[nkeep++] = p;
        else
            free(p);
    }
    return 0;
}

static int paths(unsigned long live, unsigned long stacks)
{
    unsigned bits;
    void **objs = calloc(live, sizeof(*objs));

    if (!objs || stacks == 0 || stacks > (1ul << 20))
        return 1;
    for (bits = 1; (1ul << bits) < stacks; bits++)
        ;
    for (unsigned long i = 0; i < live; i++)
        if (!(objs[i] = path_zero(i % stacks, bits, 16 + (i % 64) * 8)))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "small") == 0)
        return small();
    if (argc == 4 && strcmp(argv[1], "paths") == 0)
        return paths(strtoul(argv[2], NULL, 10), strtoul(argv[3], NULL, 10));
    return 2;
}

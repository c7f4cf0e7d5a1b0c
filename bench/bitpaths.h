/*
 * bench/bitpaths.h: the stacks the profile-reading benchmarks allocate from (dump_latency.c,
 * top_jeprof.c): path_zero(id, bits, size) mallocs size bytes one frame per bit of id,
 * path_zero for a 0 and path_one for a 1, so the return addresses spell the bits and each
 * id below 2^bits is a stack of its own. Header-only: each benchmark is compiled as one
 * file.
 */
#ifndef HS_BENCH_BITPATHS_H
#define HS_BENCH_BITPATHS_H

#include <stdlib.h>

#define BITPATHS_NOINLINE __attribute__((noinline))
#define BITPATHS_KEEP_FRAME() __asm__ volatile("" ::: "memory")

static BITPATHS_NOINLINE void *path_one(unsigned long id, unsigned bit, size_t size);

static BITPATHS_NOINLINE void *path_zero(unsigned long id, unsigned bit, size_t size)
{
    void *p;

    if (bit == 0)
        p = malloc(size);
    else if ((id >> (bit - 1)) & 1)
        p = path_one(id, bit - 1, size);
    else
        p = path_zero(id, bit - 1, size);
    BITPATHS_KEEP_FRAME();
    return p;
}

static BITPATHS_NOINLINE void *path_one(unsigned long id, unsigned bit, size_t size)
{
    void *p;

    if (bit == 0)
        p = malloc(size);
    else if ((id >> (bit - 1)) & 1)
        p = path_one(id, bit - 1, size);
    else
        p = path_zero(id, bit - 1, size);
    BITPATHS_KEEP_FRAME();
    return p;
}

#endif

/*
 * mimalloc_api: a program that allocates through mimalloc's API as Rust's mimalloc crate
 * calls it (mi_malloc_aligned, mi_zalloc_aligned, mi_realloc_aligned, mi_free) and through
 * its plain forms (mi_malloc, mi_zalloc, mi_calloc, mi_realloc). Linked against Debian's
 * libmimalloc.so (whose malloc is mi_malloc and free mi_free: heapsift interposes those,
 * and hooks the mi_* functions in place in the library); or, with -DMI_OWN, defining those
 * functions itself over toy_alloc.h, as an executable with mimalloc linked in does
 * (Debian ships no static libmimalloc). tests/integration/api_hooks.sh runs it at
 * HEAPSIFT_RATE=1 and checks, per site (alloc_space, inuse_space):
 *   site_aligned          100 x mi_malloc_aligned(1000, 64), kept         100000 100000
 *   site_zalloc_aligned   200 x mi_zalloc_aligned(2000, 128), mi_free'd   400000      0
 *   site_realloc_aligned  100 x mi_malloc_aligned(100, 32) grown by
 *                         mi_realloc_aligned to 10000, kept             1010000 1000000
 *   site_plain            mi_malloc(300) kept, mi_zalloc(400) mi_free'd,
 *                         mi_calloc(10, 50) kept, mi_malloc(100) grown by
 *                         mi_realloc to 700 and kept, 100 each          200000 150000
 *   site_cross            (shared only) blocks of one path freed through another:
 *                         mi_malloc_aligned+free, malloc+mi_free, posix_memalign+mi_free,
 *                         aligned_alloc kept, memalign+free, 100 each   355200  64000
 * It prints "mimalloc done" (or what went wrong) through write(2): no stdio buffer.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef MI_OWN
#include "toy_alloc.h"
#define API __attribute__((visibility("default"), noinline, noclone, used))
API void *mi_malloc_aligned(size_t n, size_t align)
{
    return toy_alloc(n, align, 0);
}
API void *mi_zalloc_aligned(size_t n, size_t align)
{
    return toy_alloc(n, align, 1);
}
API void *mi_realloc_aligned(void *p, size_t n, size_t align)
{
    return toy_realloc(p, n, align);
}
API void mi_free(void *p)
{
    toy_free(p);
}
API void *mi_malloc(size_t n)
{
    return toy_alloc(n, 16, 0);
}
API void *mi_zalloc(size_t n)
{
    return toy_alloc(n, 16, 1);
}
API void *mi_calloc(size_t n, size_t m)
{
    return toy_alloc(n * m, 16, 1);
}
API void *mi_realloc(void *p, size_t n)
{
    return toy_realloc(p, n, 16);
}
#else
#include <mimalloc.h>
#endif

static void *volatile keep[2048];
static int nkeep, bad;

static void hold(void *p)
{
    bad += p == NULL;
    keep[nkeep++] = p;
}

static int zero(const unsigned char *p, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (p[j])
            return 0;
    return 1;
}

__attribute__((noinline)) static void site_aligned(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = mi_malloc_aligned(1000, 64);
        bad += (uintptr_t)p % 64 != 0;
        hold(p);
    }
}

__attribute__((noinline)) static void site_zalloc_aligned(void)
{
    for (int i = 0; i < 200; i++) {
        unsigned char *p = mi_zalloc_aligned(2000, 128);
        bad += (uintptr_t)p % 128 != 0 || !zero(p, 2000);
        memset(p, 0xa5, 2000); /* the next one may reuse it: zero only by the call */
        mi_free(p);
    }
}

__attribute__((noinline)) static void site_realloc_aligned(void)
{
    for (int i = 0; i < 100; i++) {
        unsigned char *p = mi_malloc_aligned(100, 32);
        p[99] = (unsigned char)i;
        p = mi_realloc_aligned(p, 10000, 32);
        bad += p == NULL || (uintptr_t)p % 32 != 0 || p[99] != (unsigned char)i;
        hold(p);
    }
}

__attribute__((noinline)) static void site_plain(void)
{
    for (int i = 0; i < 100; i++) {
        hold(mi_malloc(300));
        unsigned char *z = mi_zalloc(400);
        bad += !zero(z, 400);
        memset(z, 0xa5, 400);
        mi_free(z);
        unsigned char *c = mi_calloc(10, 50);
        bad += !zero(c, 500);
        hold(c);
        hold(mi_realloc(mi_malloc(100), 700));
    }
}

#ifndef MI_OWN
__attribute__((noinline)) static void site_cross(void)
{
    for (int i = 0; i < 100; i++) {
        free(mi_malloc_aligned(700, 64));
        mi_free(malloc(800));
        void *p = NULL;
        bad += posix_memalign(&p, 64, 900) != 0;
        mi_free(p);
        hold(aligned_alloc(64, 640));
        free(memalign(128, 512));
    }
}
#endif

int main(void)
{
    site_aligned();
    site_zalloc_aligned();
    site_realloc_aligned();
    site_plain();
#ifndef MI_OWN
    site_cross();
#endif
    const char *msg = bad ? "mimalloc: bad results\n" : "mimalloc done\n";
    return write(1, msg, strlen(msg)) < 0 || bad;
}

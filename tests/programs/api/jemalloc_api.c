/*
 * jemalloc_api: a program on Debian's jemalloc that allocates through its own API as
 * folly, Redis and Rust's jemalloc-sys (unprefixed) do, linked against libjemalloc.so
 * (heapsift interposes malloc and free, and hooks mallocx & co in place in the library)
 * or against libjemalloc_pic.a (the executable defines both: everything hooked in place).
 * tests/integration/api_hooks.sh runs it at HEAPSIFT_RATE=1 and checks, per site
 * (alloc_space, inuse_space):
 *   site_align    100 x mallocx(1000, MALLOCX_ALIGN(4096)), kept          100000 100000
 *   site_zero     200 x mallocx(2000, MALLOCX_ZERO), sdallocx'd           400000      0
 *   site_arena    300 x mallocx(3000, MALLOCX_ARENA(new) | TCACHE_NONE),
 *                 200 dallocx'd                                          900000 300000
 *   site_tcache   100 x mallocx(500, MALLOCX_TCACHE(new)), 50 sdallocx'd   50000  25000
 *   site_grow     100 x mallocx(100) grown by rallocx to 10000, kept     1010000 1000000
 *   site_x_grow   100 x mallocx(1000), xallocx(p, 1010, 0): held         100000 101000
 *   site_x_fail   100 x mallocx(1000), xallocx(p, 100000, 0): refused    100000 100000
 *   site_x_extra  100 x mallocx(1000), xallocx(p, 1000, 20): 1020 held   100000 102000
 *   site_cross    blocks of one path freed through another: mallocx+free,
 *                 malloc+sdallocx, calloc+dallocx, mallocx+realloc+sdallocx 420000 0
 * (xallocx counted at what was asked and granted: min(returned usable size, size +
 * extra); jemalloc's class for 1000 bytes is 1024). 1700 allocations, 1050 releases. It
 * prints "jemalloc done" (or what went wrong) through write(2): no stdio buffer.
 */
#define _GNU_SOURCE
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *volatile keep[2048];
static int nkeep, bad;

static void hold(void *p)
{
    bad += p == NULL;
    keep[nkeep++] = p;
}

__attribute__((noinline)) static void site_align(void)
{
    for (int i = 0; i < 100; i++) {
        void *p = mallocx(1000, MALLOCX_ALIGN(4096));
        bad += (uintptr_t)p % 4096 != 0;
        hold(p);
    }
}

__attribute__((noinline)) static void site_zero(void)
{
    for (int i = 0; i < 200; i++) {
        unsigned char *p = mallocx(2000, MALLOCX_ZERO);
        for (int j = 0; j < 2000; j++)
            bad += p[j] != 0;
        memset(p, 0xa5, 2000); /* the next one may reuse it: zero only by the flag */
        sdallocx(p, 2000, 0);
    }
}

__attribute__((noinline)) static void site_arena(unsigned arena)
{
    for (int i = 0; i < 300; i++) {
        void *p = mallocx(3000, MALLOCX_ARENA(arena) | MALLOCX_TCACHE_NONE);
        if (i % 3 == 0)
            hold(p);
        else
            dallocx(p, MALLOCX_TCACHE_NONE);
    }
}

__attribute__((noinline)) static void site_tcache(unsigned tc)
{
    for (int i = 0; i < 100; i++) {
        void *p = mallocx(500, MALLOCX_TCACHE(tc));
        if (i % 2)
            sdallocx(p, 500, MALLOCX_TCACHE(tc));
        else
            hold(p);
    }
}

__attribute__((noinline)) static void site_grow(void)
{
    for (int i = 0; i < 100; i++) {
        unsigned char *p = mallocx(100, 0);
        p[99] = (unsigned char)i;
        p = rallocx(p, 10000, 0);
        bad += p == NULL || p[99] != (unsigned char)i;
        hold(p);
    }
}

/* xallocx(p, size, extra) on 100 blocks of 1000 bytes: want_held says whether the resize
 * in place must hold (the usable size returned reaches size). A macro, so that the blocks
 * are the calling site's own (an inlined function is a frame of its own in profiles). */
#define X_RESIZE(size, extra, want_held)                                                           \
    for (int i = 0; i < 100; i++) {                                                                \
        void *p = mallocx(1000, 0);                                                                \
        size_t r = xallocx(p, size, extra, 0);                                                     \
        bad += (r >= size) != want_held;                                                           \
        hold(p);                                                                                   \
    }

__attribute__((noinline)) static void site_x_grow(void)
{
    X_RESIZE(1010, 0, 1)
}

__attribute__((noinline)) static void site_x_fail(void)
{
    X_RESIZE(100000, 0, 0)
}

__attribute__((noinline)) static void site_x_extra(void)
{
    X_RESIZE(1000, 20, 1)
}

__attribute__((noinline)) static void site_cross(void)
{
    for (int i = 0; i < 100; i++) {
        free(mallocx(700, 0));
        sdallocx(malloc(800), 800, 0);
        dallocx(calloc(1, 900), 0);
        void *p = realloc(mallocx(600, 0), 1200);
        sdallocx(p, 1200, 0);
    }
}

int main(void)
{
    unsigned arena = 0, tc = 0;
    size_t sz = sizeof(unsigned);
    if (mallctl("arenas.create", &arena, &sz, NULL, 0) != 0 ||
        mallctl("tcache.create", &tc, &sz, NULL, 0) != 0)
        bad++;
    site_align();
    site_zero();
    site_arena(arena);
    site_tcache(tc);
    site_grow();
    site_x_grow();
    site_x_fail();
    site_x_extra();
    site_cross();
    const char *msg = bad ? "jemalloc: bad results\n" : "jemalloc done\n";
    return write(1, msg, strlen(msg)) < 0 || bad;
}

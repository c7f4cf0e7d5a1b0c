/*
 * api_pairs: N allocate/release pairs of 64 bytes through one allocator API, for counting
 * the instructions heapsift's API hooks (src/preload/hooks_api.c) add to the non-sampled
 * path. bench/api_hooks.sh runs it under callgrind --toggle-collect=run_pairs, with and
 * without heapsift, at N and 2N. The route is the first argument:
 *   je      je_malloc + je_free              a prefixed API of the executable's own (the
 *                                            API hooks' pair before issue 38)
 *   jex     je_mallocx + je_sdallocx         the same API's jemalloc calls
 *   rjem    _rjem_mallocx + _rjem_sdallocx   tikv-jemallocator's, with no _rjem_free
 *   mi      mi_malloc_aligned + mi_free      Rust's mimalloc crate's, in the executable
 *   mallocx mallocx + sdallocx               jemalloc's own (-DREAL_JEMALLOC: Debian's)
 *   dallocx mallocx + dallocx
 *   mireal  mi_malloc_aligned + mi_free      (-DREAL_MIMALLOC: Debian's libmimalloc.so)
 * The executable's own APIs share one free list of 64-byte blocks: a handful of
 * instructions, so that heapsift's share stands out (it is the difference that counts).
 * Usage: api_pairs ROUTE [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(REAL_JEMALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(REAL_MIMALLOC)
#include <mimalloc.h>
#else
#define API __attribute__((visibility("default"), noinline, noclone, used))
static _Alignas(64) unsigned char pool[1 << 16];
static size_t pool_used;
static void *free_list;

static void *pool_get(void)
{
    void *p = free_list;
    if (p) {
        free_list = *(void **)p;
        return p;
    }
    if (pool_used + 64 > sizeof(pool))
        return NULL;
    p = pool + pool_used;
    pool_used += 64;
    return p;
}

static void pool_put(void *p)
{
    if (p) {
        *(void **)p = free_list;
        free_list = p;
    }
}

API void *je_malloc(size_t n)
{
    return n <= 64 ? pool_get() : NULL;
}
API void je_free(void *p)
{
    pool_put(p);
}
API void *je_mallocx(size_t n, int flags)
{
    return n <= 64 && flags == 0 ? pool_get() : NULL;
}
API void je_sdallocx(void *p, size_t n, int flags)
{
    if (n <= 64 && flags == 0)
        pool_put(p);
}
API void *_rjem_mallocx(size_t n, int flags)
{
    return n <= 64 && flags == 0 ? pool_get() : NULL;
}
API void _rjem_sdallocx(void *p, size_t n, int flags)
{
    if (n <= 64 && flags == 0)
        pool_put(p);
}
API void *mi_malloc_aligned(size_t n, size_t align)
{
    return n <= 64 && align <= 64 ? pool_get() : NULL;
}
API void mi_free(void *p)
{
    pool_put(p);
}
#endif

static void *volatile sink;
static const char *route;

__attribute__((noinline)) void run_pairs(unsigned long n);

__attribute__((noinline)) void run_pairs(unsigned long n)
{
    char r = route[0], r1 = route[1];
    for (unsigned long i = 0; i < n; i++) {
#if defined(REAL_JEMALLOC)
        sink = mallocx(64, 0);
        if (r == 'd')
            dallocx(sink, 0);
        else
            sdallocx(sink, 64, 0);
#elif defined(REAL_MIMALLOC)
        sink = mi_malloc_aligned(64, 16);
        mi_free(sink);
        (void)r, (void)r1;
#else
        if (r == 'j' && r1 == 'e' && route[2] == '\0') {
            sink = je_malloc(64);
            je_free(sink);
        } else if (r == 'j') {
            sink = je_mallocx(64, 0);
            je_sdallocx(sink, 64, 0);
        } else if (r == 'r') {
            sink = _rjem_mallocx(64, 0);
            _rjem_sdallocx(sink, 64, 0);
        } else {
            sink = mi_malloc_aligned(64, 16);
            mi_free(sink);
        }
#endif
    }
}

int main(int argc, char **argv)
{
    route = argc > 1 ? argv[1] : "je";
    unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 10) : 1000000;
    run_pairs(n);
    printf("api_pairs: %lu x %s\n", n, route);
    return 0;
}

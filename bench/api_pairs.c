/*
 * api_pairs: N allocate/release pairs of 64 bytes through one allocator API, for counting
 * the instructions heapsift's API hooks (src/preload/reach/hooks_api.c) add to the non-sampled
 * path. bench/api_hooks.sh builds it once per route and runs it under callgrind
 * --toggle-collect=run_pairs at N and 2N. The route is chosen when building:
 *   -DROUTE_JE       je_malloc + je_free              a prefixed API of the executable's
 *                                                     own (the API hooks' pair before
 *                                                     issue 38)
 *   -DROUTE_JEX      je_mallocx + je_sdallocx         the same API's jemalloc calls
 *   -DROUTE_RJEM     _rjem_mallocx + _rjem_sdallocx   tikv-jemallocator's: no _rjem_free
 *   -DROUTE_MI       mi_malloc_aligned + mi_free      Rust's mimalloc crate's, linked in
 *   -DROUTE_MALLOCX  mallocx + sdallocx               Debian's jemalloc (shared or static)
 *   -DROUTE_DALLOCX  mallocx + dallocx
 *   -DROUTE_MIREAL   mi_malloc_aligned + mi_free      Debian's libmimalloc.so
 *   -DROUTE_CALLOC   calloc + free                    interposed, into a libjemalloc.so
 *                                                     whose mallocx the program imports
 *                                                     (hs_real's calloc then guarded)
 * The executable's own APIs share one free list of 64-byte blocks: a handful of
 * instructions, so that heapsift's share stands out (the difference is what counts).
 * Usage: api_pairs [N]
 */
#include <stdio.h>
#include <stdlib.h>

#if defined(ROUTE_MALLOCX) || defined(ROUTE_DALLOCX) || defined(ROUTE_CALLOC)
#include <jemalloc/jemalloc.h>
#elif defined(ROUTE_MIREAL)
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
#endif

#if defined(ROUTE_JE) || defined(ROUTE_JEX)
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
#elif defined(ROUTE_RJEM)
API void *_rjem_malloc(size_t n)
{
    return n <= 64 ? pool_get() : NULL;
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
#elif defined(ROUTE_MI)
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

__attribute__((noinline)) void run_pairs(unsigned long n);

__attribute__((noinline)) void run_pairs(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++) {
#if defined(ROUTE_JE)
        sink = je_malloc(64);
        je_free(sink);
#elif defined(ROUTE_JEX)
        sink = je_mallocx(64, 0);
        je_sdallocx(sink, 64, 0);
#elif defined(ROUTE_RJEM)
        sink = _rjem_mallocx(64, 0);
        _rjem_sdallocx(sink, 64, 0);
#elif defined(ROUTE_MI) || defined(ROUTE_MIREAL)
        sink = mi_malloc_aligned(64, 16);
        mi_free(sink);
#elif defined(ROUTE_MALLOCX)
        sink = mallocx(64, 0);
        sdallocx(sink, 64, 0);
#elif defined(ROUTE_DALLOCX)
        sink = mallocx(64, 0);
        dallocx(sink, 0);
#elif defined(ROUTE_CALLOC)
        sink = calloc(1, 64);
        free(sink);
#endif
    }
}

int main(int argc, char **argv)
{
    unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 10) : 1000000;
    /* Warm up: the allocator set up and the hooks judged before the count. */
    for (int i = 0; i < 1000; i++)
        free(malloc(64));
    run_pairs(1000);
    run_pairs(n);
#if defined(ROUTE_CALLOC)
    if (argc > 2) /* imported, never called */
        dallocx(mallocx(64, 0), 0);
#endif
    printf("api_pairs: %lu pairs\n", n);
    return 0;
}

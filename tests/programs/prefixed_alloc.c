/*
 * prefixed_alloc: a program that allocates only through an allocator's own prefixed API,
 * as Redis built from source calls je_malloc and TiKV's Rust code _rjem_mallocx: here a
 * bump allocator of its own under jemalloc's names (je_malloc, je_mallocx, je_calloc,
 * je_realloc, je_sdallocx, je_free), which no interposition can see.
 * tests/integration/reach_hooks.sh runs it at HEAPSIFT_RATE=1 and checks the sites:
 *   site_je_malloc    1000 x 512 bytes, every other one freed with je_sdallocx
 *   site_je_mallocx   500 x 1024 bytes (flags 0), kept
 *   site_je_calloc    300 x (4 x 64) bytes, kept
 *   site_je_realloc   200 blocks of 100 bytes grown to 300, kept (200 + 200 allocations)
 * and prints "prefixed done" (or how many reallocs did not return the grown block: its
 * realloc keeps its result in rax across its call of je_free, as GCC allows).
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#define API __attribute__((visibility("default"), noinline))

static char arena[32 << 20];
static size_t used, freed;

API void *je_malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof(arena))
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

API void *je_mallocx(size_t n, int flags)
{
    return flags == 0 ? je_malloc(n) : NULL;
}

API void je_free(void *p)
{
    freed += p != NULL;
}

API void je_sdallocx(void *p, size_t n, int flags)
{
    freed += p != NULL && n > 0 && flags == 0;
}

API void *je_calloc(size_t n, size_t m)
{
    void *p = je_malloc(n * m);
    static void *(*volatile zero)(void *, int, size_t) = memset; /* not malloc+memset=calloc */
    if (p)
        zero(p, 0, n * m);
    return p;
}

API void *je_realloc(void *p, size_t n)
{
    void *q = je_malloc(n);
    if (q && p)
        memcpy(q, p, n < 100 ? n : 100);
    je_free(p);
    return q;
}

static void *volatile keep[4096];

__attribute__((noinline)) static void site_je_malloc(void)
{
    for (int i = 0; i < 1000; i++) {
        void *p = je_malloc(512);
        if (i % 2)
            je_sdallocx(p, 512, 0);
        else
            keep[i / 2] = p;
    }
}

__attribute__((noinline)) static void site_je_mallocx(void)
{
    for (int i = 0; i < 500; i++)
        keep[500 + i] = je_mallocx(1024, 0);
}

__attribute__((noinline)) static void site_je_calloc(void)
{
    for (int i = 0; i < 300; i++)
        keep[1000 + i] = je_calloc(4, 64);
}

static int bad; /* reallocs whose result is not the block with the old bytes */

__attribute__((noinline)) static void site_je_realloc(void)
{
    for (int i = 0; i < 200; i++) {
        unsigned char *p = je_malloc(100);
        p[0] = (unsigned char)i;
        unsigned char *q = je_realloc(p, 300);
        bad += q < (unsigned char *)arena || q >= (unsigned char *)arena + sizeof(arena) ||
               q[0] != (unsigned char)i;
        keep[1300 + i] = q;
    }
}

int main(void)
{
    site_je_malloc();
    site_je_mallocx();
    site_je_calloc();
    site_je_realloc();
    printf(bad ? "prefixed: %d bad reallocs\n" : "prefixed done\n", bad);
    return keep[0] == NULL;
}

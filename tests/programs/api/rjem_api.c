/*
 * rjem_api: a program that allocates as a Rust binary on tikv-jemallocator does: through
 * _rjem_malloc, _rjem_mallocx (MALLOCX_ALIGN, MALLOCX_ZERO), _rjem_rallocx and
 * _rjem_sdallocx, defined in the executable, with no _rjem_free at all (Rust never calls
 * it and the linker drops it). The allocator is toy_alloc.h's, which never calls malloc.
 * tests/integration/api_hooks.sh runs it at HEAPSIFT_RATE=1 and checks, per site:
 *   site_hold    10 x _rjem_mallocx(1 MiB, MALLOCX_ALIGN(64)), kept: 10485760 bytes live
 *   site_freed   1000 x _rjem_malloc(4096), each freed with _rjem_sdallocx: 4096000
 *                allocated, none live
 *   site_grow    a vector of 64 bytes grown by doubling through _rjem_rallocx to 8 MiB:
 *                18 allocations, 16777152 bytes allocated, 8388608 live
 *   site_zeroed  100 x _rjem_mallocx(3000, MALLOCX_ZERO), every other one freed: 300000
 *                allocated, 150000 live
 * and prints "rjem done" (or what went wrong), through write(2): no stdio buffer.
 */
#include "toy_alloc.h"

#include <string.h>
#include <unistd.h>

#define API __attribute__((visibility("default"), noinline, noclone, used))
#define MALLOCX_ZERO 0x40
#define MALLOCX_ALIGN_OF(f) ((f)&0x3f ? (size_t)1 << ((f)&0x3f) : 1)

API void *_rjem_malloc(size_t n)
{
    return toy_alloc(n, 16, 0);
}

API void *_rjem_mallocx(size_t n, int flags)
{
    return toy_alloc(n, MALLOCX_ALIGN_OF(flags), flags & MALLOCX_ZERO);
}

/* -DREFUSED_SDALLOCX, -DREFUSED_RALLOCX: that entry point opens with a loop that jumps
 * back into its first five bytes, which a jump to a hook would overwrite: patch.c refuses
 * it (api_hooks.sh checks what the reach line says then), and it goes on to the body. */
#define REFUSED_ENTRY(name, body)                                                                  \
    __asm__(".text\n.globl " #name "\n.type " #name ", @function\n" #name ":\n"                    \
            "xor %eax, %eax\n1:\ninc %eax\ncmp $3, %eax\njne 1b\njmp " #body "\n"                  \
            ".size " #name ", .-" #name "\n");

#ifdef REFUSED_SDALLOCX
#define SDALLOCX_NAME rjem_sdallocx_body
REFUSED_ENTRY(_rjem_sdallocx, rjem_sdallocx_body)
void _rjem_sdallocx(void *p, size_t n, int flags);
#else
#define SDALLOCX_NAME _rjem_sdallocx
#endif
API void SDALLOCX_NAME(void *p, size_t n, int flags)
{
    if (n && n <= toy_usable(p) && flags >= 0)
        toy_free(p);
}

#ifdef REFUSED_RALLOCX
#define RALLOCX_NAME rjem_rallocx_body
REFUSED_ENTRY(_rjem_rallocx, rjem_rallocx_body)
void *_rjem_rallocx(void *p, size_t n, int flags);
#else
#define RALLOCX_NAME _rjem_rallocx
#endif
API void *RALLOCX_NAME(void *p, size_t n, int flags)
{
    return toy_realloc(p, n, MALLOCX_ALIGN_OF(flags));
}

static void *volatile keep[256];
static int bad;

__attribute__((noinline)) static void site_hold(void)
{
    for (int i = 0; i < 10; i++) {
        keep[i] = _rjem_mallocx(1 << 20, 6); /* MALLOCX_LG_ALIGN(6): 64 bytes */
        bad += keep[i] == NULL || (uintptr_t)keep[i] % 64 != 0;
    }
}

__attribute__((noinline)) static void site_freed(void)
{
    for (int i = 0; i < 1000; i++) {
        char *p = _rjem_malloc(4096);
        p[0] = 1;
        _rjem_sdallocx(p, 4096, 0);
    }
}

__attribute__((noinline)) static void site_grow(void)
{
    size_t n = 64;
    unsigned char *v = _rjem_malloc(n);
    v[0] = 42;
    while (n < (8u << 20)) {
        n *= 2;
        v = _rjem_rallocx(v, n, 0);
        bad += v == NULL || v[0] != 42;
    }
    keep[20] = v;
}

__attribute__((noinline)) static void site_zeroed(void)
{
    for (int i = 0; i < 100; i++) {
        unsigned char *p = _rjem_mallocx(3000, MALLOCX_ZERO);
        for (int j = 0; j < 3000; j++)
            bad += p[j] != 0;
        if (i % 2)
            _rjem_sdallocx(p, 3000, MALLOCX_ZERO);
        else
            keep[30 + i / 2] = p;
    }
}

int main(void)
{
    site_hold();
    site_freed();
    site_grow();
    site_zeroed();
    const char *msg = bad ? "rjem: bad results\n" : "rjem done\n";
    return write(1, msg, strlen(msg)) < 0 || bad;
}

/*
 * got_alloc: a shared library that is a whole allocator of its own (a bump allocator over
 * one mmap'd arena: malloc, free, calloc, realloc, the aligned forms, malloc_usable_size),
 * linked ahead of libc so that the program's calls and libc's own bind to it. Its free
 * opens with a loop that jumps back into its first five bytes, which a jump to a hook
 * would overwrite: patch.c refuses to patch it in place, and heapsift reaches it through
 * the callers' import slots instead (tests/integration/attach_got.sh). Its free counts the
 * blocks freed and keeps them (a bump allocator reuses nothing).
 * Built by the test: cc -O2 -shared -fPIC -o libgotalloc.so got_alloc.c
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA ((size_t)4 << 30) /* reserved, not committed */
#define HDR 16u

static char *arena;
static size_t used;
static size_t frees;

static char *got_arena(void)
{
    char *a = __atomic_load_n(&arena, __ATOMIC_ACQUIRE);
    if (a)
        return a;
    char *m = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (m == MAP_FAILED)
        return NULL;
    char *none = NULL;
    if (!__atomic_compare_exchange_n(&arena, &none, m, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        munmap(m, ARENA);
        return none;
    }
    return m;
}

/* n bytes aligned to align (a power of two, at least 16), its size in the 16 bytes before. */
static void *got_take(size_t n, size_t align)
{
    char *a = got_arena();
    if (!a || n > ARENA / 2)
        return NULL;
    size_t want = (n + HDR + align + 15) & ~(size_t)15;
    size_t at = __atomic_fetch_add(&used, want, __ATOMIC_RELAXED);
    if (at + want > ARENA)
        return NULL;
    uintptr_t p = ((uintptr_t)a + at + HDR + align - 1) & ~(uintptr_t)(align - 1);
    ((size_t *)p)[-1] = n;
    return (void *)p;
}

__attribute__((visibility("default"))) void *malloc(size_t n)
{
    return got_take(n, 16);
}

__attribute__((visibility("hidden"), used)) void got_free_impl(void *p)
{
    if (p)
        __atomic_fetch_add(&frees, 1, __ATOMIC_RELAXED);
}

__asm__(".text\n.globl free\n.type free, @function\nfree:\n"
        "xor %eax, %eax\n1:\ninc %eax\ncmp $3, %eax\njne 1b\njmp got_free_impl\n"
        ".size free, .-free\n");

__attribute__((visibility("default"))) void *calloc(size_t n, size_t m)
{
    if (m && n > SIZE_MAX / m)
        return NULL;
    void *p = got_take(n * m, 16);
    if (p)
        memset(p, 0, n * m);
    return p;
}

__attribute__((visibility("default"))) size_t malloc_usable_size(void *p)
{
    return p ? ((size_t *)p)[-1] : 0;
}

__attribute__((visibility("default"))) void *realloc(void *p, size_t n)
{
    void *q = got_take(n, 16);
    if (q && p) {
        size_t old = ((size_t *)p)[-1];
        memcpy(q, p, old < n ? old : n);
        got_free_impl(p);
    }
    return q;
}

__attribute__((visibility("default"))) void *memalign(size_t a, size_t n)
{
    return got_take(n, a < 16 ? 16 : a);
}

__attribute__((visibility("default"))) void *aligned_alloc(size_t a, size_t n)
{
    return memalign(a, n);
}

__attribute__((visibility("default"))) int posix_memalign(void **out, size_t a, size_t n)
{
    void *p = memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

__attribute__((visibility("default"))) void *valloc(size_t n)
{
    return memalign(4096, n);
}

__attribute__((visibility("default"))) void *pvalloc(size_t n)
{
    return memalign(4096, (n + 4095) & ~(size_t)4095);
}

/*
 * A stand-in for an allocator that brings its own C++ sized deletes (as jemalloc and
 * tcmalloc do): malloc, free, calloc and realloc are glibc's under their internal names,
 * and operator delete(void *, size_t) and delete[] count their calls, read back with
 * sized_alloc_count(0 or 1). Built by tests/integration/sized_delete.sh.
 */
#include <stddef.h>

void *__libc_malloc(size_t n);
void __libc_free(void *p);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

static long sized_calls[2];

void *malloc(size_t n)
{
    return __libc_malloc(n);
}

void free(void *p)
{
    __libc_free(p);
}

void *calloc(size_t n, size_t m)
{
    return __libc_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    return __libc_realloc(p, n);
}

void _ZdlPvm(void *p, size_t n)
{
    (void)n;
    __atomic_add_fetch(&sized_calls[0], 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

void _ZdaPvm(void *p, size_t n)
{
    (void)n;
    __atomic_add_fetch(&sized_calls[1], 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

long sized_alloc_count(int which)
{
    return __atomic_load_n(&sized_calls[which != 0], __ATOMIC_RELAXED);
}

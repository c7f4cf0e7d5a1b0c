/*
 * A stand-in for an allocator that brings its own C++ operators (as jemalloc and tcmalloc
 * do): malloc, free, calloc and realloc are glibc's under their internal names; operator
 * delete(void *, size_t), delete[], new and new[] count their calls, read back with
 * cxx_alloc_count(0 delete, 1 delete[], 2 new, 3 new[]). Built with -DNEW_VIA_MALLOC,
 * its operator new and new[] call malloc through the symbol, as libstdc++'s do. Built by
 * tests/integration/cxx_forward.sh.
 */
#include <stddef.h>

void *__libc_malloc(size_t n);
void __libc_free(void *p);
void *__libc_calloc(size_t n, size_t m);
void *__libc_realloc(void *p, size_t n);

static long calls[4];

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
    __atomic_add_fetch(&calls[0], 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

void _ZdaPvm(void *p, size_t n)
{
    (void)n;
    __atomic_add_fetch(&calls[1], 1, __ATOMIC_RELAXED);
    __libc_free(p);
}

static void *counted_new(int which, size_t n)
{
    __atomic_add_fetch(&calls[which], 1, __ATOMIC_RELAXED);
#ifdef NEW_VIA_MALLOC
    void *(*volatile via)(size_t) = malloc; /* through the symbol, not this file's copy */
    return via(n);
#else
    return __libc_malloc(n);
#endif
}

void *_Znwm(size_t n)
{
    return counted_new(2, n);
}

void *_Znam(size_t n)
{
    return counted_new(3, n);
}

long cxx_alloc_count(int which)
{
    return which >= 0 && which < 4 ? __atomic_load_n(&calls[which], __ATOMIC_RELAXED) : -1;
}

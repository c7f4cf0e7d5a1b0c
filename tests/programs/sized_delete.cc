// sized_delete: N rounds of operator new(64) / sized operator delete(p, 64) and of
// operator new[](128) / sized operator delete[](p, 128), then prints how many sized deletes
// the fake allocator of tests/lib/sized_alloc.c received ("-1 -1" when it is not loaded).
// For tests/integration/sized_delete.sh.
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <new>

// Keeps the compiler from pairing up and removing the new/delete calls.
static void *__attribute__((noinline)) opaque(void *p)
{
    __asm__ volatile("" : "+r"(p)::"memory");
    return p;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? std::atol(argv[1]) : 1000;
    for (long i = 0; i < n; i++) {
        void *p = opaque(::operator new(64));
        ::operator delete(p, 64);
        void *q = opaque(::operator new[](128));
        ::operator delete[](q, 128);
    }
    auto count = reinterpret_cast<long (*)(int)>(dlsym(RTLD_DEFAULT, "sized_alloc_count"));
    std::printf("%ld %ld\n", count ? count(0) : -1L, count ? count(1) : -1L);
    return 0;
}

// cxx_forward: N rounds of operator new(64) / sized operator delete(p, 64) and of
// operator new[](128) / sized operator delete[](p, 128), then prints how many calls of its
// delete, delete[], new and new[] the stand-in allocator of tests/lib/cxx_alloc.c
// received ("-1 -1 -1 -1" when it is not loaded).
// For tests/integration/cxx_forward.sh.
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
    auto count = reinterpret_cast<long (*)(int)>(dlsym(RTLD_DEFAULT, "cxx_alloc_count"));
    for (int k = 0; k < 4; k++)
        std::printf(k < 3 ? "%ld " : "%ld\n", count ? count(k) : -1L);
    return 0;
}

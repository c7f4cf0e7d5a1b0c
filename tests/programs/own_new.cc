/*
 * own_new: an executable that defines malloc and free itself (a bump allocator over a
 * static arena) and C++ operator new and delete, as programs with an allocator of their
 * own do. By default operator new calls this malloc, as most such programs' does (so
 * heapsift, which hooks both, must count each block once); built with -DOWN_NEW_DIRECT it
 * takes the arena itself, as tcmalloc's does. malloc only jumps to the arena's function
 * (2 bytes: hooked through the padding after it). tests/integration/reach_hooks.sh runs both
 * at HEAPSIFT_RATE=1 and checks:
 *   site_new_plain   1000 x new Obj (2000 bytes), every other one deleted (sized delete)
 *   site_new_array    700 x new char[1000], kept
 * and prints "own_new done".
 */
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#define OWN __attribute__((visibility("default"), noinline))

static char arena[64 << 20];
static size_t used, frees;

/* Not inlined: malloc is then only a 2-byte jump here, which heapsift hooks through the
 * alignment padding after it (patch.c). */
static __attribute__((noinline)) void *arena_take(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof(arena))
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

extern "C" {
OWN void *malloc(size_t n)
{
    return arena_take(n);
}

OWN void free(void *p)
{
    frees += p != NULL;
}

OWN void *calloc(size_t a, size_t b)
{
    void *p = arena_take(a * b);
    if (p)
        memset(p, 0, a * b);
    return p;
}

OWN void *realloc(void *p, size_t n)
{
    void *q = arena_take(n);
    if (q && p)
        memcpy(q, p, n);
    return q;
}
}

static void *own_new(size_t n)
{
#ifdef OWN_NEW_DIRECT
    void *p = arena_take(n);
#else
    void *p = malloc(n);
#endif
    if (!p)
        throw std::bad_alloc();
    return p;
}

OWN void *operator new(size_t n)
{
    return own_new(n);
}

OWN void *operator new[](size_t n)
{
    return own_new(n);
}

OWN void operator delete(void *p) noexcept
{
    free(p);
}

OWN void operator delete(void *p, size_t) noexcept
{
    free(p);
}

OWN void operator delete[](void *p) noexcept
{
    free(p);
}

OWN void operator delete[](void *p, size_t) noexcept
{
    free(p);
}

struct Obj {
    char bytes[2000];
};

static Obj *volatile objs[1000];
static char *volatile arrays[700];

static __attribute__((noinline)) void site_new_plain()
{
    for (int i = 0; i < 1000; i++)
        objs[i] = new Obj;
    for (int i = 0; i < 1000; i += 2)
        delete objs[i];
}

static __attribute__((noinline)) void site_new_array()
{
    for (int i = 0; i < 700; i++)
        arrays[i] = new char[1000];
}

int main()
{
    site_new_plain();
    site_new_array();
    std::printf("own_new done\n");
    return arrays[0] == NULL;
}

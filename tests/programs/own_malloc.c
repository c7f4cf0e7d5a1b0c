/*
 * own_malloc: an executable that defines malloc, free, calloc and realloc itself (a bump
 * allocator over a static arena), as programs with an allocator of their own do: the
 * dynamic linker binds every call to these, before any preloaded library's.
 * tests/integration/reach_detect.sh runs it.
 *   own_malloc N   N allocations of 1000 bytes; prints "done N"
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Exported, as a C program's malloc is when built without -fvisibility=hidden (which
   the tests' build uses): libc's own calls bind to it too. */
#ifdef OWN_HIDDEN /* reach_hooks.sh: not exported, then stripped: no name shows it */
#define OWN __attribute__((visibility("hidden"), noinline))
#else
#define OWN __attribute__((visibility("default"), noinline))
#endif

static char arena[64 << 20];
static size_t used;

OWN void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof(arena))
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

static size_t frees;

#ifdef OWN_REFUSED_FREE
/* reach_hooks.sh: a free whose loop jumps back into its first five bytes, which a jump to
   a hook would overwrite: patch.c refuses it, and nothing of this allocator is hooked */
__asm__(".text\n.globl free\n.type free, @function\nfree:\n"
        "xor %eax, %eax\n1:\ninc %eax\ncmp $3, %eax\njne 1b\nret\n.size free, .-free\n");
#else
OWN void free(void *p)
{
    frees += p != NULL; /* counts, so that it is more than a bare `ret` */
}
#endif

OWN void *calloc(size_t a, size_t b)
{
    /* memset through a volatile pointer: GCC would turn malloc + memset into a call of
       calloc, this very function */
    static void *(*volatile zero)(void *, int, size_t) = memset;
    void *p = malloc(a * b);
    if (p)
        zero(p, 0, a * b);
    return p;
}

OWN void *realloc(void *p, size_t n)
{
    void *q = malloc(n);
    if (q && p)
        memcpy(q, p, n);
    return q;
}

/* main keeps values in registers across its calls of malloc, as GCC lets a caller in the
   callee's translation unit do (-fipa-ra): the hooks keep them (interpose.c). */
int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    static void *keep[100000];
    for (int i = 0; i < n && i < 100000; i++)
        keep[i] = malloc(1000);
    printf("done %d\n", n);
    return keep[0] == NULL;
}

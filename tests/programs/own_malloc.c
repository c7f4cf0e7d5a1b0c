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

static char arena[64 << 20];
static size_t used;

void *malloc(size_t n)
{
    n = (n + 15) & ~(size_t)15;
    if (used + n > sizeof(arena))
        return NULL;
    void *p = arena + used;
    used += n;
    return p;
}

void free(void *p)
{
    (void)p;
}

void *calloc(size_t a, size_t b)
{
    void *p = malloc(a * b);
    if (p)
        memset(p, 0, a * b);
    return p;
}

void *realloc(void *p, size_t n)
{
    void *q = malloc(n);
    if (q && p)
        memcpy(q, p, n);
    return q;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1000;
    static void *keep[100000];
    for (int i = 0; i < n && i < 100000; i++)
        keep[i] = malloc(1000);
    printf("done %d\n", n);
    return keep[0] == NULL;
}

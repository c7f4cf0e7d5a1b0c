/*
 * Built by patch_static_alloc.sh with src/preload/reach/patch.c and a static allocator archive
 * (libtcmalloc_minimal.a, libjemalloc_pic.a): this PIE executable's own malloc and free
 * shadow every preloaded one. Patches both, checks the hooks see each call of a loop and
 * the program runs on; removes the patches and checks the hooks fall silent.
 * Prints "ok" and exits 0, or names what failed and exits 1.
 */
#define _GNU_SOURCE
#include "reach/patch.h"

#include <stdio.h>
#include <stdlib.h>

static void *(*real_malloc)(size_t);
static void (*real_free)(void *);
static long nmalloc, nfree;

static void *hook_malloc(size_t n)
{
    nmalloc++;
    return real_malloc(n);
}

static void hook_free(void *p)
{
    nfree++;
    real_free(p);
}

static long run(void)
{
    void *(*volatile m)(size_t) = malloc;
    void (*volatile f)(void *) = free;
    long sum = 0;
    for (int i = 0; i < 100000; i++) {
        char *p = m(16 + (size_t)(i % 4000));
        p[0] = (char)i;
        sum += p[0];
        f(p);
    }
    return sum;
}

int main(void)
{
    char why[200];
    long before = run();
    if (hs_patch_install((void *)malloc, (void *)hook_malloc, (void **)&real_malloc, why,
                         sizeof(why)) != 0 ||
        hs_patch_install((void *)free, (void *)hook_free, (void **)&real_free, why, sizeof(why)) !=
            0) {
        printf("install refused: %s\n", why);
        return 1;
    }
    long m0 = nmalloc, f0 = nfree, during = run();
    if (nmalloc - m0 != 100000 || nfree - f0 != 100000 || during != before) {
        printf("patched: %ld mallocs, %ld frees seen of 100000\n", nmalloc - m0, nfree - f0);
        return 1;
    }
    if (hs_patch_remove((void *)malloc) != 0 || hs_patch_remove((void *)free) != 0) {
        printf("remove failed\n");
        return 1;
    }
    m0 = nmalloc;
    f0 = nfree;
    if (run() != before || nmalloc != m0 || nfree != f0) {
        printf("after remove: hooks still ran\n");
        return 1;
    }
    printf("ok\n");
    return 0;
}

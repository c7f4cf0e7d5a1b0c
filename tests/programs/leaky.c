/*
 * leaky: a C program with known leaks, for the leak report's tests. Every site is its own
 * non-inlined function with a unique name; the program prints the truth on stdout, one
 * line per site still holding memory at exit:
 *   SITE NAME BYTES OBJECTS FILE:LINE SUPPRESSED_BY
 * (FILE:LINE is the allocation call, "-" when unknown; SUPPRESSED_BY is "-" for a leak the
 * report must list, else the suppression pattern meant to hide it).
 *
 * usage: leaky [all|none] [--exit N]
 *   all (default)  leak_big: 10 x 4096 B, lost; leak_realloc: one 300 B block grown by
 *                  realloc, lost; leak_small: 3 x 24 B from calloc, lost; cache_fill: a
 *                  global cache of 5 x 100 B (suppressed by its function's name);
 *                  registry_put: 2 x 64 B, code from "registry.c" (suppressed by file);
 *                  zlib's deflate state, allocated inside libz.so through a counting
 *                  allocator (suppressed by module); plus churn that frees everything.
 *   none           the same churn only: nothing is left at exit.
 *   --exit N       exit status N (default 0).
 * It never reads heapsift state; it runs the same with or without the library.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site.h"

static void *volatile g_sink;
static void *volatile g_cache[5];
static void *volatile g_registry[2];
static int g_line_big, g_line_small, g_line_realloc;

static void *xalloc(void *p)
{
    if (!p) {
        fprintf(stderr, "leaky: out of memory\n");
        exit(99);
    }
    memset(p, 0x5a, 1);
    g_sink = p;
    return p;
}

SITE void leak_big(void)
{
    for (int i = 0; i < 10; i++) {
        g_line_big = __LINE__ + 1;
        xalloc(malloc(4096));
    }
}

SITE void leak_small(void)
{
    for (int i = 0; i < 3; i++) {
        g_line_small = __LINE__ + 1;
        xalloc(calloc(1, 24));
    }
}

SITE void leak_realloc(void)
{
    void *p = xalloc(malloc(10));
    g_line_realloc = __LINE__ + 1;
    xalloc(realloc(p, 300));
}

SITE void cache_fill(void)
{
    for (int i = 0; i < 5; i++)
        g_cache[i] = xalloc(malloc(100));
}

SITE void churn(void)
{
    for (int i = 0; i < 1000; i++)
        free(xalloc(malloc(50 + (size_t)i % 7)));
}

/* zlib's z_stream, as far as deflateInit_ needs it (zlib.h is not needed to build). */
typedef struct {
    const void *next_in;
    unsigned avail_in;
    unsigned long total_in;
    void *next_out;
    unsigned avail_out;
    unsigned long total_out;
    const char *msg;
    void *state;
    void *(*zalloc)(void *, unsigned, unsigned);
    void (*zfree)(void *, void *);
    void *opaque;
    int data_type;
    unsigned long adler, reserved;
} zstream_t;

static unsigned long g_z_bytes, g_z_objects;
static zstream_t g_z;

SITE void *zlib_alloc(void *opaque, unsigned items, unsigned size)
{
    (void)opaque;
    g_z_bytes += (unsigned long)items * size;
    g_z_objects++;
    return xalloc(malloc((size_t)items * size));
}

SITE void zlib_free(void *opaque, void *p)
{
    (void)opaque;
    free(p); /* never called: the stream is left open */
}

/* Returns 0 when libz could not be loaded (its line is then not printed). */
SITE int leak_in_libz(void)
{
    void *h = dlopen("libz.so.1", RTLD_NOW);
    int (*init)(zstream_t *, int, const char *, int) = h ? dlsym(h, "deflateInit_") : NULL;
    const char *(*version)(void) = h ? dlsym(h, "zlibVersion") : NULL;
    if (!init || !version)
        return 0;
    g_z.zalloc = zlib_alloc;
    g_z.zfree = zlib_free;
    return init(&g_z, 6, version(), (int)sizeof(g_z)) == 0;
}

SITE void registry_put(void);

int main(int argc, char **argv)
{
    int all = 1, status = 0, z = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "none") == 0)
            all = 0;
        else if (strcmp(argv[i], "--exit") == 0 && i + 1 < argc)
            status = atoi(argv[++i]);
    }
    churn();
    if (all) {
        leak_big();
        leak_small();
        leak_realloc();
        cache_fill();
        registry_put();
        z = leak_in_libz();
        printf("SITE leak_big 40960 10 leaky.c:%d -\n", g_line_big);
        printf("SITE leak_realloc 300 1 leaky.c:%d -\n", g_line_realloc);
        printf("SITE leak_small 72 3 leaky.c:%d -\n", g_line_small);
        printf("SITE cache_fill 500 5 - cache_fill\n");
        printf("SITE registry_put 128 2 - registry.c\n");
        if (z)
            printf("SITE zlib_alloc %lu %lu - libz.so\n", g_z_bytes, g_z_objects);
    }
    return status;
}

/* Last in the file: from here on the code claims to come from registry.c, so a
 * suppression by source file name has a target. */
#line 1 "registry.c"
SITE void registry_put(void)
{
    for (int i = 0; i < 2; i++)
        g_registry[i] = xalloc(malloc(64));
}

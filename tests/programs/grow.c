/*
 * grow: a program with a tunable allocation site, for the diff noise test. site_steady
 * always allocates 4000 objects of 4096 bytes, site_small 100000 of 64 bytes;
 * site_grow allocates N objects of 4096 bytes (argv[1], default 4000). All stay live
 * until exit. usage: grow [N]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site.h"

static volatile unsigned long g_sink;

static void keep(void *p, size_t n)
{
    if (!p) {
        fprintf(stderr, "grow: out of memory\n");
        exit(99);
    }
    memset(p, 0x5a, n);
    g_sink += ((unsigned char *)p)[n - 1];
}

SITE void site_steady(void)
{
    for (int i = 0; i < 4000; i++)
        keep(malloc(4096), 4096);
}

SITE void site_small(void)
{
    for (int i = 0; i < 100000; i++)
        keep(malloc(64), 64);
}

SITE void site_grow(long n)
{
    for (long i = 0; i < n; i++)
        keep(malloc(4096), 4096);
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 4000;
    site_steady();
    site_small();
    site_grow(n);
    return 0;
}

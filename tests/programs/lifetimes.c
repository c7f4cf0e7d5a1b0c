/*
 * lifetimes: a C program whose allocation sites have known lifetimes, for the lifetime
 * split of the profile (the "lifetime" label). Prints the truth on stdout, one line per
 * site: NAME flat ALLOC_OBJECTS ALLOC_SPACE INUSE_OBJECTS INUSE_SPACE (the --expect format
 * of tests/programs/sites.c).
 *   site_short  1000 x 100 B, each freed right after it is allocated (well under 1 ms)
 *   site_hold   20 x 1000 B, freed together after a sleep of 200 ms (so at least 200 ms)
 *   site_never  10 x 500 B, never freed
 * It never reads heapsift state; it runs the same with or without the library.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "site.h"

static void *volatile g_sink;
static void *volatile g_hold[20];
static void *volatile g_never[10];

static void *touch(void *p)
{
    if (!p) {
        fprintf(stderr, "lifetimes: out of memory\n");
        exit(99);
    }
    memset(p, 1, 1);
    g_sink = p;
    return p;
}

SITE void site_short(void)
{
    for (int i = 0; i < 1000; i++)
        free(touch(malloc(100)));
}

SITE void site_hold(void)
{
    for (int i = 0; i < 20; i++)
        g_hold[i] = touch(malloc(1000));
}

SITE void site_never(void)
{
    for (int i = 0; i < 10; i++)
        g_never[i] = touch(malloc(500));
}

int main(void)
{
    struct timespec ms200 = {0, 200 * 1000 * 1000};
    site_hold();
    site_short();
    site_never();
    while (nanosleep(&ms200, &ms200) != 0)
        ;
    for (int i = 0; i < 20; i++)
        free(g_hold[i]);
    printf("site_short flat 1000 100000 0 0\n");
    printf("site_hold flat 20 20000 0 0\n");
    printf("site_never flat 10 5000 10 5000\n");
    return 0;
}

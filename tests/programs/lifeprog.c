/*
 * Known lifetimes for `heapsift lifetimes` (tests/integration/lifetimes.sh):
 *   site_short   20000 blocks of 1 KiB, each freed right after it is written (lifetimes of
 *                a microsecond or so: churn)
 *   site_medium  2000 blocks of 4 KiB held for MEDIUM_MS (default 30) milliseconds, then
 *                freed (lifetimes between 10 ms and 1 s)
 *   site_live    2000 blocks of 4 KiB never freed
 * usage: lifeprog [MEDIUM_MS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static volatile unsigned long sink;
static void *held[2000], *kept[2000];

static void *block(size_t n, unsigned char tag)
{
    unsigned char *p = malloc(n);
    if (!p) {
        fprintf(stderr, "lifeprog: out of memory\n");
        exit(99);
    }
    memset(p, tag, n);
    sink += p[n - 1];
    return p;
}

__attribute__((noinline)) void site_short(void)
{
    for (int i = 0; i < 20000; i++)
        free(block(1024, 1));
}

__attribute__((noinline)) void site_medium(void)
{
    for (int i = 0; i < 2000; i++)
        held[i] = block(4096, 2);
}

__attribute__((noinline)) void site_live(void)
{
    for (int i = 0; i < 2000; i++)
        kept[i] = block(4096, 3);
}

int main(int argc, char **argv)
{
    long ms = argc > 1 ? atol(argv[1]) : 30;
    site_live();
    site_short(); /* before site_medium: 20,000 sampled allocations take long on a loaded
                     machine, and between site_medium and its frees they pushed the medium
                     blocks' lifetimes past 1 s (docs_views saw "holds" for "medium") */
    site_medium();
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    nanosleep(&ts, NULL);
    for (int i = 0; i < 2000; i++)
        free(held[i]);
    return 0;
}

/*
 * sitehist: allocation sites whose live bytes change at known rates, for the web UI's
 * per-site history (tests/integration/web_history.sh). Before the first step:
 *   site_const  allocates 128 blocks of 8 KiB, kept to the end (1 MiB, constant)
 *   site_fall_init  allocates 96 blocks of 4 KiB, of which site_fall frees 8 a step
 *               (-32 KiB a step)
 *   site_tiny   allocates 3 blocks of 4 KiB, kept (12 KiB, constant)
 * then, in each of STEPS steps:
 *   site_rise   allocates 4 blocks of 8 KiB (+32 KiB a step), reached from two callers:
 *               from_left (3 blocks) and from_right (1 block), so it has two stacks
 *   site_slow   allocates 4 blocks of 4 KiB (+16 KiB a step)
 * and after each step writes DIR/step.NNN.pb.gz with heapsift_dump. So after step s
 * (from 0) the live bytes are: site_const 1048576, site_fall_init 393216 - 32768 (s + 1),
 * site_rise 32768 (s + 1) (from_left 3/4 of it), site_slow 16384 (s + 1), site_tiny
 * 12288: every site above pprof's 0.5% node fraction, so `heapsift top` lists them all.
 * Built with HEAPSIFT_WEAK: runs with or without the library.
 * usage: sitehist STEPS DIR
 */
#define HEAPSIFT_WEAK
#include <heapsift.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site.h"

#define MAXKEEP 4096

static void *kept[MAXKEEP], *falling[96];
static size_t nkept, nfalling;
static volatile unsigned long sink;

static void keep(void *p, size_t n)
{
    if (!p || nkept == MAXKEEP) {
        fprintf(stderr, "sitehist: out of memory\n");
        exit(99);
    }
    memset(p, 0x5a, n);
    sink += ((unsigned char *)p)[n - 1];
    kept[nkept++] = p;
}

SITE void site_const(void)
{
    for (int i = 0; i < 128; i++)
        keep(malloc(8192), 8192);
}

SITE void site_fall_init(void)
{
    for (int i = 0; i < 96; i++) {
        falling[i] = malloc(4096);
        if (!falling[i])
            exit(99);
        memset(falling[i], 1, 4096);
    }
    nfalling = 96;
}

SITE void site_fall(void)
{
    for (int i = 0; i < 8 && nfalling; i++)
        free(falling[--nfalling]);
}

SITE void site_rise(int blocks)
{
    for (int i = 0; i < blocks; i++)
        keep(malloc(8192), 8192);
}

SITE void from_left(void)
{
    site_rise(3);
    sink++; /* no tail call: from_left stays on the stack */
}

SITE void from_right(void)
{
    site_rise(1);
    sink++;
}

SITE void site_slow(void)
{
    for (int i = 0; i < 4; i++)
        keep(malloc(4096), 4096);
}

SITE void site_tiny(void)
{
    for (int i = 0; i < 3; i++)
        keep(malloc(4096), 4096);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: sitehist STEPS DIR\n");
        return 1;
    }
    int steps = atoi(argv[1]);
    site_const();
    site_fall_init();
    site_tiny();
    for (int s = 0; s < steps; s++) {
        site_fall();
        from_left();
        from_right();
        site_slow();
        char path[4096];
        snprintf(path, sizeof(path), "%s/step.%03d.pb.gz", argv[2], s);
        int rc = heapsift_dump(path);
        if (rc)
            fprintf(stderr, "sitehist: heapsift_dump %s: %d\n", path, rc);
    }
    return 0;
}

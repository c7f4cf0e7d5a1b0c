/*
 * Profiles in heapsift's lifetimes format (docs/formats.md, "Lifetimes") with known
 * truth, for tests/integration/lifetimes.sh: stacks main > site_churn, site_hold,
 * site_mixed, site_live, site_nolife; each stack's freed allocations split into samples
 * with a numeric label "lifetime" = the bucket's upper bound (1e3 .. 1e11 ns, INT64_MAX for
 * longer), inuse 0, and the live part in a sample without the label. Random amounts per
 * seed. UNIT "ms" writes the bounds in milliseconds instead (1e-3 .. 1e5 ms are written
 * as 1 .. 100000 ms from 1 ms up: robustness to other units and bounds).
 * Prints the truth on stdout, one line per site (alloc_space, with SHORT = 1 ms and
 * LONG = 1 s): "SITE TOTAL SHORT MID LONG LIVE".
 * usage: gen_lifetimes OUT.pb.gz SEED [ns|ms]. Built by the test, not by CMake.
 */
#include "model/pprof.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned seed;
static int64_t rnd(int64_t n)
{
    return n > 0 ? (int64_t)(rand_r(&seed) % (unsigned)n) : 0;
}

/* Bucket upper bounds in ns; the last is INT64_MAX ("longer"). */
static const int64_t bounds_ns[] = {1000,      10000,      100000,      1000000,      10000000,
                                    100000000, 1000000000, 10000000000, 100000000000, INT64_MAX};
#define NB 10

/* weights per bucket (relative) for each kind of site */
static const int shapes[5][NB + 1] = {
    /* 0..NB-1: buckets, NB: live */
    {30, 40, 20, 10, 0, 0, 0, 0, 0, 0, 0},     /* churn: all under 1 ms */
    {0, 0, 0, 0, 0, 0, 1, 20, 30, 9, 40},      /* hold: long or live */
    {10, 0, 10, 10, 20, 10, 10, 10, 0, 0, 20}, /* mixed */
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100},       /* live only */
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100},       /* no lifetime at all (alloc == inuse) */
};
static const char *sites[5] = {"site_churn", "site_hold", "site_mixed", "site_live", "site_nolife"};

int main(int argc, char **argv)
{
    if (argc < 3)
        return 2;
    seed = (unsigned)atoi(argv[2]);
    bool ms = argc > 3 && strcmp(argv[3], "ms") == 0;
    hs_profile_t *p = hs_profile_new();
    hs_profile_add_sample_type(p, "alloc_objects", "count");
    hs_profile_add_sample_type(p, "alloc_space", "bytes");
    hs_profile_add_sample_type(p, "inuse_objects", "count");
    hs_profile_add_sample_type(p, "inuse_space", "bytes");
    p->default_sample_type = hs_profile_str(p, "inuse_space");
    p->period_type.type = hs_profile_str(p, "space");
    p->period_type.unit = hs_profile_str(p, "bytes");
    p->period = 524288;
    hs_line_t lm = {hs_profile_add_function(p, "main", "main", "gen.c", 1), 10};
    uint64_t lmain = hs_profile_add_location(p, 0, 0x1000, &lm, 1);
    for (int k = 0; k < 5; k++) {
        hs_line_t ls = {hs_profile_add_function(p, sites[k], sites[k], "gen.c", 20), 30};
        uint64_t stack[2] = {hs_profile_add_location(p, 0, 0x2000 + 0x100 * (uint64_t)k, &ls, 1),
                             lmain};
        int64_t size = 64 << rnd(8), tot[4] = {0};
        for (int b = 0; b <= NB; b++) {
            if (!shapes[k][b])
                continue;
            int64_t n = shapes[k][b] * (1 + rnd(200));
            int64_t v[4] = {n, n * size, b == NB ? n : 0, b == NB ? n * size : 0};
            hs_profile_add_sample(p, stack, 2, v);
            if (b < NB && k != 4) {
                int64_t bound = bounds_ns[b];
                if (ms)
                    bound =
                        bound == INT64_MAX ? INT64_MAX : (bound < 1000000 ? 1 : bound / 1000000);
                hs_profile_add_label(p, p->nsamples - 1, "lifetime", NULL, bound,
                                     ms ? "milliseconds" : "nanoseconds");
            }
            /* truth: SHORT <= 1 ms bound, LONG: lower end >= 1 s, MID the rest */
            int64_t lower = b == 0 ? 0 : bounds_ns[b - 1];
            int which = b == NB ? 3 : bounds_ns[b] <= 1000000 ? 0 : lower >= 1000000000 ? 2 : 1;
            tot[which] += n * size;
        }
        printf("%s %lld %lld %lld %lld %lld\n", sites[k],
               (long long)(tot[0] + tot[1] + tot[2] + tot[3]), (long long)tot[0], (long long)tot[1],
               (long long)tot[2], (long long)tot[3]);
    }
    int rc = hs_pprof_write_file(p, argv[1]);
    hs_profile_free(p);
    return rc ? 1 : 0;
}

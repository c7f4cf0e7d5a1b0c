/*
 * Unit test of jeprof's order of arithmetic on jemalloc heap_v2 files (read_legacy.c, the
 * report model): a generated file of many records of small objects at jemalloc's default
 * rate, several of them on each leaf, is read, and against jeprof's AdjustSamples computed
 * here from each record (ratio = (bytes/count)/rate, both numbers times
 * 1/(1-exp(-ratio)), in doubles as Perl computes them):
 *  - each sample's unrounded values are that formula's;
 *  - its integer values are within one of them (never below the truncation) and add up,
 *    per sample type, to the truncated sum, jeprof's total;
 *  - the report's total is that truncated sum, and each leaf's flat and each caller's cum
 *    the truncated sum of its records' floats, not the sum of truncated records (which
 *    the file is made to make lower).
 */
#include "readers/read_legacy.h"
#include "reports/report.h"

#include "check.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NLEAVES = 7, NCALLERS = 5, RATE = 524288 };

/* A record's counts, the same function of its index for the file and the checks. */
static void rec_counts(int i, int64_t q[4])
{
    int64_t size = 8 + (i * 37) % 700, n = 1 + i % 4;
    q[0] = n;
    q[1] = n * size;
    q[2] = n + 2 + i % 3;
    q[3] = q[2] * size;
}

/* jeprof's AdjustSamples for one (count, bytes) pair. */
static void jeprof_adjust(int64_t n, int64_t s, double *fn, double *fs)
{
    double ratio = ((double)s * 1.0 / (double)n) / RATE;
    double scale = 1 / (1 - exp(-ratio));
    *fn = (double)n * scale;
    *fs = (double)s * scale;
}

static char *make_file(size_t *len)
{
    size_t cap = 1 << 16;
    char *b = malloc(cap);
    size_t n = (size_t)snprintf(b, cap, "heap_v2/%d\n  t*: 1: 1 [1: 1]\n", RATE);
    for (int i = 0; i < NLEAVES * NCALLERS; i++) {
        int64_t q[4];
        rec_counts(i, q);
        n += (size_t)snprintf(b + n, cap - n,
                              "@ 0x%x 0x%x 0x9001\n  t*: %lld: %lld [%lld: %lld]\n"
                              "  t0: %lld: %lld [%lld: %lld]\n",
                              0x1001 + 0x100 * (i % NLEAVES), 0x5001 + 0x100 * (i / NLEAVES),
                              (long long)q[0], (long long)q[1], (long long)q[2], (long long)q[3],
                              (long long)q[0], (long long)q[1], (long long)q[2], (long long)q[3]);
    }
    n += (size_t)snprintf(b + n, cap - n, "\nMAPPED_LIBRARIES:\n");
    *len = n;
    return b;
}

/* The floats of record i in the profile's type order: alloc n, alloc s, inuse n, inuse s. */
static void rec_floats(int i, double f[4])
{
    int64_t q[4];
    rec_counts(i, q);
    jeprof_adjust(q[2], q[3], &f[0], &f[1]);
    jeprof_adjust(q[0], q[1], &f[2], &f[3]);
}

static void test_samples(const hs_profile_t *p)
{
    double sum[4] = {0};
    int64_t isum[4] = {0}, tsum[4] = {0};
    CHECK(p->ntypes == 4, "%zu sample types", p->ntypes);
    CHECK(p->nsamples == NLEAVES * NCALLERS, "%zu samples", p->nsamples);
    for (size_t i = 0; i < p->nsamples && p->ntypes == 4; i++) {
        const hs_sample_t *s = &p->samples[i];
        double f[4];
        rec_floats((int)i, f);
        CHECK(s->fvalues != NULL, "sample %zu has no unrounded values", i);
        for (int t = 0; t < 4 && s->fvalues; t++) {
            CHECK(s->fvalues[t] == f[t], "sample %zu type %d: %.17g, jeprof %.17g", i, t,
                  s->fvalues[t], f[t]);
            CHECK(s->values[t] == (int64_t)f[t] || s->values[t] == (int64_t)f[t] + 1,
                  "sample %zu type %d: %lld for %.6f", i, t, (long long)s->values[t], f[t]);
            sum[t] += f[t];
            isum[t] += s->values[t];
            tsum[t] += (int64_t)f[t];
        }
    }
    for (int t = 0; t < 4; t++) {
        CHECK(isum[t] == (int64_t)sum[t], "type %d: integers add up to %lld, jeprof %lld", t,
              (long long)isum[t], (long long)(int64_t)sum[t]);
        /* The file is meant to show the difference: truncating first loses some. */
        CHECK(tsum[t] < (int64_t)sum[t], "type %d: truncated records %lld, sum %.3f", t,
              (long long)tsum[t], sum[t]);
    }
}

/* Flat of leaf l (address 0x1000 + 0x100 l after the reader's minus one) and cum of
 * caller c (0x5000 + 0x100 c), as jeprof computes them for type t. */
static void jeprof_node_sums(int t, double flat[NLEAVES], double cum[NCALLERS], double *total)
{
    memset(flat, 0, NLEAVES * sizeof(double));
    memset(cum, 0, NCALLERS * sizeof(double));
    *total = 0;
    for (int i = 0; i < NLEAVES * NCALLERS; i++) {
        double f[4];
        rec_floats(i, f);
        flat[i % NLEAVES] += f[t];
        cum[i / NLEAVES] += f[t];
        *total += f[t];
    }
}

static void test_report(const hs_profile_t *p, const char *type, int t)
{
    hs_report_t r;
    hs_report_opts_t o = {.sample_type = type, .gran = HS_GRAN_ADDRESSES, .no_drop_frames = true};
    char err[256] = "";
    const hs_profile_t *profs[1] = {p};
    int sign = 1;
    int rc = hs_report_build(&r, profs, &sign, 1, &o, err, sizeof(err));
    CHECK(rc == 0, "%s: report: %s", type, err);
    if (rc)
        return;
    double flat[NLEAVES], cum[NCALLERS], total;
    jeprof_node_sums(t, flat, cum, &total);
    CHECK(r.fractional, "%s: report not fractional", type);
    CHECK(r.total == (int64_t)total, "%s: total %lld, jeprof %.3f", type, (long long)r.total,
          total);
    int seen = 0;
    for (size_t i = 0; i < r.nnodes; i++) {
        const hs_rnode_t *n = &r.nodes[i];
        uint64_t a = n->address;
        if (a >= 0x1000 && a < 0x1000 + 0x100 * NLEAVES && a % 0x100 == 0) {
            double want = flat[(a - 0x1000) / 0x100];
            CHECK(n->flat == (int64_t)want, "%s: flat at %#llx %lld, jeprof %.3f", type,
                  (unsigned long long)a, (long long)n->flat, want);
            seen++;
        } else if (a >= 0x5000 && a < 0x5000 + 0x100 * NCALLERS && a % 0x100 == 0) {
            double want = cum[(a - 0x5000) / 0x100];
            CHECK(n->cum == (int64_t)want, "%s: cum at %#llx %lld, jeprof %.3f", type,
                  (unsigned long long)a, (long long)n->cum, want);
            seen++;
        }
    }
    CHECK(seen == NLEAVES + NCALLERS, "%s: %d of %d nodes found", type, seen, NLEAVES + NCALLERS);
    hs_report_free(&r);
}

int main(void)
{
    size_t len;
    char *text = make_file(&len);
    hs_profile_t *p = NULL;
    char err[256] = "";
    int rc = hs_legacy_parse((const uint8_t *)text, len, &p, err, sizeof(err));
    CHECK(rc == 0 && p, "parse: %s", err);
    if (rc == 0 && p) {
        test_samples(p);
        static const char *const types[] = {"alloc_objects", "alloc_space", "inuse_objects",
                                            "inuse_space"};
        for (int t = 0; t < 4; t++)
            test_report(p, types[t], t);
    }
    hs_profile_free(p);
    free(text);
    return hs_check_done("test_jeprof_sums");
}

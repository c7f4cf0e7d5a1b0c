/*
 * write_gotext.c (Go's ?debug=1 heap text) read back by read_legacy.c: a profile of
 * known stacks, one size per stack, written as the endpoint does and parsed again.
 *  - rate 1: every value comes back exactly, names and lines of the frames too;
 *  - rate 524288: the header says heap/1048576, and the unscaled counts, scaled again by
 *    the reader (pprof's formula), give back each value within 0.5%: the counts are
 *    rounded to whole samples, and the average size is taken from the profile's rounded
 *    object count, so stacks of many objects are used (a stack of a handful of objects
 *    larger than the rate comes back within about 1/objects);
 *  - a profile without the heap sample types is refused (-EINVAL).
 */
#include "check.h"
#include "model/profile.h"
#include "readers/read_legacy.h"
#include "model/write_gotext.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Stack i: leaf location "leafI" at 0x1000 * (i + 1), then a common caller "main". */
static hs_profile_t *gt_make(int64_t rate, const int64_t vals[][4], int n)
{
    static const char *const types[4] = {"alloc_objects", "alloc_space", "inuse_objects",
                                         "inuse_space"};
    hs_profile_t *p = hs_profile_new();
    for (int k = 0; k < 4; k++)
        hs_profile_add_sample_type(p, types[k], k % 2 ? "bytes" : "count");
    p->period = rate;
    hs_line_t ml = {hs_profile_add_function(p, "main", "main", "/src/main.c", 0), 40};
    uint64_t mloc = hs_profile_add_location(p, 0, 0x500, &ml, 1);
    for (int i = 0; i < n; i++) {
        char name[16];
        snprintf(name, sizeof(name), "leaf%d", i);
        hs_line_t l = {hs_profile_add_function(p, name, name, "/src/leaf.c", 0), 10 + i};
        uint64_t locs[2] = {hs_profile_add_location(p, 0, 0x1000 * (uint64_t)(i + 1), &l, 1), mloc};
        hs_profile_add_sample(p, locs, 2, vals[i]);
    }
    return p;
}

/* The values of the sample whose leaf is named name, or NULL. */
static const int64_t *gt_find(const hs_profile_t *p, const char *name)
{
    for (size_t i = 0; i < p->nsamples; i++) {
        const hs_location_t *l = hs_profile_location(p, p->samples[i].location_ids[0]);
        const hs_function_t *f =
            l && l->nlines ? hs_profile_function(p, l->lines[0].function_id) : NULL;
        if (f && strcmp(hs_profile_get_str(p, f->name), name) == 0)
            return p->samples[i].values;
    }
    return NULL;
}

static hs_profile_t *gt_roundtrip(const hs_profile_t *p, hs_buf_t *b)
{
    hs_profile_t *q = NULL;
    char err[256] = "";
    CHECK(hs_write_gotext(p, b) == 0, "write");
    int rc = hs_legacy_parse(b->data, b->len, &q, err, sizeof(err));
    CHECK(rc == 0, "parse: %s", err);
    return rc == 0 ? q : NULL;
}

static void gt_exact(void)
{
    const int64_t v[3][4] = {{10, 10240, 4, 4096}, {3, 3000000, 3, 3000000}, {7, 700, 0, 0}};
    hs_profile_t *p = gt_make(1, v, 3);
    hs_buf_t b = HS_BUF_INIT;
    hs_profile_t *q = gt_roundtrip(p, &b);
    CHECK(strncmp((const char *)b.data, "heap profile: 7: 3004096 [20: 3010940] @ heap/2\n", 48) ==
              0,
          "header: %.60s", (const char *)b.data);
    for (int i = 0; q && i < 3; i++) {
        char name[16];
        snprintf(name, sizeof(name), "leaf%d", i);
        const int64_t *got = gt_find(q, name);
        int ai = hs_profile_sample_type_index(q, "alloc_space");
        int ii = hs_profile_sample_type_index(q, "inuse_space");
        int ao = hs_profile_sample_type_index(q, "alloc_objects");
        CHECK(got && got[ai] == v[i][1] && got[ii] == v[i][3] && got[ao] == v[i][0],
              "%s: values differ", name);
    }
    if (q)
        hs_profile_free(q);
    hs_profile_free(p);
    hs_buf_free(&b);
}

static void gt_sampled(void)
{
    /* Estimates as heapsift records them: k samples of one size s weigh 1/(1-exp(-s/R)). */
    const int64_t rate = 524288, sizes[2] = {4096, 65536}, k[2] = {9, 20};
    int64_t v[2][4];
    for (int i = 0; i < 2; i++) {
        double w = 1 / (1 - exp(-(double)sizes[i] / (double)rate));
        v[i][0] = llround(2 * k[i] * w); /* alloc != inuse, or the reader keeps only */
        v[i][1] = llround(2 * k[i] * w * (double)sizes[i]); /* "objects" and "space" */
        v[i][2] = llround(k[i] * w);
        v[i][3] = llround(k[i] * w * (double)sizes[i]);
    }
    hs_profile_t *p = gt_make(rate, v, 2);
    hs_buf_t b = HS_BUF_INIT;
    hs_profile_t *q = gt_roundtrip(p, &b);
    CHECK(strstr((const char *)b.data, "@ heap/1048576\n") != NULL, "header rate");
    for (int i = 0; q && i < 2; i++) {
        char name[16];
        snprintf(name, sizeof(name), "leaf%d", i);
        const int64_t *got = gt_find(q, name);
        for (int t = 0; t < 4; t++) {
            static const char *const types[4] = {"alloc_objects", "alloc_space", "inuse_objects",
                                                 "inuse_space"};
            int x = hs_profile_sample_type_index(q, types[t]);
            CHECK(got && x >= 0 &&
                      fabs((double)got[x] - (double)v[i][t]) <= 0.005 * (double)v[i][t],
                  "%s: %s %lld, want %lld +-0.5%%", name, types[t],
                  got && x >= 0 ? (long long)got[x] : -1, (long long)v[i][t]);
        }
    }
    if (q)
        hs_profile_free(q);
    hs_profile_free(p);
    hs_buf_free(&b);
}

static void gt_refuses(void)
{
    hs_profile_t *p = hs_profile_new();
    hs_buf_t b = HS_BUF_INIT;
    hs_profile_add_sample_type(p, "samples", "count");
    CHECK(hs_write_gotext(p, &b) == -EINVAL, "a CPU-like profile is refused");
    hs_profile_free(p);
    hs_buf_free(&b);
}

int main(void)
{
    gt_exact();
    gt_sampled();
    gt_refuses();
    return hs_check_done("test_gotext");
}

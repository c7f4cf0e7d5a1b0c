/*
 * Lifetimes (report_lifetimes.h): one report over the profile, its samples split by their
 * "lifetime" label into buckets, summed per stack (or per leaf), with the churn and hold
 * shares and a median estimate interpolated within its bucket. Owns its allocations only.
 */
#define _GNU_SOURCE
#include "report_lifetimes.h"
#include "base/sort.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The lifetime of sample s in nanoseconds (INFINITY for INT64_MAX and beyond), or NAN
 * when it has no lifetime label. */
static double life_of(const hs_report_t *r, const hs_rsample_t *s)
{
    const hs_profile_t *p = s->prof;
    for (size_t i = 0; i < s->src->nlabels; i++) {
        const hs_label_t *l = &s->src->labels[i];
        if (hs_label_kind(l) != HS_LABEL_NUM || strcmp(hs_profile_get_str(p, l->key), "lifetime"))
            continue;
        if (l->num == INT64_MAX)
            return INFINITY;
        const char *u = "";
        double ns =
            hs_report_scale((double)l->num, hs_report_num_unit(r, p, l->key), "nanoseconds", &u);
        return strcmp(u, "ns") == 0 ? ns : (double)l->num; /* no time unit: nanoseconds */
    }
    return NAN;
}

static int life_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The distinct lifetimes of the report's samples, ascending. */
static int life_bounds(hs_lifetimes_t *l)
{
    const hs_report_t *r = &l->rep;
    l->bounds = malloc((r->nsamples + 1) * sizeof(double));
    if (!l->bounds)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < r->nsamples; i++) {
        double v = life_of(r, &r->samples[i]);
        if (!isnan(v))
            l->bounds[n++] = v;
    }
    l->labelled = n;
    hs_sort(l->bounds, n, sizeof(double), life_cmp_double);
    size_t w = 0;
    for (size_t i = 0; i < n; i++)
        if (w == 0 || l->bounds[w - 1] != l->bounds[i])
            l->bounds[w++] = l->bounds[i];
    l->nbounds = w;
    return 0;
}

/* The lower end of bucket b: the previous bound found, but at most a decade below its own
 * bound (heapsift's buckets are decades; a profile may lack the empty ones between). */
static double life_lower(const hs_lifetimes_t *l, size_t b)
{
    double prev = b ? l->bounds[b - 1] : 0, hi = l->bounds[b];
    if (isinf(hi))
        return prev;
    return prev > hi / 10 ? prev : hi / 10;
}

static size_t life_bucket(const hs_lifetimes_t *l, double v)
{
    size_t lo = 0, hi = l->nbounds;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->bounds[mid] < v)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The median of a row: the bucket where half the total is reached, interpolated on a log
 * scale between its ends (life_lower, and the bound). */
static double life_median(const hs_lifetimes_t *l, const hs_lifetime_row_t *x)
{
    double half = (double)x->total / 2, cum = 0;
    if (x->total <= 0)
        return NAN;
    for (size_t b = 0; b < l->nbounds; b++) {
        double v = (double)x->freed[b];
        if (v <= 0 || cum + v < half) {
            cum += v > 0 ? v : 0;
            continue;
        }
        double frac = (half - cum) / v, lo = life_lower(l, b), hi = l->bounds[b];
        if (isinf(hi))
            return lo; /* "at least" the last bound */
        return lo > 0 ? lo * pow(hi / lo, frac) : hi * frac;
    }
    return INFINITY;
}

static int life_rows(hs_lifetimes_t *l, bool by_leaf)
{
    const hs_report_t *r = &l->rep;
    uint32_t *ids = malloc((r->nsamples + 1) * sizeof(uint32_t));
    long nr = ids ? hs_report_stack_ids(r, by_leaf, ids) : -ENOMEM;
    l->rows = nr >= 0 ? calloc((size_t)nr + 1, sizeof(hs_lifetime_row_t)) : NULL;
    int rc = l->rows ? 0 : -ENOMEM;
    for (long i = 0; !rc && i < nr; i++)
        if (!(l->rows[i].freed = calloc(l->nbounds + 1, sizeof(int64_t))))
            rc = -ENOMEM;
    l->nrows = nr > 0 ? (size_t)nr : 0;
    for (size_t i = 0; !rc && i < r->nsamples; i++) {
        const hs_rsample_t *s = &r->samples[i];
        hs_lifetime_row_t *x = &l->rows[ids[i]];
        x->frames = s->frames;
        x->nframes = by_leaf && s->nframes ? 1 : s->nframes;
        double v = life_of(r, s);
        if (isnan(v)) {
            x->live += s->value;
            continue;
        }
        size_t b = life_bucket(l, v);
        x->freed[b] += s->value;
        if (v <= l->short_ns)
            x->shorter += s->value;
        if (life_lower(l, b) >= l->long_ns)
            x->longer += s->value;
    }
    free(ids);
    return rc;
}

static int life_cmp_rows(const void *pa, const void *pb)
{
    const hs_lifetime_row_t *a = pa, *b = pb;
    if (a->total != b->total)
        return a->total > b->total ? -1 : 1;
    return a->shorter > b->shorter ? -1 : a->shorter < b->shorter;
}

int hs_lifetimes_build(hs_lifetimes_t *out, const hs_profile_t *p, const hs_report_opts_t *o,
                       bool by_leaf, double short_ns, double long_ns, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->short_ns = short_ns;
    out->long_ns = long_ns;
    hs_report_opts_t ro = *o;
    if (!ro.sample_type)
        ro.sample_type = "alloc_space";
    int sign = 1;
    int rc = hs_report_build(&out->rep, &p, &sign, 1, &ro, err, errlen);
    if (rc)
        return rc;
    if (strncmp(out->rep.sample_type, "alloc_", 6) != 0) {
        snprintf(err, errlen,
                 "lifetimes are of allocations: the sample type must be "
                 "alloc_space or alloc_objects, not %s",
                 out->rep.sample_type);
        return -EINVAL;
    }
    if ((rc = life_bounds(out)) || (rc = life_rows(out, by_leaf))) {
        snprintf(err, errlen, "%s", strerror(ENOMEM));
        return rc;
    }
    for (size_t i = 0; i < out->nrows; i++) {
        hs_lifetime_row_t *x = &out->rows[i];
        x->total = x->live;
        for (size_t b = 0; b < out->nbounds; b++)
            x->total += x->freed[b];
        x->median_ns = life_median(out, x);
        out->total += x->total;
        out->live += x->live;
        out->shorter += x->shorter;
        out->longer += x->longer;
    }
    hs_sort(out->rows, out->nrows, sizeof(hs_lifetime_row_t), life_cmp_rows);
    return 0;
}

void hs_lifetimes_free(hs_lifetimes_t *l)
{
    for (size_t i = 0; l->rows && i < l->nrows; i++)
        free(l->rows[i].freed);
    free(l->rows);
    free(l->bounds);
    hs_report_free(&l->rep);
    memset(l, 0, sizeof(*l));
}

/*
 * Lifetimes of sampled allocations, per stack or per leaf: which sites churn short-lived
 * memory and which hold it. The profile format (docs/formats.md, "Lifetimes"): the
 * alloc_* values of a stack's objects that were freed sit in separate samples of the same
 * stack carrying a numeric label "lifetime" = the upper bound of the lifetime bucket the
 * objects fell in (nanoseconds: 1e3, 1e4, ... 1e11, and INT64_MAX for longer), inuse 0;
 * the part not freed is the sample without the label. Any bound values and any time unit
 * are accepted: buckets are the distinct label values found, each from the previous one
 * (but at most a decade below) to its own. Used by `heapsift lifetimes` (and open to the web UI).
 * Owns its allocations.
 */
#ifndef HS_REPORT_LIFETIMES_H
#define HS_REPORT_LIFETIMES_H

#include "report.h"

typedef struct {
    const uint32_t *frames; /* report node indices, leaf first (one frame with by_leaf) */
    size_t nframes;
    int64_t *freed;   /* per bucket (hs_lifetimes_t.bounds), in the sample type */
    int64_t live;     /* the part without a lifetime label: not freed when dumped */
    int64_t total;    /* live + every bucket */
    int64_t shorter;  /* freed in buckets whose bound is <= the short threshold */
    int64_t longer;   /* freed in buckets whose lower end is >= the long threshold */
    double median_ns; /* estimated median lifetime; INFINITY when over half is live */
} hs_lifetime_row_t;

typedef struct {
    hs_report_t rep;
    double *bounds; /* bucket upper bounds in nanoseconds, ascending (INFINITY: no bound) */
    size_t nbounds;
    double short_ns, long_ns; /* the thresholds used */
    hs_lifetime_row_t *rows;  /* by total descending */
    size_t nrows;
    int64_t total, live, shorter, longer;
    size_t labelled; /* samples that carried a lifetime label */
} hs_lifetimes_t;

/* Builds the rows of profile p: the sample type o->sample_type (default alloc_space; must
 * be an alloc_* type), one row per stack, or per leaf node when by_leaf. short_ns and
 * long_ns are the churn and hold thresholds. Returns 0, -ENOMEM, -EINVAL (bad options,
 * message in err) or -EPROTO. out is freed with hs_lifetimes_free in every case. */
int hs_lifetimes_build(hs_lifetimes_t *out, const hs_profile_t *p, const hs_report_opts_t *o,
                       bool by_leaf, double short_ns, double long_ns, char *err, size_t errlen);
void hs_lifetimes_free(hs_lifetimes_t *l);

#endif

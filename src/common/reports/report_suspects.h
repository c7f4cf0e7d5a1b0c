/*
 * Leak suspects: from a series of heap profiles of one process (interval dumps, API
 * dumps), the stacks whose live bytes keep growing. Profiles are put in time order (their
 * time_nanos; the given order when a profile has none), stacks are matched across them by
 * their frames after aggregation (function, file and line: never addresses, so ASLR does not
 * matter), and each stack's value over time gets a least-squares slope, how steady the
 * growth is (R^2 of the fit, count of rising steps) and a verdict on whether its growth
 * from the first profile to the last exceeds sampling noise (docs/sampling.md, "Leak
 * suspects"). When the last profile carries heapsift's reachable=yes|no labels (the exit
 * profile with HEAPSIFT_LEAKS, a leak check's), stacks with objects no pointer reaches
 * rank first, whatever their growth (docs/leaks.md). Used by `heapsift suspects` and the
 * web UI. Owns its allocations; never
 * modifies the profiles. Not thread-safe.
 */
#ifndef HS_REPORT_SUSPECTS_H
#define HS_REPORT_SUSPECTS_H

#include "report.h"

typedef struct {
    const uint32_t *frames; /* report node indices (rep.nodes), leaf first */
    size_t nframes;
    int64_t *values;             /* the stack's value in each profile, in time order */
    int64_t first, last, growth; /* values in the first and last profile, last - first */
    double slope;                /* least-squares growth per second (per profile when untimed) */
    double r2;                   /* R^2 of the linear fit; NAN when the value never changes */
    size_t rises;                /* steps between consecutive profiles where the value rose */
    double var;                  /* an upper bound of the variance of growth from sampling */
    bool growing;                /* slope > 0 and hs_report_verdict(growth, var) is grew */
    /* Of last, the part labelled reachable=no (heapsift's reachability scan: no pointer to
     * those objects was found). 0 when the last profile has no such labels. */
    int64_t unreach;
} hs_suspect_t;

typedef struct {
    hs_report_t rep; /* over every profile: nodes, sample type and unit */
    size_t nprofiles;
    size_t *order;    /* order[i]: the input index of the i-th profile in time */
    double *t;        /* seconds since the first profile (profile index if untimed) */
    bool timed;       /* false: some profile has no time, or all have the same */
    int64_t t0_nanos; /* time of the first profile */
    hs_suspect_t *s;  /* every stack, ranked: growing first, then by slope, growth */
    size_t n;
    size_t ngrowing;
    bool reach;      /* the last profile carries reachable=yes|no labels (a leak check's) */
    size_t nunreach; /* stacks with unreachable objects in the last profile */
} hs_suspects_t;

/* Finds the suspects among n >= 2 profiles with the same sample types (o: sample type,
 * default inuse_space; granularity; filters). Returns 0, -ENOMEM, -EINVAL (fewer than two
 * profiles, unknown sample type, bad regular expression) or -EPROTO (different sample
 * types), with a message in err. out is freed with hs_suspects_free in every case. */
int hs_suspects_find(hs_suspects_t *out, const hs_profile_t *const *profs, size_t n,
                     const hs_report_opts_t *o, char *err, size_t errlen);
void hs_suspects_free(hs_suspects_t *s);

/* A sample's reachable label (heapsift's reachability scan): 1 yes, 0 no, -1 none. The
 * diagnosis' leak finding reads it too. */
int hs_suspects_reachable(const hs_profile_t *p, const hs_sample_t *s);

/* The start of the process a profile came from, as far as it tells: heapsift's profiles
 * count their duration from the process's (or forked child's) start, so every dump of
 * one process has the same time_nanos - duration_nanos. 0 when unknown (no duration:
 * Go's profiles, converted ones). */
int64_t hs_suspects_process_start(const hs_profile_t *p);
/* How many processes the n profiles come from (those whose start is unknown counted with
 * the rest): more than 1 means the series' slopes compare runs. */
size_t hs_suspects_processes(const hs_profile_t *const *profs, size_t n);

#endif

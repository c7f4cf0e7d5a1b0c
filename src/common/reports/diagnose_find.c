/*
 * The findings of a diagnosis (diagnose.h) that rest on the samples: growth across a
 * series (the suspects' analysis and its exact test, report_suspects.c), leaks (objects
 * the last profile labels reachable=no), the largest live sites with their 95% intervals
 * (noise.c); and the entry that puts the profiles in time order and adds the accounting's
 * findings (diagnose_acct.c). A finding is claimed only where its evidence holds. Never
 * modifies the profiles.
 */
#define _GNU_SOURCE
#include "diagnose_int.h"
#include "report_suspects.h"
#include "base/sort.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { DIAG_TOP_SITES = 3, DIAG_LEAK_SITES = 5, DIAG_GROWTH_SITES = 5, DIAG_SITE_FRAMES = 6 };

/* The stack's names, leaf to root, " <- " between (at most DIAG_SITE_FRAMES of them). */
static void diag_site(const hs_report_t *r, const uint32_t *frames, size_t n, char *s, size_t len)
{
    size_t k = 0;
    s[0] = '\0';
    for (size_t i = 0; i < n && i < DIAG_SITE_FRAMES && k < len; i++)
        k += (size_t)snprintf(s + k, len - k, "%s%s", i ? " <- " : "", r->nodes[frames[i]].name);
    if (n > DIAG_SITE_FRAMES && k < len)
        snprintf(s + k, len - k, " <- ...");
}

static void diag_interval(double est, double var, char *s, size_t len)
{
    double lo, hi;
    char a[32], b[32];
    hs_report_interval(est, var, &lo, &hi);
    hs_diag_mb(a, sizeof(a), lo);
    hs_diag_mb(b, sizeof(b), hi);
    if (var <= 0)
        snprintf(s, len, "exact (rate 1)");
    else
        snprintf(s, len, "95%% interval %s..%s", a, b);
}

/* Growth: the stacks suspects calls growing (slope > 0 and the growth from the first
 * profile to the last beyond 1.96 standard deviations of its sampling noise). */
static int diag_growth(hs_diagnosis_t *d, const hs_suspects_t *s)
{
    int rc = 0;
    size_t shown = 0;
    double span = s->nprofiles > 1 ? s->t[s->nprofiles - 1] : 0;
    for (size_t i = 0; !rc && i < s->n && shown < DIAG_GROWTH_SITES; i++) {
        const hs_suspect_t *x = &s->s[i];
        if (!x->growing)
            continue;
        char site[512], ev[768], iv[96], a[32], b[32], sl[32];
        diag_site(&s->rep, x->frames, x->nframes, site, sizeof(site));
        diag_interval((double)x->growth, x->var, iv, sizeof(iv));
        hs_diag_mb(a, sizeof(a), (double)x->first);
        hs_diag_mb(b, sizeof(b), (double)x->last);
        hs_diag_mb(sl, sizeof(sl), s->timed ? x->slope * 3600 : x->slope);
        char g[32], when[64];
        hs_diag_mb(g, sizeof(g), (double)x->growth);
        if (s->timed)
            snprintf(when, sizeof(when), "over %.2f s", span);
        else
            snprintf(when, sizeof(when), "(untimed: in the order given)");
        snprintf(ev, sizeof(ev),
                 "live bytes rose from %s to %s in %zu profiles %s: growth %s (%s), slope %s "
                 "per %s, R^2 %.2f, rose in %zu of %zu steps; beyond sampling noise by the test "
                 "of heapsift suspects (slope > 0 and growth > 1.96 standard deviations of its "
                 "sampling noise)",
                 a, b, s->nprofiles, when, g, iv, sl, s->timed ? "hour" : "profile",
                 isnan(x->r2) ? 0.0 : x->r2, x->rises, s->nprofiles - 1);
        rc = hs_diagnosis_add(d, HS_DIAG_GROWTH, x->growth, site, ev,
                              "find who holds these objects and when they should go: a cache "
                              "without a bound, a list only appended to, a missing free; "
                              "`heapsift suspects` lists every stack's values");
        shown++;
    }
    return rc;
}

/* Per stack of the last profile's report: its bytes and their variance, all of them or
 * (unreach) those labelled reachable=no; *labels tells whether any sample had the label. */
typedef struct {
    double bytes, var;
    const hs_rsample_t *s; /* one of its samples, for the frames */
} diag_stack_t;

static long diag_stacks(const hs_report_t *r, const hs_profile_t *last, bool unreach,
                        diag_stack_t **out, bool *labels)
{
    uint32_t *ids = malloc((r->nsamples + 1) * sizeof(uint32_t));
    long ns = ids ? hs_report_stack_ids(r, false, ids) : -ENOMEM;
    diag_stack_t *v = ns >= 0 ? calloc((size_t)ns + 1, sizeof(*v)) : NULL;
    *labels = false;
    for (size_t i = 0; v && i < r->nsamples; i++) {
        const hs_rsample_t *s = &r->samples[i];
        int reach = s->prof == last ? hs_suspects_reachable(s->prof, s->src) : -1;
        *labels |= reach >= 0;
        if ((unreach && reach != 0) || s->value <= 0)
            continue;
        v[ids[i]].bytes += (double)s->value;
        v[ids[i]].var += s->var;
        v[ids[i]].s = s;
    }
    free(ids);
    *out = v;
    return v ? ns : -ENOMEM;
}

/* The index of the largest stack left (bytes > 0), or -1; it is then taken out. */
static long diag_take_largest(diag_stack_t *v, long n, diag_stack_t *taken)
{
    long best = -1;
    for (long j = 0; j < n; j++)
        if (v[j].bytes > 0 && (best < 0 || v[j].bytes > v[best].bytes))
            best = j;
    if (best >= 0) {
        *taken = v[best];
        v[best].bytes = 0;
    }
    return best;
}

/* Leak: the stacks of the last profile with bytes labelled reachable=no, largest first. */
static int diag_leak(hs_diagnosis_t *d, const hs_report_t *r, const hs_profile_t *last)
{
    diag_stack_t *v, x;
    bool labels;
    long ns = diag_stacks(r, last, true, &v, &labels);
    int rc = ns < 0 ? (int)ns : 0;
    for (size_t k = 0; !rc && k < DIAG_LEAK_SITES && diag_take_largest(v, ns, &x) >= 0; k++) {
        char site[512], ev[512], iv[96];
        diag_site(r, x.s->frames, x.s->nframes, site, sizeof(site));
        diag_interval(x.bytes, x.var, iv, sizeof(iv));
        snprintf(ev, sizeof(ev),
                 "objects of this site labelled reachable=no by heapsift's reachability scan "
                 "(no pointer to them found in the stacks, registers, data or live heap), %s",
                 iv);
        rc = hs_diagnosis_add(d, HS_DIAG_LEAK, (int64_t)x.bytes, site, ev,
                              "free them where their last pointer is dropped; docs/leaks.md "
                              "says how the scan decides");
    }
    if (!rc && !labels && r->nsamples)
        rc = hs_diagnosis_note(d, "leak: not answered: the last profile has no reachable=yes|no "
                                  "labels (HEAPSIFT_LEAKS=1 writes them at exit, or a leak check)");
    free(v);
    return rc;
}

/* The largest live stacks of the last profile, with their 95% intervals. */
static int diag_top(hs_diagnosis_t *d, const hs_report_t *r, const hs_profile_t *last)
{
    diag_stack_t *v, x;
    bool labels;
    long ns = diag_stacks(r, last, false, &v, &labels);
    int rc = ns < 0 ? (int)ns : 0;
    for (size_t k = 0; !rc && k < DIAG_TOP_SITES && diag_take_largest(v, ns, &x) >= 0; k++) {
        char site[512], ev[256], iv[96];
        diag_site(r, x.s->frames, x.s->nframes, site, sizeof(site));
        diag_interval(x.bytes, x.var, iv, sizeof(iv));
        snprintf(ev, sizeof(ev), "live bytes allocated by this stack (%s), %.1f%% of the live heap",
                 iv, r->total > 0 ? 100.0 * x.bytes / (double)r->total : 0);
        rc = hs_diagnosis_add(d, HS_DIAG_TOP_SITE, (int64_t)x.bytes, site, ev,
                              "the largest holder of live memory: `heapsift top` and "
                              "`heapsift tree` show who calls it");
    }
    free(v);
    return rc;
}

typedef struct {
    const hs_profile_t *p;
    size_t i;
} diag_ord_t;

static int diag_ord_cmp(const void *a, const void *b)
{
    const diag_ord_t *x = a, *y = b;
    if (x->p->time_nanos != y->p->time_nanos)
        return x->p->time_nanos < y->p->time_nanos ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The profiles in time order when every one has a time, else as given. */
static const hs_profile_t **diag_order(const hs_profile_t *const *profs, size_t n)
{
    diag_ord_t *o = calloc(n, sizeof(*o));
    const hs_profile_t **v = calloc(n, sizeof(*v));
    bool timed = true;
    for (size_t i = 0; o && v && i < n; i++) {
        o[i].p = profs[i];
        o[i].i = i;
        timed &= profs[i]->time_nanos != 0;
    }
    if (o && v && timed)
        hs_sort(o, n, sizeof(*o), diag_ord_cmp);
    for (size_t i = 0; o && v && i < n; i++)
        v[i] = o[i].p;
    free(o);
    if (!o) {
        free(v);
        return NULL;
    }
    return v;
}

static int diag_samples(hs_diagnosis_t *d, const hs_profile_t **v, size_t n, char *err,
                        size_t errlen)
{
    hs_report_opts_t o = {0};
    hs_report_t r;
    int sign = 1, rc;
    const hs_profile_t *last = v[n - 1];
    if (hs_report_sample_index(last, "inuse_space") < 0)
        return hs_diagnosis_note(d, "growth, leak and top sites: not answered: the profile has "
                                    "no inuse_space sample type");
    o.sample_type = "inuse_space";
    if ((rc = hs_report_build(&r, &last, &sign, 1, &o, err, errlen)))
        return rc;
    if (!(rc = diag_leak(d, &r, last)))
        rc = diag_top(d, &r, last);
    hs_report_free(&r);
    if (rc || n < 2)
        return rc;
    hs_suspects_t s;
    if ((rc = hs_suspects_find(&s, (const hs_profile_t *const *)v, n, &o, err, errlen)) == 0) {
        rc = diag_growth(d, &s);
        if (!rc && s.ngrowing == 0)
            rc = hs_diagnosis_note(d,
                                   "growth: none: no site's live bytes grew beyond sampling "
                                   "noise over these %zu profiles",
                                   n);
    }
    hs_suspects_free(&s);
    return rc;
}

int hs_diagnose_profiles(hs_diagnosis_t *d, const hs_profile_t *const *profs, size_t n, char *err,
                         size_t errlen)
{
    memset(d, 0, sizeof(*d));
    d->rss_bytes = -1;
    d->allocator = "unknown";
    if (n == 0 || !profs) {
        snprintf(err, errlen, "no profile");
        return -EINVAL;
    }
    const hs_profile_t **v = diag_order(profs, n);
    int rc = v ? hs_diag_acct_findings(d, v[n - 1]) : -ENOMEM;
    if (!rc)
        rc = diag_samples(d, v, n, err, errlen);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s", strerror(ENOMEM));
    free(v);
    hs_diagnosis_sort(d);
    return rc;
}

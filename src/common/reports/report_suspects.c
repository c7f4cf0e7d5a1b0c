/*
 * Leak suspects (report_suspects.h): one report over every profile of the series gives
 * nodes shared by all of them, so a stack is the same sequence of node indices in every
 * profile; per stack, its value in each profile, a least-squares fit over time and the
 * noise verdict on its growth. The variance bound used for the verdict is in
 * docs/sampling.md ("Leak suspects"). Owns its allocations only.
 */
#define _GNU_SOURCE
#include "report_suspects.h"
#include "base/sort.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Per stack while building: sums over the samples of the stack in the first and last
 * profiles (variances of the value; alloc objects and bytes for the turnover bound). */
typedef struct {
    double var_first, var_last;
    double aobj[2], aspace[2]; /* alloc_objects, alloc_space in the first and last profile */
} sus_acc_t;

typedef struct {
    int alloc_obj, alloc_space; /* sample type indices of the alloc pair, -1 if none */
    bool objects;               /* the value is a count of objects */
    size_t *rank;               /* input index -> position in time */
} sus_ctx_t;

static bool sus_same_types(const hs_profile_t *a, const hs_profile_t *b)
{
    if (a->ntypes != b->ntypes)
        return false;
    for (size_t i = 0; i < a->ntypes; i++)
        if (strcmp(hs_profile_get_str(a, a->sample_types[i].type),
                   hs_profile_get_str(b, b->sample_types[i].type)) != 0 ||
            strcmp(hs_profile_get_str(a, a->sample_types[i].unit),
                   hs_profile_get_str(b, b->sample_types[i].unit)) != 0)
            return false;
    return true;
}

/* Time order: by time_nanos when every profile has one and they differ, else as given. */
static int sus_order(hs_suspects_t *out, const hs_profile_t *const *profs, size_t n)
{
    out->order = malloc(n * sizeof(size_t));
    out->t = malloc(n * sizeof(double));
    if (!out->order || !out->t)
        return -ENOMEM;
    bool timed = true, differ = false;
    for (size_t i = 0; i < n; i++) {
        out->order[i] = i;
        timed &= profs[i]->time_nanos != 0;
        differ |= profs[i]->time_nanos != profs[0]->time_nanos;
    }
    out->timed = timed && differ;
    for (size_t i = 1; out->timed && i < n; i++) { /* insertion sort: stable, n is small */
        size_t v = out->order[i], j = i;
        for (; j > 0 && profs[out->order[j - 1]]->time_nanos > profs[v]->time_nanos; j--)
            out->order[j] = out->order[j - 1];
        out->order[j] = v;
    }
    out->t0_nanos = profs[out->order[0]]->time_nanos;
    for (size_t i = 0; i < n; i++)
        out->t[i] = out->timed ? (double)(profs[out->order[i]]->time_nanos - out->t0_nanos) / 1e9
                               : (double)i;
    return 0;
}

/* The alloc_* pair matching the value's sample type (inuse_space: alloc_objects and
 * alloc_space), so the turnover between two profiles bounds the noise of a growth. */
static void sus_alloc_pair(sus_ctx_t *c, const hs_report_t *r, const hs_profile_t *p)
{
    c->alloc_obj = hs_profile_sample_type_index(p, "alloc_objects");
    c->alloc_space = hs_profile_sample_type_index(p, "alloc_space");
    c->objects = strstr(r->sample_type, "objects") != NULL;
    if (strncmp(r->sample_type, "inuse_", 6) != 0)
        c->alloc_obj = c->alloc_space = -1;
}

static size_t sus_profile_index(const hs_profile_t *const *profs, size_t n, const hs_profile_t *p)
{
    for (size_t i = 0; i < n; i++)
        if (profs[i] == p)
            return i;
    return 0;
}

int hs_suspects_reachable(const hs_profile_t *p, const hs_sample_t *s)
{
    for (size_t i = 0; s && i < s->nlabels; i++) {
        if (strcmp(hs_profile_get_str(p, s->labels[i].key), "reachable") != 0)
            continue;
        const char *v = hs_profile_get_str(p, s->labels[i].str);
        return strcmp(v, "no") == 0 ? 0 : strcmp(v, "yes") == 0 ? 1 : -1;
    }
    return -1;
}

/* Groups the report's samples by stack: values per profile, variances and alloc pairs at
 * both ends. */
static int sus_group(hs_suspects_t *out, const hs_profile_t *const *profs, size_t n,
                     const sus_ctx_t *c, sus_acc_t **acc)
{
    const hs_report_t *r = &out->rep;
    uint32_t *ids = malloc((r->nsamples + 1) * sizeof(uint32_t));
    long ns = ids ? hs_report_stack_ids(r, false, ids) : -ENOMEM;
    out->s = ns >= 0 ? calloc((size_t)ns + 1, sizeof(hs_suspect_t)) : NULL;
    *acc = ns >= 0 ? calloc((size_t)ns + 1, sizeof(sus_acc_t)) : NULL;
    int rc = out->s && *acc ? 0 : -ENOMEM;
    for (long i = 0; !rc && i < ns; i++)
        if (!(out->s[i].values = calloc(out->nprofiles, sizeof(int64_t))))
            rc = -ENOMEM;
    out->n = ns > 0 ? (size_t)ns : 0;
    const hs_profile_t *last = NULL;
    size_t k = 0;
    for (size_t i = 0; !rc && i < r->nsamples; i++) {
        const hs_rsample_t *s = &r->samples[i];
        hs_suspect_t *x = &out->s[ids[i]];
        x->frames = s->frames;
        x->nframes = s->nframes;
        if (s->prof != last) { /* samples come grouped by profile */
            last = s->prof;
            k = c->rank[sus_profile_index(profs, n, s->prof)];
        }
        x->values[k] += s->value;
        int reach = k == out->nprofiles - 1 ? hs_suspects_reachable(s->prof, s->src) : -1;
        out->reach |= reach >= 0;
        x->unreach += reach == 0 ? s->value : 0;
        sus_acc_t *a = &(*acc)[ids[i]];
        int end = k == 0 ? 0 : k == out->nprofiles - 1 ? 1 : -1;
        if (end < 0)
            continue;
        *(end ? &a->var_last : &a->var_first) += s->var;
        if (c->alloc_obj >= 0 && c->alloc_space >= 0) {
            a->aobj[end] += (double)s->vals[c->alloc_obj];
            a->aspace[end] += (double)s->vals[c->alloc_space];
        }
    }
    free(ids);
    return rc;
}

/* Least squares of values over t: slope and R^2 (NAN when the values never change). */
static void sus_fit(hs_suspect_t *x, const double *t, size_t n)
{
    double mt = 0, mv = 0, stt = 0, stv = 0, svv = 0;
    for (size_t i = 0; i < n; i++) {
        mt += t[i];
        mv += (double)x->values[i];
    }
    mt /= (double)n;
    mv /= (double)n;
    for (size_t i = 0; i < n; i++) {
        double dt = t[i] - mt, dv = (double)x->values[i] - mv;
        stt += dt * dt;
        stv += dt * dv;
        svv += dv * dv;
    }
    x->slope = stt > 0 ? stv / stt : 0;
    x->r2 = svv > 0 && stt > 0 ? stv * stv / (stt * svv) : NAN;
    for (size_t i = 1; i < n; i++)
        x->rises += x->values[i] > x->values[i - 1];
    x->first = x->values[0];
    x->last = x->values[n - 1];
    x->growth = x->last - x->first;
}

/* An upper bound of the variance of growth = I_last - I_first. Objects live at both ends
 * are the same samples in both profiles and cancel; what is left are the samples born
 * since and still live, and those of the first profile that died. Two bounds, the smaller
 * wins: the two ends' variances added (as diff does for independent profiles), and, when
 * the alloc counters say how much was allocated in between (A >= growth), the variance of
 * A plus the part of the first profile's variance that the freed weight A - growth can
 * cover. A leak that never frees gets the variance of its new samples alone. */
static double sus_var(const hs_suspect_t *x, const sus_acc_t *a, const sus_ctx_t *c, int64_t period)
{
    double v = a->var_first + a->var_last;
    if (c->alloc_obj < 0 || c->alloc_space < 0)
        return v;
    double dobj = a->aobj[1] - a->aobj[0], dspace = a->aspace[1] - a->aspace[0];
    double amount = c->objects ? dobj : dspace, g = (double)x->growth;
    if (dobj < 0 || dspace < 0 || amount < g)
        return v; /* counters reset or inconsistent: no turnover bound */
    double vo, vb, freed = amount - g, first = (double)x->first;
    hs_report_variance(dobj, dspace, period, &vo, &vb);
    double frac = first > 0 ? (freed < first ? freed / first : 1) : 0;
    double v2 = (c->objects ? vo : vb) + a->var_first * frac;
    return v2 < v ? v2 : v;
}

static int sus_cmp(const void *pa, const void *pb)
{
    const hs_suspect_t *a = pa, *b = pb;
    if ((a->unreach > 0) != (b->unreach > 0))
        return a->unreach > 0 ? -1 : 1;
    if (a->unreach != b->unreach)
        return a->unreach > b->unreach ? -1 : 1;
    if (a->growing != b->growing)
        return a->growing ? -1 : 1;
    if (a->slope != b->slope)
        return a->slope > b->slope ? -1 : 1;
    if (a->growth != b->growth)
        return a->growth > b->growth ? -1 : 1;
    return a->last > b->last ? -1 : a->last < b->last;
}

static int sus_check(const hs_profile_t *const *profs, size_t n, char *err, size_t errlen)
{
    if (n < 2) {
        snprintf(err, errlen, "leak suspects need at least two profiles of the process, got %zu",
                 n);
        return -EINVAL;
    }
    for (size_t i = 1; i < n; i++) {
        if (!sus_same_types(profs[0], profs[i])) {
            snprintf(err, errlen, "profile %zu has other sample types than the first", i + 1);
            return -EPROTO;
        }
    }
    return 0;
}

int hs_suspects_find(hs_suspects_t *out, const hs_profile_t *const *profs, size_t n,
                     const hs_report_opts_t *o, char *err, size_t errlen)
{
    memset(out, 0, sizeof(*out));
    out->nprofiles = n;
    int rc = sus_check(profs, n, err, errlen);
    if (rc)
        return rc;
    hs_report_opts_t ro = *o;
    if (!ro.sample_type && hs_profile_sample_type_index(profs[0], "inuse_space") >= 0)
        ro.sample_type = "inuse_space";
    int *signs = malloc(n * sizeof(int));
    sus_ctx_t c = {.rank = malloc(n * sizeof(size_t))};
    sus_acc_t *acc = NULL;
    if (!signs || !c.rank) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        signs[i] = 1;
    if ((rc = hs_report_build(&out->rep, profs, signs, n, &ro, err, errlen)) ||
        (rc = sus_order(out, profs, n)))
        goto out;
    for (size_t i = 0; i < n; i++)
        c.rank[out->order[i]] = i;
    sus_alloc_pair(&c, &out->rep, profs[0]);
    if ((rc = sus_group(out, profs, n, &c, &acc)))
        goto out;
    for (size_t i = 0; i < out->n; i++) {
        hs_suspect_t *x = &out->s[i];
        sus_fit(x, out->t, n);
        x->var = sus_var(x, &acc[i], &c, profs[out->order[n - 1]]->period);
        x->growing = x->slope > 0 && hs_report_verdict((double)x->growth, x->var) == HS_GREW;
        out->ngrowing += x->growing;
        out->nunreach += x->unreach > 0;
    }
    hs_sort(out->s, out->n, sizeof(hs_suspect_t), sus_cmp);
out:
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s", strerror(ENOMEM));
    free(signs);
    free(c.rank);
    free(acc);
    return rc;
}

void hs_suspects_free(hs_suspects_t *s)
{
    for (size_t i = 0; s->s && i < s->n; i++)
        free(s->s[i].values);
    free(s->s);
    free(s->order);
    free(s->t);
    hs_report_free(&s->rep);
    memset(s, 0, sizeof(*s));
}

int64_t hs_suspects_process_start(const hs_profile_t *p)
{
    return p->duration_nanos > 0 && p->time_nanos > p->duration_nanos
               ? p->time_nanos - p->duration_nanos
               : 0;
}

size_t hs_suspects_processes(const hs_profile_t *const *profs, size_t n)
{
    size_t count = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t s = hs_suspects_process_start(profs[i]);
        size_t j = 0;
        while (j < i && (s == 0 || hs_suspects_process_start(profs[j]) != s))
            j++;
        count += s != 0 && j == i; /* the first profile of its process */
    }
    return count ? count : 1;
}

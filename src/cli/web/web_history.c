/*
 * Per-site history for `heapsift web` (web_api.c dispatches /api/history): the top N sites
 * of profile B (nodes at the view's granularity with flat use, in `heapsift top`'s order)
 * and each one's flat value in every kept profile of the target, with its 95% interval
 * (hs_report_interval, as `heapsift top --ci` prints it); for one chosen site, its history
 * and the stacks that reach it in B. Also the live heap's interval for each point of the
 * series (hs_web_history_inuse).
 *
 * Every figure comes from the common report model built per profile with the view's
 * options, so a point is the flat of that site in `heapsift top` of that profile. A
 * report of a large profile takes tens of milliseconds, so what a history needs of one
 * (each site's flat and variance, the sum of the values and variances) is kept in a small
 * cache, least recently used out, keyed by target, profile id (never reused within a
 * target) and options: a history over 32 profiles rebuilds only the profiles it has not
 * seen. Called with the store lock held (the cache is guarded by it too).
 */
#include "base/sort.h"
#include "web.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HIST_CACHE 160    /* entries: 40 profiles (32 and 8 pinned) of several targets or options */
#define HIST_MAX_SITES 64 /* n's upper bound */
#define HIST_STACKS 10    /* stacks listed for the chosen site */

/* One site of a profile: a node with flat use. */
typedef struct {
    char *name;
    int64_t flat;
    double var;
} hist_site_t;

/* What a history needs of one profile under one set of options. */
typedef struct {
    bool used;
    size_t ti;
    uint64_t id, stamp;
    char *key;
    char *sample_type, *sample_unit;
    hist_site_t *sites; /* sorted by name */
    uint32_t *rank;     /* indices into sites in `heapsift top`'s order */
    size_t nsites;
    int64_t sum; /* the values of the samples kept by the filters, and their variance */
    double sum_var;
    double none_hi; /* the upper bound of a site with no sample here (hist_none_hi) */
} hist_entry_t;

static hist_entry_t hist_cache[HIST_CACHE];
static uint64_t hist_clock;

static void hist_entry_free(hist_entry_t *e)
{
    for (size_t i = 0; i < e->nsites; i++)
        free(e->sites[i].name);
    free(e->sites);
    free(e->rank);
    free(e->key);
    free(e->sample_type);
    free(e->sample_unit);
    memset(e, 0, sizeof(*e));
}

static int hist_name_cmp(const void *a, const void *b)
{
    return strcmp(((const hist_site_t *)a)->name, ((const hist_site_t *)b)->name);
}

/* The site named name in e, or NULL. */
static const hist_site_t *hist_find(const hist_entry_t *e, const char *name)
{
    hist_site_t k = {(char *)name, 0, 0};
    return e->nsites ? bsearch(&k, e->sites, e->nsites, sizeof(k), hist_name_cmp) : NULL;
}

/* The options as one string: the cache's key (every option that changes a report, so
 * every field but all_comments, which changes the header only). An option added
 * grows the struct (unless it is a flag that fits the padding after the bools) and
 * stops the build here until the key has it too. */
_Static_assert(sizeof(hs_report_opts_t) == 8 * sizeof(const char *) + 8,
               "hs_report_opts_t changed: add the new option to hist_key");
static char *hist_key(const hs_report_opts_t *o)
{
    char *k = NULL;
    const char *f[] = {o->sample_type, o->focus,    o->ignore,   o->hide,
                       o->show,        o->tagfocus, o->tagignore};
    size_t len = 0;
    FILE *m = open_memstream(&k, &len);
    if (!m)
        return NULL;
    fprintf(m, "%d%d%d%d", (int)o->gran, o->trim_paths, o->obj_names, o->no_drop_frames);
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        fprintf(m, "\x1f%s", f[i] ? f[i] : "\x1e");
    return fclose(m) == 0 ? k : (free(k), NULL);
}

/* Fills e from a built report: its sites (flat != 0), their order, the sums. On failure
 * the caller frees e (nsites counts the names it holds). */
static int hist_fill(hist_entry_t *e, hs_report_t *r)
{
    size_t n = 0, orig, dropped;
    uint32_t *order = hs_report_select(r, false, 0, 0, &n, &orig, &dropped);
    hist_site_t *byrank = calloc(n + 1, sizeof(*byrank));
    int rc = -ENOMEM;
    e->sites = calloc(n + 1, sizeof(*e->sites));
    e->rank = calloc(n + 1, sizeof(*e->rank));
    e->sample_type = strdup(r->sample_type ? r->sample_type : "");
    e->sample_unit = strdup(r->sample_unit ? r->sample_unit : "");
    if (!order || !byrank || !e->sites || !e->rank || !e->sample_type || !e->sample_unit)
        goto out;
    for (size_t i = 0; i < n; i++) {
        const hs_rnode_t *nd = &r->nodes[order[i]];
        char *name = nd->flat ? strdup(nd->name) : NULL;
        if (nd->flat && !name)
            goto out;
        if (name)
            e->sites[e->nsites] = byrank[e->nsites] = (hist_site_t){name, nd->flat, nd->flat_var};
        e->nsites += name != NULL;
    }
    hs_sort(e->sites, e->nsites, sizeof(*e->sites), hist_name_cmp);
    for (size_t i = 0; i < e->nsites; i++)
        e->rank[i] = (uint32_t)(hist_find(e, byrank[i].name) - e->sites);
    for (size_t i = 0; i < r->nsamples; i++) {
        e->sum += r->samples[i].value;
        e->sum_var += r->samples[i].var;
    }
    rc = 0;
out:
    free(order);
    free(byrank);
    return rc;
}

/* The 95% interval's upper bound of the bytes of a site with no sample in profile p: the
 * samples are a Poisson process over the bytes allocated, at one per `period` bytes on
 * average, so B bytes go unsampled with probability exp(-B / period), 2.5% at
 * B = period * ln(40). 0 where the values are exact or not bytes (objects: the bound
 * would need their sizes). */
static double hist_none_hi(const hs_profile_t *p, const hs_report_t *r)
{
    const char *pu = p->period_type.unit >= 0 && (size_t)p->period_type.unit < p->nstrings
                         ? p->strings[p->period_type.unit]
                         : "";
    if (r->exact || p->period <= 1 || !r->sample_unit || strcmp(r->sample_unit, "bytes") != 0 ||
        strcmp(pu, "bytes") != 0)
        return 0;
    return (double)p->period * log(40.0);
}

/* The cache's entry for profile p of target ti under o (key: hist_key(o)), built when
 * missing. Returns 0, else a negative errno with the report's message in err. */
static int hist_get(size_t ti, const hs_web_prof_t *p, const hs_report_opts_t *o, const char *key,
                    hist_entry_t **out, char *err, size_t errlen)
{
    hist_entry_t *e = NULL;
    for (size_t i = 0; i < HIST_CACHE; i++) {
        hist_entry_t *c = &hist_cache[i];
        if (c->used && c->ti == ti && c->id == p->id && !strcmp(c->key, key)) {
            c->stamp = ++hist_clock;
            *out = c;
            return 0;
        }
        if (!c->used ? !e || e->used : !e || (e->used && c->stamp < e->stamp))
            e = c; /* the first free entry, else the least recently used */
    }
    hist_entry_free(e);
    static const int sign = 1;
    hs_report_t r;
    int rc = hs_report_build(&r, (const hs_profile_t *const *)&p->prof, &sign, 1, o, err, errlen);
    if (rc) {
        hs_report_free(&r);
        return rc;
    }
    e->key = strdup(key);
    e->none_hi = hist_none_hi(p->prof, &r);
    rc = e->key ? hist_fill(e, &r) : -ENOMEM;
    hs_report_free(&r);
    if (rc) {
        hist_entry_free(e);
        snprintf(err, errlen, "%s", strerror(ENOMEM));
        return rc;
    }
    e->used = true;
    e->ti = ti;
    e->id = p->id;
    e->stamp = ++hist_clock;
    *out = e;
    return 0;
}

/* ,"v":V,"lo":LO,"hi":HI: a value and its 95% interval. */
static void hist_value(hs_buf_t *b, int64_t v, double var)
{
    double lo, hi;
    hs_report_interval((double)v, var, &lo, &hi);
    hs_buf_printf(b, "\"v\":%" PRId64 ",\"lo\":%.0f,\"hi\":%.0f", v, lo, hi);
}

/* {"name":..,"points":[{"id","v","lo","hi"}...]}: site name's flat in each profile of ents
 * (0 where a profile has no such site, with hist_none_hi's upper bound). */
static void hist_series(hs_buf_t *b, const char *name, hist_entry_t *const *ents,
                        const hs_web_target_t *t)
{
    hs_buf_printf(b, "{\"name\":");
    hs_json_str(b, name);
    hs_buf_printf(b, ",\"points\":[");
    for (size_t i = 0; i < t->n; i++) {
        const hist_site_t *x = hist_find(ents[i], name);
        hs_buf_printf(b, "%s{\"id\":%" PRIu64 ",", i ? "," : "", t->ring[i].id);
        if (x)
            hist_value(b, x->flat, x->var);
        else /* no sample: 0, up to what could hide between the samples */
            hs_buf_printf(b, "\"v\":0,\"lo\":0,\"hi\":%.0f", ents[i]->none_hi);
        hs_buf_append(b, "}", 1);
    }
    hs_buf_append(b, "]}", 2);
}

/* The stacks of one site's stack table, for hist_stacks' ordering. */
typedef struct {
    int64_t v;
    double var;
    size_t sample; /* one sample with that stack, for its frames */
} hist_stack_t;

static int hist_stack_cmp(const void *a, const void *b)
{
    const hist_stack_t *x = a, *y = b;
    int64_t ax = x->v < 0 ? -x->v : x->v, ay = y->v < 0 ? -y->v : y->v;
    return ax != ay ? (ax < ay ? 1 : -1) : (x->sample > y->sample) - (x->sample < y->sample);
}

/* ,"stacks":[{"v","lo","hi","frames":[leaf first]}...],"nstacks":N: the stacks of B whose
 * leaf is node site (where its flat comes from), largest first, at most HIST_STACKS. */
static int hist_stacks(hs_buf_t *b, const hs_report_t *r, uint32_t site)
{
    uint32_t *ids = malloc((r->nsamples + 1) * sizeof(*ids));
    long ns = ids ? hs_report_stack_ids(r, false, ids) : -ENOMEM;
    hist_stack_t *st = ns >= 0 ? calloc((size_t)ns + 1, sizeof(*st)) : NULL;
    size_t k = 0;
    if (!st) {
        free(ids);
        return -ENOMEM;
    }
    for (size_t i = r->nsamples; i-- > 0;) {
        const hs_rsample_t *s = &r->samples[i];
        if (s->nframes && s->frames[0] == site && s->value) {
            st[ids[i]].v += s->value;
            st[ids[i]].var += s->var;
            st[ids[i]].sample = i + 1;
        }
    }
    for (long i = 0; i < ns; i++)
        if (st[i].sample)
            st[k++] = st[i];
    hs_sort(st, k, sizeof(*st), hist_stack_cmp);
    hs_buf_printf(b, ",\"nstacks\":%zu,\"stacks\":[", k);
    for (size_t i = 0; i < k && i < HIST_STACKS; i++) {
        const hs_rsample_t *s = &r->samples[st[i].sample - 1];
        hs_buf_printf(b, "%s{", i ? "," : "");
        hist_value(b, st[i].v, st[i].var);
        hs_buf_printf(b, ",\"frames\":[");
        for (size_t f = 0; f < s->nframes; f++) {
            if (f)
                hs_buf_append(b, ",", 1);
            hs_json_str(b, r->nodes[s->frames[f]].name);
        }
        hs_buf_append(b, "]}", 2);
    }
    free(st);
    free(ids);
    return hs_buf_append(b, "]", 1);
}

/* ,"site":{name, points, flat in B, stacks}: the chosen site's history and its stacks in
 * B (a report of B built here: the cache keeps no stacks). */
static int hist_site(hs_web_req_t *q, const char *name, const hs_web_prof_t *pb,
                     hist_entry_t *const *ents, const hs_report_opts_t *o)
{
    hs_report_t r;
    int rc = hs_web_report(q, &r, (const hs_profile_t *const *)&pb->prof, 1, o);
    if (rc)
        return rc;
    uint32_t node = UINT32_MAX;
    for (size_t i = 0; i < r.nnodes && node == UINT32_MAX; i++)
        if (!strcmp(r.nodes[i].name, name) && r.nodes[i].flat)
            node = (uint32_t)i;
    hs_buf_printf(q->out, ",\"site\":");
    hist_series(q->out, name, ents, q->t);
    q->out->len--; /* reopen the object for B's figures */
    hs_buf_printf(q->out, ",\"in_b\":%s", node != UINT32_MAX ? "true" : "false");
    rc = node != UINT32_MAX ? hist_stacks(q->out, &r, node) : 0;
    hs_report_free(&r);
    if (rc)
        return hs_web_error(q, 500, strerror(ENOMEM));
    return hs_buf_append(q->out, "}", 1) ? 500 : 0;
}

/* The entries of every profile of q's target under o; *eb gets profile pb's. */
static int hist_entries(hs_web_req_t *q, const hs_report_opts_t *o, const char *key,
                        const hs_web_prof_t *pb, hist_entry_t **ents, hist_entry_t **eb)
{
    char err[512];
    for (size_t i = 0; i < q->t->n; i++) {
        int rc = hist_get(q->ti, &q->t->ring[i], o, key, &ents[i], err, sizeof(err));
        if (rc)
            return hs_web_error(q, rc == -ENOMEM ? 500 : 400, err);
        if (&q->t->ring[i] == pb)
            *eb = ents[i];
    }
    return 0;
}

/* GET /api/history?target=T[&id=B][&n=N][&site=NAME] and the view arguments: the top N
 * (8) sites of B (the newest profile when no id), their flat in every kept profile with
 * 95% intervals; with site, that site's history and its stacks in B. */
int hs_web_view_history(hs_web_req_t *q)
{
    const char *idv = q->arg(q->ctx, "id"), *nv = q->arg(q->ctx, "n");
    const char *site = q->arg(q->ctx, "site");
    const hs_web_prof_t *pb = idv && *idv ? hs_web_req_prof(q, "id")
                              : q->t->n   ? &q->t->ring[q->t->n - 1]
                                          : NULL;
    long n = nv && *nv ? strtol(nv, NULL, 10) : 8;
    hist_entry_t *ents[HS_WEB_KEEP], *eb = NULL;
    hs_report_opts_t o;
    int rc = hs_web_report_opts(q, &o);
    if (rc)
        return rc;
    if (idv && *idv && !pb)
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    if (!pb)
        return hs_buf_printf(q->out, "{\"id\":null,\"profiles\":[],\"sites\":[]}") ? 500 : 0;
    n = n < 1 ? 1 : n > HIST_MAX_SITES ? HIST_MAX_SITES : n;
    char *key = hist_key(&o);
    if (!key)
        return hs_web_error(q, 500, strerror(ENOMEM));
    rc = hist_entries(q, &o, key, pb, ents, &eb);
    free(key);
    if (rc)
        return rc;
    hs_buf_t *b = q->out;
    hs_buf_printf(b, "{\"id\":%" PRIu64 ",\"sample_type\":", pb->id);
    hs_json_str(b, eb->sample_type);
    hs_buf_printf(b, ",\"unit\":");
    hs_json_str(b, eb->sample_unit);
    hs_buf_printf(b, ",\"exact\":%s,\"nsites\":%zu,\"profiles\":[",
                  pb->prof->period <= 1 ? "true" : "false", eb->nsites);
    for (size_t i = 0; i < q->t->n; i++) {
        const hs_web_prof_t *p = &q->t->ring[i];
        hs_buf_printf(b, "%s{\"id\":%" PRIu64 ",\"time\":%" PRId64 ",\"label\":", i ? "," : "",
                      p->id, p->time_ms);
        hs_json_str(b, p->label);
        hs_buf_append(b, "}", 1);
    }
    hs_buf_printf(b, "],\"sites\":[");
    for (size_t i = 0; i < eb->nsites && i < (size_t)n; i++) {
        if (i)
            hs_buf_append(b, ",", 1);
        hist_series(b, eb->sites[eb->rank[i]].name, ents, q->t);
    }
    hs_buf_append(b, "]", 1);
    if (site && *site && (rc = hist_site(q, site, pb, ents, &o)) != 0)
        return rc;
    return hs_buf_append(b, "}", 1) ? 500 : 0;
}

/* ---- the series' live heap -------------------------------------------------------------- */

void hs_web_history_inuse(size_t ti, const hs_web_prof_t *p, double *lo, double *hi)
{
    /* The options of the page's default History request: one cache entry serves both. */
    hs_report_opts_t o = {.sample_type = "inuse_space", .gran = HS_GRAN_FUNCTIONS};
    hist_entry_t *e;
    char err[512], *key = NULL;
    *lo = *hi = (double)p->inuse;
    o.trim_paths = true;
    if (p->inuse >= 0 && (key = hist_key(&o)) &&
        hist_get(ti, p, &o, key, &e, err, sizeof(err)) == 0)
        hs_report_interval((double)p->inuse, e->sum_var, lo, hi);
    free(key);
}

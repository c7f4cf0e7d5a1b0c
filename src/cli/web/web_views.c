/*
 * The profile views of `heapsift web`'s API (web_api.c dispatches): top, diff and the
 * flame graph's tree. Every figure comes from the common report model (report.h) with the
 * options and formatting `heapsift top`, `diff` and `flamegraph` use, so the page shows
 * the same rows, values and labels as the command line; a top row's 95% intervals and a
 * diff's verdicts are those of `heapsift top --ci` and `heapsift diff` (report_noise.c). Arguments
 * of the views: sample (a sample type), focus, ignore, hide, show (regular expressions),
 * tagfocus, tagignore (label filters), granularity (functions, lines, addresses), n (row
 * count); a refinement that does not compile is a 400 naming it. Called with the store lock
 * held.
 */
#include "model/pprof.h"
#include "base/sort.h"
#include "reports/report.h"
#include "reports/report_suspects.h"
#include "web.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* The argument name, NULL when absent or empty. */
static const char *web_opt(hs_web_req_t *q, const char *name)
{
    const char *v = q->arg(q->ctx, name);
    return v && *v ? v : NULL;
}

/* The refinements of q into o (focus, ignore, hide, show: POSIX extended regular
 * expressions; tagfocus, tagignore: pprof's label filters): 0, or the status after
 * answering 400 with the argument that does not compile. */
static int web_refine_opts(hs_web_req_t *q, hs_report_opts_t *o)
{
    static const char *const names[] = {"focus", "ignore", "hide", "show"};
    const char **res[] = {&o->focus, &o->ignore, &o->hide, &o->show};
    char msg[400], why[128];
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        regex_t re;
        int rc;
        if (!(*res[i] = web_opt(q, names[i])))
            continue;
        if ((rc = regcomp(&re, *res[i], REG_EXTENDED | REG_NOSUB)) != 0) {
            regerror(rc, &re, why, sizeof(why));
            snprintf(msg, sizeof(msg), "%s: bad regular expression '%.200s': %s", names[i], *res[i],
                     why);
            return hs_web_error(q, 400, msg);
        }
        regfree(&re);
    }
    o->tagfocus = web_opt(q, "tagfocus");
    o->tagignore = web_opt(q, "tagignore");
    const char *tags[2] = {o->tagfocus, o->tagignore}, *tnames[2] = {"tagfocus", "tagignore"};
    for (int i = 0; i < 2; i++) {
        hs_tagfilter_t *f = NULL;
        int rc = tags[i] ? hs_tagfilter_compile(tags[i], tnames[i], &f, why, sizeof(why)) : 0;
        hs_tagfilter_free(f);
        if (rc == -EINVAL)
            return hs_web_error(q, 400, why);
        if (rc)
            return hs_web_error(q, 500, strerror(-rc));
    }
    return 0;
}

int hs_web_report_opts(hs_web_req_t *q, hs_report_opts_t *o_)
{
    hs_report_opts_t o = {0};
    const char *g = q->arg(q->ctx, "granularity");
    o.sample_type = web_opt(q, "sample");
    o.trim_paths = true;
    o.gran = !g || !*g || !strcmp(g, "functions") ? HS_GRAN_FUNCTIONS
             : !strcmp(g, "lines")                ? HS_GRAN_LINES
             : !strcmp(g, "addresses")            ? HS_GRAN_ADDRESSES
                                                  : (hs_gran_t)-1;
    if (o.gran == (hs_gran_t)-1)
        return hs_web_error(q, 400, "granularity: functions, lines or addresses");
    int rc = web_refine_opts(q, &o);
    if (rc)
        return rc;
    *o_ = o;
    return 0;
}

int hs_web_report(hs_web_req_t *q, hs_report_t *r, const hs_profile_t *const *profs, size_t n,
                  const hs_report_opts_t *o)
{
    static const int signs[2] = {1, -1};
    char err[512];
    int rc = hs_report_build(r, profs, signs, n, o, err, sizeof(err));
    if (rc) {
        hs_report_free(r);
        return hs_web_error(q, rc == -ENOMEM ? 500 : 400, err);
    }
    return 0;
}

/* Builds the report over profs (signs +1, -1) with the view arguments. */
static int api_report(hs_web_req_t *q, hs_report_t *r, const hs_profile_t *const *profs, size_t n)
{
    hs_report_opts_t o;
    int rc = hs_web_report_opts(q, &o);
    return rc ? rc : hs_web_report(q, r, profs, n, &o);
}

const char *hs_web_unit(hs_web_req_t *q, const char *sample_unit)
{
    const char *v = q->arg(q->ctx, "unit"), *u = v && *v ? hs_report_unit_arg(v) : "minimum";
    const char *scaled = "";
    if (!u || !strcmp(u, "minimum"))
        return u;
    /* Bytes are the values that 1024 of auto-scales to 1kB (a count stays unitless). */
    hs_report_scale(1024, sample_unit, "minimum", &scaled);
    return strcmp(scaled, "kB") == 0 ? u : "minimum";
}

static void api_label(char *out, size_t len, const hs_report_t *r, int64_t v, const char *ou)
{
    hs_report_label(out, len, v, r->sample_unit, ou);
}

static void api_pct(hs_buf_t *b, const char *key, int64_t v, int64_t total)
{
    char p[32];
    hs_report_percent(p, sizeof(p), v, total);
    hs_json_key(b, key);
    hs_json_str(b, p + strspn(p, " "));
}

/* A top row's 95% interval of value (hs_report_interval): ,"KEY_lo":LO,"KEY_hi":HI and
 * ,"KEY_ci":"LO..HI" in the table's unit. */
static void api_interval(hs_buf_t *b, const char *key, const hs_report_t *r, double value,
                         double var, const char *ou)
{
    double lo, hi;
    char label[160];
    hs_report_interval(value, var, &lo, &hi);
    hs_report_interval_label(label, sizeof(label), value, var, r->sample_unit, ou);
    hs_buf_printf(b, ",\"%s_lo\":%.0f,\"%s_hi\":%.0f,\"%s_ci\":", key, lo, key, hi, key);
    hs_json_str(b, label);
}

/* One row of a top or diff table. */
static void api_row(hs_buf_t *b, const hs_report_t *r, const hs_rnode_t *nd, const char *ou,
                    int64_t sum, bool diff)
{
    char f[64], c[64];
    api_label(f, sizeof(f), r, nd->flat, ou);
    api_label(c, sizeof(c), r, nd->cum, ou);
    hs_buf_printf(b, "{\"flat\":%" PRId64 ",\"cum\":%" PRId64 ",\"name\":", nd->flat, nd->cum);
    hs_json_str(b, nd->name);
    hs_buf_printf(b, ",\"fn\":");
    hs_json_str(b, nd->fname);
    hs_buf_printf(b, ",\"file\":");
    hs_json_str(b, nd->file);
    hs_buf_printf(b, ",\"flat_label\":");
    hs_json_str(b, f);
    hs_buf_printf(b, ",\"cum_label\":");
    hs_json_str(b, c);
    if (!diff) {
        api_interval(b, "flat", r, (double)nd->flat, nd->flat_var, ou);
        api_interval(b, "cum", r, (double)nd->cum, nd->cum_var, ou);
    }
    hs_buf_append(b, ",", 1);
    api_pct(b, "flat_pct", nd->flat, r->total);
    hs_buf_append(b, ",", 1);
    api_pct(b, "sum_pct", sum, r->total);
    hs_buf_append(b, ",", 1);
    api_pct(b, "cum_pct", nd->cum, r->total);
    if (diff) {
        /* As `heapsift diff` judges a row: flat, or cum for rows without flat change. */
        hs_buf_printf(b, ",\"change\":");
        hs_json_str(b, hs_report_verdict_name(hs_report_row_verdict(r, nd, nd->flat == 0)));
    }
    hs_buf_append(b, "}", 1);
}

/* The rows of `heapsift top` (or diff) for a built report, with its summary lines. */
static int api_rows(hs_web_req_t *q, hs_report_t *r, bool diff)
{
    const char *nv = q->arg(q->ctx, "n");
    long count = nv ? strtol(nv, NULL, 10) : 0;
    size_t n, orig, dropped;
    uint32_t *shown = hs_report_select(r, false, 0.005, count < 0 ? 0 : count, &n, &orig, &dropped);
    if (!shown)
        return hs_web_error(q, 500, strerror(ENOMEM));
    const char *pu = hs_web_unit(q, r->sample_unit);
    if (!pu) {
        free(shown);
        return hs_web_error(q, 400, "unit: B, kB, MB, GB, TB, PB or auto");
    }
    const char *ou = hs_report_out_unit(r, pu, shown, n);
    hs_buf_t *b = q->out;
    char a[64];
    int64_t flat_sum = 0, sum = 0;
    for (size_t i = 0; i < n; i++)
        flat_sum += r->nodes[shown[i]].flat;
    hs_buf_printf(b, "{\"sample_type\":");
    hs_json_str(b, r->sample_type);
    hs_buf_printf(b, ",\"unit\":");
    hs_json_str(b, r->sample_unit);
    hs_buf_printf(b, ",\"out_unit\":");
    hs_json_str(b, ou);
    api_label(a, sizeof(a), r, r->total, ou);
    hs_buf_printf(b, ",\"total\":%" PRId64 ",\"total_label\":", r->total);
    hs_json_str(b, a);
    api_label(a, sizeof(a), r, flat_sum, ou);
    hs_buf_printf(b, ",\"shown\":%" PRId64 ",\"shown_label\":", flat_sum);
    hs_json_str(b, a);
    hs_buf_append(b, ",", 1);
    api_pct(b, "shown_pct", flat_sum, r->total);
    int64_t cut = (int64_t)((double)r->total * 0.005);
    api_label(a, sizeof(a), r, cut < 0 ? -cut : cut, ou);
    hs_buf_printf(b, ",\"dropped\":%zu,\"dropped_under\":", dropped);
    hs_json_str(b, a);
    hs_buf_printf(b, ",\"nodes\":%zu,\"rows\":[", orig);
    for (size_t i = 0; i < n; i++) {
        sum += r->nodes[shown[i]].flat;
        if (i)
            hs_buf_append(b, ",", 1);
        api_row(b, r, &r->nodes[shown[i]], ou, sum, diff);
    }
    free(shown);
    return hs_buf_append(b, "]", 1) ? 500 : 0;
}

int hs_web_view_top(hs_web_req_t *q)
{
    const hs_web_prof_t *p = hs_web_req_prof(q, "id");
    hs_report_t r;
    if (!p)
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    int rc = api_report(q, &r, (const hs_profile_t *const *)&p->prof, 1);
    if (rc)
        return rc;
    rc = api_rows(q, &r, false);
    if (!rc)
        hs_buf_printf(q->out, ",\"id\":%" PRIu64 "}", p->id);
    hs_report_free(&r);
    return rc;
}

/* A diff: B minus A, built like `heapsift diff A B` (NEW first, then the base). */
int hs_web_view_diff(hs_web_req_t *q)
{
    const hs_web_prof_t *a = hs_web_req_prof(q, "a"), *b = hs_web_req_prof(q, "b");
    if (!a || !b)
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    const hs_profile_t *profs[2] = {b->prof, a->prof};
    hs_report_t r;
    int rc = api_report(q, &r, profs, 2);
    if (rc)
        return rc;
    int64_t tot[2] = {0, 0}; /* A's and B's totals after filtering */
    for (size_t i = 0; i < r.nsamples; i++)
        tot[r.samples[i].base ? 0 : 1] +=
            r.samples[i].base ? -r.samples[i].value : r.samples[i].value;
    rc = api_rows(q, &r, true);
    if (!rc) {
        char la[64], lb[64], ld[64];
        const char *u = hs_web_unit(q, r.sample_unit); /* checked by api_rows */
        api_label(la, sizeof(la), &r, tot[0], u);
        api_label(lb, sizeof(lb), &r, tot[1], u);
        api_label(ld, sizeof(ld), &r, tot[1] - tot[0], u);
        hs_buf_printf(q->out,
                      ",\"a\":%" PRIu64 ",\"b\":%" PRIu64 ",\"a_total\":%" PRId64
                      ",\"b_total\":%" PRId64 ",\"a_total_label\":",
                      a->id, b->id, tot[0], tot[1]);
        hs_json_str(q->out, la);
        hs_buf_printf(q->out, ",\"b_total_label\":");
        hs_json_str(q->out, lb);
        hs_buf_printf(q->out, ",\"delta_label\":");
        hs_json_str(q->out, ld);
        rc = hs_buf_append(q->out, "}", 1) ? 500 : 0;
    }
    hs_report_free(&r);
    return rc;
}

/* ---- the flame graph's tree ----------------------------------------------------------- */

typedef struct {
    const hs_report_t *r;
    const hs_rtree_t *t;
    hs_buf_t *b;
    int64_t min; /* frames below this (both values) are left out: invisible anyway */
    bool diff;   /* against a base: each frame carries its verdict */
} flame_t;

static const flame_t *flame_sort;

static int flame_cmp(const void *x, const void *y)
{
    const hs_rtree_t *a = &flame_sort->t[*(const uint32_t *)x];
    const hs_rtree_t *c = &flame_sort->t[*(const uint32_t *)y];
    return strcmp(flame_sort->r->nodes[a->node].name, flame_sort->r->nodes[c->node].name);
}

/* {"n": name, "v": cum, "s": flat, "b": base cum, "c": [children by name]}, and against a
 * base "k": the change's verdict (hs_report_tree_verdict, as the SVG colours it). */
static int flame_walk(const flame_t *f, uint32_t i)
{
    const hs_rtree_t *n = &f->t[i];
    size_t k = 0, nk = 0;
    hs_buf_printf(f->b, "{\"n\":");
    hs_json_str(f->b, i ? f->r->nodes[n->node].name : "all");
    hs_buf_printf(f->b, ",\"v\":%" PRId64 ",\"s\":%" PRId64 ",\"b\":%" PRId64, n->cum, n->flat,
                  n->base_cum);
    if (f->diff)
        hs_buf_printf(f->b, ",\"k\":\"%s\"",
                      hs_report_verdict_name(hs_report_tree_verdict(f->r, n)));
    hs_buf_printf(f->b, ",\"c\":[");
    for (uint32_t c = n->child; c; c = f->t[c].sibling)
        nk++;
    uint32_t *kids = malloc((nk + 1) * sizeof(*kids));
    if (!kids)
        return -ENOMEM;
    for (uint32_t c = n->child; c; c = f->t[c].sibling)
        if (f->t[c].cum >= f->min || f->t[c].base_cum >= f->min)
            kids[k++] = c;
    flame_sort = f;
    hs_sort(kids, k, sizeof(*kids), flame_cmp);
    int rc = 0;
    for (size_t j = 0; !rc && j < k; j++) {
        if (j)
            hs_buf_append(f->b, ",", 1);
        rc = flame_walk(f, kids[j]);
    }
    free(kids);
    return rc ? rc : hs_buf_append(f->b, "]}", 2);
}

int hs_web_view_flame(hs_web_req_t *q)
{
    const hs_web_prof_t *p = hs_web_req_prof(q, "id"), *base = NULL;
    const char *bv = q->arg(q->ctx, "base");
    if (!p || (bv && *bv && !(base = hs_web_req_prof(q, "base"))))
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    const hs_profile_t *profs[2] = {p->prof, base ? base->prof : NULL};
    hs_report_t r;
    hs_rtree_t *t = NULL;
    int rc = api_report(q, &r, profs, base ? 2 : 1);
    if (rc)
        return rc;
    long n = hs_report_tree(&r, &t);
    if (n < 0) {
        hs_report_free(&r);
        return hs_web_error(q, 500, strerror(ENOMEM));
    }
    int64_t top = t[0].cum > t[0].base_cum ? t[0].cum : t[0].base_cum;
    flame_t f = {&r, t, q->out, top / 10000 > 1 ? top / 10000 : 1, base != NULL};
    hs_buf_printf(q->out, "{\"sample_type\":");
    hs_json_str(q->out, r.sample_type);
    hs_buf_printf(q->out, ",\"unit\":");
    hs_json_str(q->out, r.sample_unit);
    hs_buf_printf(q->out, ",\"id\":%" PRIu64 ",\"base\":", p->id);
    hs_json_int_or_null(q->out, base ? (int64_t)base->id : -1);
    hs_buf_printf(q->out, ",\"root\":");
    rc = flame_walk(&f, 0);
    rc = rc ? rc : hs_buf_append(q->out, "}", 1);
    free(t);
    hs_report_free(&r);
    return rc ? hs_web_error(q, 500, strerror(ENOMEM)) : 0;
}

/* ---- leak suspects (report_suspects.c, as `heapsift suspects`) --------------------------- */

/* The verdict words of `heapsift suspects`. */
static const char *sus_verdict(const hs_suspect_t *x)
{
    if (x->growing)
        return "growing";
    if (x->growth == 0 && x->slope == 0)
        return "flat";
    return hs_report_verdict((double)x->growth, x->var) == HS_SHRANK && x->slope < 0 ? "shrinking"
                                                                                     : "noise";
}

/* A suspect's figure in the page's unit ou, or in its own unit when a non-zero value would
 * read 0 in it (a few kB lost must not read "lost 0" on a page in MB). */
static void sus_label(char *out, size_t len, double v, const char *from, const char *ou)
{
    hs_report_flabel(out, len, v, from, ou);
    if (v != 0 && strcmp(out, "0") == 0)
        hs_report_flabel(out, len, v, from, "minimum");
}

static void sus_row(hs_buf_t *b, const hs_suspects_t *s, const hs_suspect_t *x, const char *ou)
{
    const char *u = s->rep.sample_unit;
    char slope[64], growth[64], noise[64], last[64];
    sus_label(slope, sizeof(slope), x->slope, u, ou);
    sus_label(growth, sizeof(growth), (double)x->growth, u, ou);
    sus_label(noise, sizeof(noise), 1.96 * sqrt(x->var), u, ou);
    sus_label(last, sizeof(last), (double)x->last, u, ou);
    hs_buf_printf(b, "{\"verdict\":\"%s\",\"slope\":%.6g,\"growth\":%" PRId64 ",\"last\":%" PRId64,
                  sus_verdict(x), x->slope, x->growth, x->last);
    hs_buf_printf(b, ",\"r2\":");
    if (isnan(x->r2))
        hs_buf_printf(b, "null");
    else
        hs_buf_printf(b, "%.4f", x->r2);
    hs_buf_printf(b, ",\"rises\":%zu,\"unreachable\":%" PRId64 ",\"unreachable_label\":", x->rises,
                  x->unreach);
    char un[64];
    sus_label(un, sizeof(un), (double)x->unreach, u, ou);
    hs_json_str(b, un);
    hs_buf_printf(b, ",\"slope_label\":");
    hs_json_str(b, slope);
    hs_buf_printf(b, ",\"growth_label\":");
    hs_json_str(b, growth);
    hs_buf_printf(b, ",\"noise_label\":");
    hs_json_str(b, noise);
    hs_buf_printf(b, ",\"last_label\":");
    hs_json_str(b, last);
    hs_buf_printf(b, ",\"stack\":[");
    for (size_t k = 0; k < x->nframes; k++) {
        if (k)
            hs_buf_append(b, ",", 1);
        hs_json_str(b, s->rep.nodes[x->frames[k]].name);
    }
    hs_buf_printf(b, "],\"values\":[");
    for (size_t k = 0; k < s->nprofiles; k++)
        hs_buf_printf(b, "%s%" PRId64, k ? "," : "", x->values[k]);
    hs_buf_append(b, "]}", 2);
}

/* Suspects over the target's kept profiles (those from id a to id b when both are given),
 * the rows `heapsift suspects` lists: growing or with a positive slope, or holding
 * unreachable objects when the last profile has reachable labels (first), top n (20). */
int hs_web_view_suspects(hs_web_req_t *q)
{
    const hs_web_prof_t *a = hs_web_req_prof(q, "from"), *z = hs_web_req_prof(q, "to");
    const hs_profile_t *profs[HS_WEB_KEEP];
    size_t n = 0;
    for (size_t i = 0; i < q->t->n; i++)
        if ((!a || q->t->ring[i].id >= a->id) && (!z || q->t->ring[i].id <= z->id))
            profs[n++] = q->t->ring[i].prof;
    hs_buf_printf(q->out, "{\"available\":true,\"profiles\":%zu", n);
    if (n < 2)
        return hs_buf_printf(q->out, ",\"reason\":\"needs at least two profiles\",\"suspects\":[]}")
                   ? 500
                   : 0;
    hs_report_opts_t o = {0};
    hs_suspects_t s;
    char err[512];
    const char *nv = q->arg(q->ctx, "n");
    long max = nv ? strtol(nv, NULL, 10) : 20, shown = 0;
    o.sample_type = web_opt(q, "sample");
    o.trim_paths = true;
    int rc = web_refine_opts(q, &o);
    if (rc)
        return rc;
    rc = hs_suspects_find(&s, profs, n, &o, err, sizeof(err));
    if (rc) {
        hs_suspects_free(&s);
        return hs_web_error(q, rc == -ENOMEM ? 500 : 400, err);
    }
    hs_buf_printf(q->out, ",\"span\":%.3f,\"timed\":%s,\"processes\":%zu,\"sample_type\":",
                  s.t[s.nprofiles - 1], s.timed ? "true" : "false",
                  hs_suspects_processes(profs, n));
    hs_json_str(q->out, s.rep.sample_type);
    const char *ou = hs_web_unit(q, s.rep.sample_unit);
    ou = ou ? ou : "minimum";
    hs_buf_printf(q->out,
                  ",\"stacks\":%zu,\"growing\":%zu,\"reachable_labels\":%s,\"unreachable\":%zu,"
                  "\"suspects\":[",
                  s.n, s.ngrowing, s.reach ? "true" : "false", s.nunreach);
    for (size_t i = 0; i < s.n && shown < (max > 0 ? max : 20); i++) {
        if (s.s[i].growth <= 0 && s.s[i].slope <= 0 && s.s[i].unreach <= 0)
            continue;
        if (shown++)
            hs_buf_append(q->out, ",", 1);
        sus_row(q->out, &s, &s.s[i], ou);
    }
    hs_suspects_free(&s);
    return hs_buf_append(q->out, "]}", 2) ? 500 : 0;
}

/* The stored profile itself, gzipped pprof (the page's download link). */
int hs_web_view_raw(hs_web_req_t *q)
{
    const hs_web_prof_t *p = hs_web_req_prof(q, "id");
    hs_buf_t pb = HS_BUF_INIT;
    if (!p)
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    int rc = hs_pprof_encode(p->prof, &pb);
    rc = rc ? rc : hs_gzip(pb.data, pb.len, 6, q->out);
    hs_buf_free(&pb);
    return rc ? hs_web_error(q, 500, strerror(-rc)) : 0;
}

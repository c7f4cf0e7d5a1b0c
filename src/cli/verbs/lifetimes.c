/*
 * `heapsift lifetimes FILE`: per stack (or per leaf), how long the sampled allocations
 * lived: freed within the short threshold (churn), in between, after the long threshold,
 * or still live when the profile was written; the share of short-lived bytes and a
 * median estimate. The analysis is report_lifetimes.c; this file parses options and
 * prints the table or JSON on stdout. Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/sort.h"
#include "reports/report_lifetimes.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void life_usage(FILE *f)
{
    fprintf(f, "usage: heapsift lifetimes [options] FILE\n"
               "\n"
               "How long sampled allocations lived, per stack: which sites churn short-lived\n"
               "memory and which hold it. Needs a profile with lifetimes (heapsift records\n"
               "them: each stack's freed allocations carry a \"lifetime\" label, its bucket).\n"
               "Columns, in the sample type (alloc_space by default, or alloc_objects):\n"
               "  alloc          allocated in all\n"
               "  <SHORT         freed within SHORT (1ms by default)\n"
               "  SHORT-LONG     freed after SHORT, within LONG (1s by default)\n"
               "  >=LONG         freed after LONG or more\n"
               "  live           not freed when the profile was written\n"
               "  short%%         the share freed within SHORT\n"
               "  median         estimated median lifetime (\"live\": over half still live)\n"
               "  kind           churn (half or more freed within SHORT), holds (half or more\n"
               "                 live or freed after LONG), medium (half or more in between),\n"
               "                 mixed\n"
               "A bucket counts as within SHORT when its upper bound is at most SHORT, as after\n"
               "LONG when its lower end (the bound below it, at most a decade) is at least LONG.\n"
               "\n"
               "  -n N                show the top N rows (default 20)\n"
               "  --sort KEY          alloc (default), short (bytes freed within SHORT) or\n"
               "                      held (live and freed after LONG)\n"
               "  --short DURATION    the churn threshold: 1ms, 100us, 10ms (default 1ms)\n"
               "  --long DURATION     the hold threshold (default 1s)\n"
               "  --leaf              one row per leaf function (or line) instead of stack\n"
               "  --json              the rows as JSON, every bucket\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

typedef struct {
    double short_ns, long_ns;
    const char *sort;
    bool leaf;
} life_opts_t;

/* "1ms", "250us", "2s", "100" (nanoseconds): the value in nanoseconds, or -1. */
static double life_duration(const char *s)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || v < 0)
        return -1;
    if (!*end)
        return v;
    const char *u = "";
    double ns = hs_report_scale(v, end, "nanoseconds", &u);
    return strcmp(u, "ns") == 0 && ns == ns ? ns : -1;
}

/* Takes the lifetimes options out of argv (compacting it) before the shared parser. */
static int life_own_opts(int *argc, char **argv, life_opts_t *lo)
{
    const char *names[2] = {"1ms (default)", "1s (default)"};
    int w = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        double *dur = NULL;
        if (strcmp(a, "--leaf") == 0) {
            lo->leaf = true;
        } else if ((v = hs_view_optval(*argc, argv, &i, "--sort", &missing))) {
            if (strcmp(v, "alloc") && strcmp(v, "short") && strcmp(v, "held")) {
                hs_cli_error("lifetimes: unknown sort key '%s' (alloc, short, held)", v);
                return 1;
            }
            lo->sort = v;
        } else if ((v = hs_view_optval(*argc, argv, &i, "--short", &missing)) ||
                   (v = hs_view_optval(*argc, argv, &i, "--long", &missing))) {
            bool isshort = strncmp(a, "--short", 7) == 0;
            dur = isshort ? &lo->short_ns : &lo->long_ns;
            names[!isshort] = v;
            if ((*dur = life_duration(v)) < 0) {
                hs_cli_error("lifetimes: bad duration '%s' for %s (say 1ms, 250us, 2s)", v,
                             dur == &lo->short_ns ? "--short" : "--long");
                return 1;
            }
        } else if (missing) {
            hs_cli_error("lifetimes: missing value for '%s' (see heapsift lifetimes --help)", a);
            return 1;
        } else {
            argv[w++] = argv[i];
        }
    }
    if (lo->short_ns > lo->long_ns) {
        hs_cli_error("lifetimes: --short %s is longer than --long %s", names[0], names[1]);
        return 1;
    }
    *argc = w;
    return -1;
}

static const char *life_sort_key;

/* Whether any sample of p, before the filters, carries a lifetime label. */
static bool life_any_label(const hs_profile_t *p)
{
    for (size_t i = 0; i < p->nsamples; i++)
        for (size_t j = 0; j < p->samples[i].nlabels; j++) {
            int64_t k = p->samples[i].labels[j].key;
            if (k > 0 && (size_t)k < p->nstrings && strcmp(p->strings[k], "lifetime") == 0)
                return true;
        }
    return false;
}

static int life_cmp(const void *pa, const void *pb)
{
    const hs_lifetime_row_t *a = pa, *b = pb;
    int64_t x = a->total, y = b->total;
    if (strcmp(life_sort_key, "short") == 0) {
        x = a->shorter;
        y = b->shorter;
    } else if (strcmp(life_sort_key, "held") == 0) {
        x = a->live + a->longer;
        y = b->live + b->longer;
    }
    if (x != y)
        return x > y ? -1 : 1;
    return a->total > b->total ? -1 : a->total < b->total;
}

static const char *life_kind(const hs_lifetime_row_t *x)
{
    if (x->total <= 0)
        return "-";
    if (2 * x->shorter >= x->total)
        return "churn";
    if (2 * (x->live + x->longer) >= x->total)
        return "holds";
    return 2 * (x->total - x->live - x->longer - x->shorter) >= x->total ? "medium" : "mixed";
}

static void life_median(char *out, size_t len, double ns, const hs_lifetimes_t *l)
{
    if (isnan(ns))
        snprintf(out, len, "-");
    else if (isinf(ns))
        snprintf(out, len, "live");
    else if (l->nbounds && ns >= l->bounds[l->nbounds - 1] && isinf(l->bounds[l->nbounds - 1]))
        snprintf(out, len, "long");
    else
        hs_report_flabel(out, len, ns, "nanoseconds", "auto");
}

static void life_pct(char *out, size_t len, int64_t part, int64_t total)
{
    snprintf(out, len, "%.1f%%", total > 0 ? 100.0 * (double)part / (double)total : 0.0);
}

static void life_header(const hs_lifetimes_t *l, const char *path, char h[3][80])
{
    char s[32], g[32], tot[64], a[16], b[16], c[16];
    hs_report_flabel(s, sizeof(s), l->short_ns, "nanoseconds", "auto");
    hs_report_flabel(g, sizeof(g), l->long_ns, "nanoseconds", "auto");
    snprintf(h[0], 80, "<%s", s);
    snprintf(h[1], 80, "%s-%s", s, g);
    snprintf(h[2], 80, ">=%s", g);
    hs_report_label(tot, sizeof(tot), l->total, l->rep.sample_unit, "minimum");
    life_pct(a, sizeof(a), l->shorter, l->total);
    life_pct(b, sizeof(b), l->longer, l->total);
    life_pct(c, sizeof(c), l->live, l->total);
    printf("Lifetimes of %s in %s: %s in all; %s freed within %s, %s freed after %s or more, "
           "%s still live\n",
           l->rep.sample_type, path, tot, a, s, b, g, c);
}

static void life_table(hs_lifetimes_t *l, const hs_viewopts_t *o, const char *path)
{
    char h[3][80], v[6][64], pct[16], med[32];
    life_header(l, path, h);
    printf("%10s %10s %10s %10s %10s %7s %8s  %-6s %s\n", "alloc", h[0], h[1], h[2], "live",
           "short%", "median", "kind", "stack (leaf first)");
    const char *u = l->rep.sample_unit;
    long max = o->count ? o->count : 20;
    for (size_t i = 0; i < l->nrows && (long)i < max; i++) {
        const hs_lifetime_row_t *x = &l->rows[i];
        int64_t mid = x->total - x->live - x->shorter - x->longer;
        int64_t vals[5] = {x->total, x->shorter, mid, x->longer, x->live};
        for (int k = 0; k < 5; k++)
            hs_report_label(v[k], sizeof(v[k]), vals[k], u, "minimum");
        life_pct(pct, sizeof(pct), x->shorter, x->total);
        life_median(med, sizeof(med), x->median_ns, l);
        printf("%10s %10s %10s %10s %10s %7s %8s  %-6s ", v[0], v[1], v[2], v[3], v[4], pct, med,
               life_kind(x));
        hs_view_print_stack(&l->rep, x->frames, x->nframes, 6, stdout);
        putchar('\n');
    }
}

static void life_json(const hs_lifetimes_t *l, const hs_viewopts_t *o)
{
    printf("{\"sample_type\": \"%s\", \"short_ns\": %.0f, \"long_ns\": %.0f, \"bounds_ns\": [",
           l->rep.sample_type, l->short_ns, l->long_ns);
    for (size_t b = 0; b < l->nbounds; b++)
        printf(isinf(l->bounds[b]) ? "%snull" : "%s%.0f", b ? ", " : "", l->bounds[b]);
    printf("],\n \"rows\": [");
    long max = o->count ? o->count : (long)l->nrows;
    for (size_t i = 0; i < l->nrows && (long)i < max; i++) {
        const hs_lifetime_row_t *x = &l->rows[i];
        printf("%s\n  {\"total\": %lld, \"live\": %lld, \"short\": %lld, \"long\": %lld, "
               "\"kind\": \"%s\", \"median_ns\": ",
               i ? "," : "", (long long)x->total, (long long)x->live, (long long)x->shorter,
               (long long)x->longer, life_kind(x));
        printf(isfinite(x->median_ns) ? "%.0f" : "null", x->median_ns);
        printf(", \"freed\": ");
        hs_view_json_ints(x->freed, l->nbounds, stdout);
        printf(", \"frames\": ");
        hs_view_json_frames(&l->rep, x->frames, x->nframes, stdout);
        printf("}");
    }
    printf("\n]}\n");
}

int hs_cmd_lifetimes(int argc, char **argv)
{
    life_opts_t lo = {1e6, 1e9, "alloc", false};
    hs_viewopts_t o;
    int rc = life_own_opts(&argc, argv, &lo);
    if (rc < 0)
        rc = hs_viewopts_parse(argc, argv, &o, HS_VO_COUNT | HS_VO_JSON, 1, life_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    if ((rc = hs_view_no_tags(&o)) != HS_VIEW_CONTINUE)
        return rc;
    hs_profile_t *p = NULL;
    if ((rc = hs_view_read(&o, o.pos[0], &p)) != HS_VIEW_CONTINUE)
        return rc;
    char err[512];
    hs_lifetimes_t l;
    rc = hs_lifetimes_build(&l, p, &o.r, lo.leaf, lo.short_ns, lo.long_ns, err, sizeof(err));
    if (rc) {
        hs_cli_error("%s: %s", o.pos[0], err);
        rc = rc == -ENOMEM ? 3 : rc == -EPROTO ? 2 : 1;
    } else {
        if (l.labelled == 0 && !life_any_label(p))
            fprintf(stderr,
                    "heapsift: note: %s has no lifetime labels (written without "
                    "lifetimes): every allocation shows as live\n",
                    o.pos[0]);
        life_sort_key = lo.sort;
        hs_sort(l.rows, l.nrows, sizeof(*l.rows), life_cmp);
        if (o.json)
            life_json(&l, &o);
        else
            life_table(&l, &o, o.pos[0]);
        rc = hs_view_done(0, o.pos[0]);
    }
    hs_lifetimes_free(&l);
    hs_profile_free(p);
    return rc;
}

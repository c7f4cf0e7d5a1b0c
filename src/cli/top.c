/*
 * `heapsift top`: flat and cumulative use per function (or line, or address),
 * byte-identical to `go tool pprof -top` from the "Showing nodes" line on (the header
 * too, but for pprof's own warnings). The pipeline (merging, filtering, aggregation, node
 * fraction, ordering, units) is the shared report model (report.h); this file prints it,
 * plus the optional --ci column: the 95% interval of each row's flat and cum from
 * sampling noise (docs/sampling.md). Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#include "cli.h"
#include "report.h"
#include "viewopts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The "(inline)" markers: edges between shown nodes at or above pprof's edge cutoff. */
static int top_inline_marks(hs_report_t *r, int64_t cutoff, bool *inl, bool *noinl)
{
    hs_redge_t *e = NULL;
    long n = hs_report_edges(r, true, &e);
    if (n < 0)
        return -ENOMEM;
    for (long i = 0; i < n; i++) {
        if ((e[i].weight < 0 ? -e[i].weight : e[i].weight) < cutoff)
            continue;
        if (e[i].inl)
            inl[e[i].to - 1] = true;
        else
            noinl[e[i].to - 1] = true;
    }
    free(e);
    return 0;
}

static void top_ci_flat(const hs_report_t *r, const hs_rnode_t *n, const char *ou, char *out,
                        size_t len)
{
    hs_report_flabel(out, len, 1.96 * sqrt(n->flat_var), r->sample_unit, ou);
}

static void top_ci_cum(const hs_report_t *r, const hs_rnode_t *n, const char *ou, char *out,
                       size_t len)
{
    hs_report_flabel(out, len, 1.96 * sqrt(n->cum_var), r->sample_unit, ou);
}

static const hs_top_column_t top_ci_cols[] = {
    {"flat\xc2\xb1", 11, top_ci_flat},
    {"cum\xc2\xb1", 11, top_ci_cum},
    {NULL, 0, NULL},
};

static void top_print_rows(const hs_report_t *r, const uint32_t *shown, size_t n, const char *ou,
                           const bool *inl, const bool *noinl, const hs_top_column_t *cols)
{
    char f[64], c[64], fp[32], sp[32], cp[32], x[128];
    int64_t sum = 0;
    printf("%10s %5s%% %5s%% %10s %5s%%", "flat", "flat", "sum", "cum", "cum");
    for (const hs_top_column_t *col = cols; col && col->header; col++)
        printf(" %*s", col->width, col->header);
    printf("\n");
    for (size_t i = 0; i < n; i++) {
        const hs_rnode_t *nd = &r->nodes[shown[i]];
        sum += nd->flat;
        hs_report_label(f, sizeof(f), nd->flat, r->sample_unit, ou);
        hs_report_label(c, sizeof(c), nd->cum, r->sample_unit, ou);
        hs_report_percent(fp, sizeof(fp), nd->flat, r->total);
        hs_report_percent(sp, sizeof(sp), sum, r->total);
        hs_report_percent(cp, sizeof(cp), nd->cum, r->total);
        const char *mark = !inl[shown[i]]    ? ""
                           : noinl[shown[i]] ? " (partial-inline)"
                                             : " (inline)";
        printf("%10s %s %s %10s %s", f, fp, sp, c, cp);
        for (const hs_top_column_t *col = cols; col && col->header; col++) {
            col->cell(r, nd, ou, x, sizeof(x));
            printf(" %*s", col->width, x);
        }
        printf("  %s%s\n", nd->name, mark);
    }
}

/* pprof's reportLabels after the profile's own: filters, totals, what was dropped. */
static void top_print_labels(const hs_report_t *r, const hs_viewopts_t *o, const uint32_t *shown,
                             size_t n, size_t orig, size_t dropped, const char *ou)
{
    char a[64], b[64], pct[32];
    int64_t flat_sum = 0;
    for (size_t i = 0; i < n; i++)
        flat_sum += r->nodes[shown[i]].flat;
    hs_report_print_header(r, ou, stdout);
    hs_report_print_filters(&o->r, stdout);
    hs_report_label(a, sizeof(a), flat_sum, r->sample_unit, ou);
    hs_report_label(b, sizeof(b), r->total, r->sample_unit, ou);
    hs_report_percent(pct, sizeof(pct), flat_sum, r->total);
    printf("Showing nodes accounting for %s, %s of %s total\n", a, pct + strspn(pct, " "), b);
    if (r->total == 0)
        return;
    if (dropped > 0) {
        int64_t cut = (int64_t)((double)r->total * 0.005);
        hs_report_label(a, sizeof(a), cut < 0 ? -cut : cut, r->sample_unit, ou);
        printf("Dropped %zu node%s (cum <= %s)\n", dropped, dropped > 1 ? "s" : "", a);
    }
    if (n > 0 && n < orig)
        printf("Showing top %zu nodes out of %zu\n", n, orig);
}

int hs_top_print(hs_report_t *r, const hs_viewopts_t *o, const hs_top_column_t *cols)
{
    size_t n, orig, dropped;
    int64_t flat_total = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        flat_total += r->nodes[i].flat;
    int64_t edge_cutoff = (int64_t)((double)flat_total * 0.001);
    uint32_t *shown = hs_report_select(r, o->cum, 0.005, o->count, &n, &orig, &dropped);
    bool *inl = calloc(r->nnodes + 1, 2 * sizeof(bool));
    int rc = !shown || !inl ? -ENOMEM : 0;
    if (!rc)
        rc = top_inline_marks(r, edge_cutoff < 0 ? -edge_cutoff : edge_cutoff, inl,
                              inl + r->nnodes + 1);
    if (!rc) {
        const char *ou = hs_report_out_unit(r, o->unit, shown, n);
        top_print_labels(r, o, shown, n, orig, dropped, ou);
        top_print_rows(r, shown, n, ou, inl, inl + r->nnodes + 1, cols);
    }
    free(inl);
    free(shown);
    return rc;
}

static void top_usage(FILE *f)
{
    fprintf(f, "usage: heapsift top [options] FILE\n"
               "\n"
               "Prints flat and cumulative use by function, like `go tool pprof -top`.\n"
               "FILE is any profile heapsift reads (pprof, gperftools, jemalloc, Go text).\n"
               "\n"
               "  -n N                show only the top N rows\n"
               "  --cum               sort by cumulative instead of flat use\n"
               "  --ci                add the 95%% interval of each row's flat and cum from\n"
               "                      sampling noise (0 for a profile recorded at rate 1)\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_top(int argc, char **argv)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, HS_VO_COUNT | HS_VO_CUM | HS_VO_CI, 1, top_usage);
    if (rc >= 0)
        return rc;
    hs_profile_t *p = NULL;
    if ((rc = hs_view_read(&o, o.pos[0], &p)) >= 0)
        return rc;
    hs_report_t r;
    int sign = 1;
    rc = hs_view_build(&r, (const hs_profile_t *const *)&p, &sign, 1, &o, o.pos[0]);
    if (rc < 0) {
        rc = hs_view_done(hs_top_print(&r, &o, o.ci ? top_ci_cols : NULL), o.pos[0]);
        hs_report_free(&r);
    }
    hs_profile_free(p);
    return rc;
}

/*
 * The top table of a built report (report.h), the way `go tool pprof -top` prints it:
 * pprof's labels (header, filters, totals, dropped nodes), then one row per node with
 * flat, flat%, sum%, cum, cum%, optional extra columns, the name and its (inline) mark.
 * Shared by `heapsift top`/`diff` (stdout) and the HTTP endpoint's ?display=text (a
 * memory stream, in the profiled process). Owns only its temporary arrays.
 */
#include "report.h"
#include "base/satmath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The shown nodes that some frame reaches as an inlined call: only an edge into one of
 * them can be an inline edge, so only theirs are counted (on 35,000 stacks of 25 frames,
 * 3M instructions where all the edges took 37M). False when there is none. */
static bool top_inlined(const hs_report_t *r, const uint32_t *shown, size_t nshown, bool *into)
{
    bool *want = into + r->nnodes, any = false;
    for (size_t i = 0; i < nshown; i++)
        want[shown[i]] = true;
    for (size_t si = 0; si < r->nsamples; si++) {
        const hs_rsample_t *s = &r->samples[si];
        for (size_t i = 0; i < s->nframes; i++)
            if (s->inl[i] && want[s->frames[i]])
                any = into[s->frames[i]] = true;
    }
    return any;
}

/* The "(inline)" markers: edges into shown nodes at or above pprof's edge cutoff. */
static int top_inline_marks(hs_report_t *r, int64_t cutoff, const uint32_t *shown, size_t nshown,
                            bool *inl, bool *noinl)
{
    hs_redge_t *e = NULL;
    bool *into = calloc(r->nnodes + 1, 2 * sizeof(bool));
    if (!into)
        return -ENOMEM;
    long n = top_inlined(r, shown, nshown, into) ? hs_report_edges_into(r, true, into, &e) : 0;
    free(into);
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

static void top_print_rows(const hs_report_t *r, const uint32_t *shown, size_t n, const char *ou,
                           const bool *inl, const bool *noinl, const hs_top_column_t *cols,
                           FILE *out)
{
    char x[128];
    int64_t sum = 0;
    fprintf(out, "%10s %5s%% %5s%% %10s %5s%%", "flat", "flat", "sum", "cum", "cum");
    for (const hs_top_column_t *col = cols; col && col->header; col++)
        fprintf(out, " %*s", col->width, col->header);
    fprintf(out, "\n");
    for (size_t i = 0; i < n; i++) {
        const hs_rnode_t *nd = &r->nodes[shown[i]];
        sum = hs_sat_add(sum, nd->flat);
        const char *mark = !inl[shown[i]]    ? ""
                           : noinl[shown[i]] ? " (partial-inline)"
                                             : " (inline)";
        hs_report_print_cells(r, nd, sum, ou, out);
        for (const hs_top_column_t *col = cols; col && col->header; col++) {
            col->cell(r, nd, ou, x, sizeof(x));
            fprintf(out, " %*s", col->width, x);
        }
        fprintf(out, "  %s%s\n", nd->name, mark);
    }
}

/* pprof's reportLabels after the profile's own: filters, totals, what was dropped. */
static void top_print_labels(const hs_report_t *r, const hs_top_opts_t *o, const uint32_t *shown,
                             size_t n, size_t orig, size_t dropped, const char *ou, FILE *out)
{
    char a[64], b[64], pct[32];
    int64_t flat_sum = 0;
    for (size_t i = 0; i < n; i++)
        flat_sum = hs_sat_add(flat_sum, r->nodes[shown[i]].flat);
    hs_report_print_header(r, ou, out);
    if (o->filters)
        hs_report_print_filters(o->filters, out);
    hs_report_label(a, sizeof(a), flat_sum, r->sample_unit, ou);
    hs_report_label(b, sizeof(b), r->total, r->sample_unit, ou);
    hs_report_percent(pct, sizeof(pct), flat_sum, r->total);
    fprintf(out, "Showing nodes accounting for %s, %s of %s total\n", a, pct + strspn(pct, " "), b);
    if (r->total == 0)
        return;
    if (dropped > 0) {
        int64_t cut = (int64_t)((double)r->total * 0.005);
        hs_report_label(a, sizeof(a), cut < 0 ? -cut : cut, r->sample_unit, ou);
        fprintf(out, "Dropped %zu node%s (cum <= %s)\n", dropped, dropped > 1 ? "s" : "", a);
    }
    if (n > 0 && n < orig)
        fprintf(out, "Showing top %zu nodes out of %zu\n", n, orig);
}

int hs_report_top(hs_report_t *r, const hs_top_opts_t *o, const hs_top_column_t *cols, FILE *out)
{
    size_t n, orig, dropped;
    int64_t flat_total = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        flat_total = hs_sat_add(flat_total, r->nodes[i].flat);
    int64_t edge_cutoff = (int64_t)((double)flat_total * 0.001);
    uint32_t *shown = hs_report_select(r, o->cum, 0.005, o->count, &n, &orig, &dropped);
    bool *inl = calloc(r->nnodes + 1, 2 * sizeof(bool));
    int rc = !shown || !inl ? -ENOMEM : 0;
    if (!rc)
        rc = top_inline_marks(r, edge_cutoff < 0 ? -edge_cutoff : edge_cutoff, shown, n, inl,
                              inl + r->nnodes + 1);
    if (!rc) {
        const char *ou = hs_report_out_unit(r, o->unit ? o->unit : "minimum", shown, n);
        top_print_labels(r, o, shown, n, orig, dropped, ou, out);
        top_print_rows(r, shown, n, ou, inl, inl + r->nnodes + 1, cols, out);
    }
    free(inl);
    free(shown);
    return rc;
}

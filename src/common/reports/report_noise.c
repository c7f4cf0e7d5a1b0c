/*
 * Intervals and verdicts over the report's rows (report.h): the labels every view prints
 * for a 95% interval, and the judgement of a diff row's or a call tree node's change, both
 * from noise.c's few-sample rules, so that top --ci, check, diff, the flame graph and the
 * web UI print and judge alike. Pure formatting over a built report.
 */
#include "report.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void hs_report_interval_label(char *out, size_t len, double value, double var, const char *from,
                              const char *to)
{
    double lo, hi;
    char a[64], b[64];
    hs_report_interval(value, var, &lo, &hi);
    hs_report_flabel(a, sizeof(a), lo, from, to);
    hs_report_flabel(b, sizeof(b), hi, from, to);
    snprintf(out, len, "%s..%s", a, b);
}

void hs_report_interval_offsets(char *out, size_t len, double value, double var, const char *from,
                                const char *to)
{
    double lo, hi;
    char a[64], b[64];
    hs_report_interval(value, var, &lo, &hi);
    hs_report_flabel(a, sizeof(a), hi - value, from, to);
    hs_report_flabel(b, sizeof(b), value - lo, from, to);
    if (strcmp(a, b) == 0)
        snprintf(out, len, "+-%s", a);
    else
        snprintf(out, len, "+%s/-%s", a, b);
}

hs_verdict_t hs_report_row_verdict(const hs_report_t *r, const hs_rnode_t *n, bool cum)
{
    int64_t base = cum ? n->base_cum : n->base_flat, d = cum ? n->cum : n->flat;
    hs_estimate_t b = {(double)base, cum ? n->base_cum_var : n->base_flat_var, r->base_exact};
    hs_estimate_t now = {(double)base + (double)d, cum ? n->cum_var : n->flat_var, r->exact};
    return hs_report_compare(b, now, HS_NOISE_ALPHA);
}

hs_verdict_t hs_report_tree_verdict(const hs_report_t *r, const hs_rtree_t *t)
{
    hs_estimate_t b = {(double)t->base_cum, t->base_cum_var, r->base_exact};
    hs_estimate_t now = {(double)t->cum, t->cum_var, r->exact};
    return hs_report_compare(b, now, HS_NOISE_ALPHA);
}

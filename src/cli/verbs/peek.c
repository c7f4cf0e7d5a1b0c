/*
 * `heapsift peek REGEX FILE`: the callers and callees of every function whose name
 * matches REGEX, with edge weights, byte-identical to `go tool pprof -peek REGEX` (no
 * trimming, pprof's node and edge orders). Reads through the shared report model.
 * Exit codes: 0, 1 usage (also: nothing matched), 2 bad input, 3 I/O.
 */
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

static const char peek_sep[] =
    "----------------------------------------------------------+-------------";

static void peek_edge(const hs_report_t *r, const hs_redge_t *e, const hs_rnode_t *n,
                      const char *ou, bool in, FILE *f)
{
    char v[64], pct[32];
    hs_report_label(v, sizeof(v), e->weight, r->sample_unit, ou);
    hs_report_percent(pct, sizeof(pct), e->weight, n->cum);
    fprintf(f, "%50s %s |   %s%s\n", v, pct, r->nodes[(in ? e->from : e->to) - 1].name,
            e->inl ? " (inline)" : "");
}

/* pprof's printTree for the nodes matching re; returns how many matched. */
static size_t peek_nodes(const hs_report_t *r, const uint32_t *order, size_t n, const hs_redge_t *e,
                         size_t ne, const regex_t *re, const char *ou, FILE *f)
{
    int64_t flat_sum = 0;
    size_t matched = 0;
    for (size_t i = 0; i < n; i++) {
        uint32_t id = order[i] + 1;
        const hs_rnode_t *nd = &r->nodes[order[i]];
        if (regexec(re, nd->name, 0, NULL, 0) != 0)
            continue;
        matched++;
        fprintf(f, "%s\n", peek_sep);
        for (size_t k = 0; k < ne; k++)
            if (e[k].to == id)
                peek_edge(r, &e[k], nd, ou, true, f);
        flat_sum += nd->flat;
        hs_report_print_cells(r, nd, flat_sum, ou, f);
        fprintf(f, "                | %s\n", nd->name);
        for (size_t k = 0; k < ne; k++)
            if (e[k].from == id)
                peek_edge(r, &e[k], nd, ou, false, f);
    }
    if (n > 0)
        fprintf(f, "%s\n", peek_sep);
    return matched;
}

int hs_peek_print(hs_report_t *r, const char *unit, bool cum, bool header,
                  const hs_report_opts_t *filters, const regex_t *re, FILE *f, size_t *matched)
{
    size_t n, orig, dropped;
    hs_redge_t *e = NULL;
    uint32_t *order = hs_report_select(r, cum, 0, 0, &n, &orig, &dropped);
    long ne = order ? hs_report_edges(r, false, &e) : -ENOMEM;
    if (ne < 0) {
        free(order);
        return -ENOMEM;
    }
    hs_report_sort_edges(r, e, (size_t)ne);
    const char *ou = hs_report_out_unit(r, unit, order, n);
    char a[64], b[64], pct[32];
    int64_t flat_sum = 0;
    for (size_t i = 0; i < n; i++)
        flat_sum += r->nodes[order[i]].flat;
    if (header) {
        hs_report_print_header(r, ou, f);
        hs_report_print_filters(filters, f);
    }
    hs_report_label(a, sizeof(a), flat_sum, r->sample_unit, ou);
    hs_report_label(b, sizeof(b), r->total, r->sample_unit, ou);
    hs_report_percent(pct, sizeof(pct), flat_sum, r->total);
    fprintf(f, "Showing nodes accounting for %s, %s of %s total\n", a, pct + strspn(pct, " "), b);
    fprintf(f, "%s\n", peek_sep);
    fprintf(f, "      flat  flat%%   sum%%        cum   cum%%   calls calls%% + context \t \t \n");
    *matched = peek_nodes(r, order, n, e, (size_t)ne, re, ou, f);
    free(e);
    free(order);
    return 0;
}

static int peek_print(hs_report_t *r, const hs_viewopts_t *o, const regex_t *re, size_t *matched)
{
    return hs_peek_print(r, o->unit, o->cum, true, &o->r, re, stdout, matched);
}

static void peek_usage(FILE *f)
{
    fprintf(f, "usage: heapsift peek [options] REGEX FILE\n"
               "\n"
               "Prints the callers and callees of every function whose name matches REGEX\n"
               "(POSIX extended syntax), like `go tool pprof -peek REGEX`.\n"
               "\n"
               "  --cum               order the functions by cumulative use\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage or no match, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_peek(int argc, char **argv)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, HS_VO_CUM, 2, peek_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    return hs_view_regex_main("peek", &o, peek_print);
}

/*
 * `heapsift top`: flat and cumulative use per function (or line, or address),
 * byte-identical to `go tool pprof -top` from the "Showing nodes" line on (the header
 * too, but for pprof's own warnings). The pipeline (merging, filtering, aggregation, node
 * fraction, ordering, units) is the shared report model (report.h); this file prints it,
 * plus the optional --ci columns: the 95% interval of each row's flat and cum from
 * sampling noise, LO..HI (exact Poisson limits, asymmetric for few samples:
 * docs/sampling.md). Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static void top_ci_flat(const hs_report_t *r, const hs_rnode_t *n, const char *ou, char *out,
                        size_t len)
{
    hs_report_interval_label(out, len, (double)n->flat, n->flat_var, r->sample_unit, ou);
}

static void top_ci_cum(const hs_report_t *r, const hs_rnode_t *n, const char *ou, char *out,
                       size_t len)
{
    hs_report_interval_label(out, len, (double)n->cum, n->cum_var, r->sample_unit, ou);
}

/* Each interval one word, LO..HI, so the columns stay those of pprof plus two. */
static const hs_top_column_t top_ci_cols[] = {
    {"flat 95%", 19, top_ci_flat},
    {"cum 95%", 19, top_ci_cum},
    {NULL, 0, NULL},
};

int hs_top_print(hs_report_t *r, const hs_viewopts_t *o, const hs_top_column_t *cols)
{
    hs_top_opts_t t = {.cum = o->cum, .count = o->count, .unit = o->unit, .filters = &o->r};
    return hs_report_top(r, &t, cols, stdout);
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
               "                      sampling noise, as LO..HI (the value itself, LO = HI,\n"
               "                      for a profile recorded at rate 1)\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

static int top_print(hs_report_t *r, const hs_viewopts_t *o)
{
    return hs_top_print(r, o, o->ci ? top_ci_cols : NULL);
}

int hs_cmd_top(int argc, char **argv)
{
    static const hs_view_t v = {HS_VO_COUNT | HS_VO_CUM | HS_VO_CI, top_usage, true, top_print};
    return hs_view_main(argc, argv, &v);
}

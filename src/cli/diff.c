/*
 * `heapsift diff BASE NEW`: what grew and shrank, the rows and numbers of `go tool pprof
 * -top -diff_base BASE NEW` (NEW minus BASE, percentages of BASE's total), plus a column
 * pprof does not have: whether each change is beyond what sampling noise alone explains.
 * A change d of a row is "noise" when |d| < 1.96 sqrt(Var_base + Var_new), the variance
 * of each profile's estimate taken per stack from its objects, bytes and sampling rate
 * (docs/sampling.md, "Telling growth from noise"); a profile recorded at rate 1 is exact
 * and adds no variance. Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#include "cli.h"
#include "report.h"
#include "viewopts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool diff_by_cum;

/* The verdict on a row's change: flat against its noise, or cum for rows without flat
 * (callers) and with --cum. */
static void diff_verdict(const hs_report_t *r, const hs_rnode_t *n, const char *ou, char *out,
                         size_t len)
{
    (void)r;
    (void)ou;
    bool cum = diff_by_cum || n->flat == 0;
    hs_verdict_t v =
        hs_report_verdict((double)(cum ? n->cum : n->flat), cum ? n->cum_var : n->flat_var);
    snprintf(out, len, "%s", hs_report_verdict_name(v));
}

static const hs_top_column_t diff_cols[] = {
    {"change", 7, diff_verdict},
    {NULL, 0, NULL},
};

static void diff_usage(FILE *f)
{
    fprintf(f, "usage: heapsift diff [options] BASE NEW\n"
               "\n"
               "Prints what changed from BASE to NEW by function, the rows and numbers of\n"
               "`go tool pprof -top -diff_base BASE NEW` (percentages of BASE's total), with a\n"
               "column judging each change against sampling noise:\n"
               "  grew, shrank  beyond noise: |change| >= 1.96 standard deviations of the\n"
               "                difference of two sampled estimates (95%%)\n"
               "  noise         sampling alone explains it\n"
               "  same          no change\n"
               "The verdict is on the flat change, or the cumulative one for rows without flat\n"
               "change and with --cum.\n"
               "Profiles recorded at rate 1 are exact: any change is real.\n"
               "\n"
               "  -n N                show only the top N rows\n"
               "  --cum               sort (and judge) by cumulative instead of flat change\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_diff(int argc, char **argv)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, HS_VO_COUNT | HS_VO_CUM, 2, diff_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    diff_by_cum = o.cum;
    hs_profile_t *p[2] = {NULL, NULL}; /* NEW, then BASE: pprof's merge order */
    if ((rc = hs_view_read(&o, o.pos[1], &p[0])) != HS_VIEW_CONTINUE)
        return rc;
    if ((rc = hs_view_read(&o, o.pos[0], &p[1])) != HS_VIEW_CONTINUE) {
        hs_profile_free(p[0]);
        return rc;
    }
    hs_report_t r;
    int signs[2] = {1, -1};
    rc = hs_view_build(&r, (const hs_profile_t *const *)p, signs, 2, &o, o.pos[1]);
    if (rc == HS_VIEW_CONTINUE) {
        rc = hs_view_done(hs_top_print(&r, &o, diff_cols), o.pos[1]);
        hs_report_free(&r);
    }
    hs_profile_free(p[0]);
    hs_profile_free(p[1]);
    return rc;
}

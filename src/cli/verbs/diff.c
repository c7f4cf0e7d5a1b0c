/*
 * `heapsift diff BASE NEW`: what grew and shrank, the rows and numbers of `go tool pprof
 * -top -diff_base BASE NEW` (NEW minus BASE, percentages of BASE's total), plus a column
 * pprof does not have: whether each change is beyond what sampling noise alone explains.
 * Each side of a row is a Poisson count of effective samples (its estimate and variance,
 * taken per stack from its objects, bytes and sampling rate), and a change is "noise"
 * when the exact conditional binomial test of the two counts does not reject "the same
 * truth" at 5% two-sided (hs_report_compare; docs/sampling.md, "Telling growth from
 * noise"); a profile recorded at rate 1 is exact. Exit codes: 0, 1 usage, 2 bad input, 3
 * I/O.
 */
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static bool diff_by_cum;

/* The verdict on a row's change: flat against its noise, or cum for rows without flat
 * (callers) and with --cum. */
static void diff_verdict(const hs_report_t *r, const hs_rnode_t *n, const char *ou, char *out,
                         size_t len)
{
    (void)ou;
    bool cum = diff_by_cum || n->flat == 0;
    snprintf(out, len, "%s", hs_report_verdict_name(hs_report_row_verdict(r, n, cum)));
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
               "  grew, shrank  beyond noise: an exact test of the two sides' sample counts\n"
               "                rejects an unchanged truth (5%%, two-sided; about 1.96\n"
               "                standard deviations of the difference when samples are many)\n"
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

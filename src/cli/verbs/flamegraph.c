/*
 * `heapsift flamegraph [-o OUT.svg] [--base BASE] FILE`: a self-contained interactive
 * SVG flame graph drawn by heapsift itself: one rectangle per call path, its width
 * proportional to the path's cumulative value, roots at the bottom, children by name.
 * Inline CSS and JavaScript, no network: hovering shows name, value and percentage,
 * clicking zooms into a frame (its ancestors stay as a strip), "Reset zoom" goes back,
 * "Search" highlights frames matching a regular expression and says what share they
 * hold. With --base, widths are FILE's values and colours its change from BASE, judged
 * against sampling noise as `heapsift diff` judges it: red grew, blue shrank, grey within
 * noise (drawn by src/common/reports/report_flame.c). Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static void fg_usage(FILE *f)
{
    fprintf(f, "usage: heapsift flamegraph [options] [-o OUT.svg] [--base BASE] FILE\n"
               "\n"
               "Writes an interactive SVG flame graph (hover for details, click to zoom,\n"
               "Escape to unzoom, Search, Ctrl-F or / to highlight), self-contained: open it\n"
               "in any browser.\n"
               "\n"
               "  -o FILE             write the SVG to FILE (default: standard output)\n"
               "  --base BASE         differential: widths from FILE, colours from the change\n"
               "                      since BASE beyond sampling noise (red grew, blue shrank,\n"
               "                      grey within noise: heapsift diff's verdict)\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

static int fg_output(const hs_report_t *r, const hs_viewopts_t *o)
{
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (!f) {
        hs_cli_error("%s: %s", o->out, strerror(errno));
        return 3;
    }
    int rc = hs_report_flamegraph(r, o->base != NULL, f);
    if (rc)
        hs_cli_error("%s: %s", o->pos[0], strerror(-rc));
    if ((f == stdout ? fflush(f) : fclose(f)) != 0 && !rc) {
        hs_cli_error("%s: %s", o->out ? o->out : "stdout", strerror(errno));
        rc = -EIO;
    }
    return rc ? 3 : 0;
}

static int fg_view(hs_report_t *r, const hs_viewopts_t *o, void *arg)
{
    (void)arg;
    return fg_output(r, o);
}

int hs_cmd_flamegraph(int argc, char **argv)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, HS_VO_OUT | HS_VO_BASE, 1, fg_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    return hs_view_base_main(&o, fg_view, NULL);
}

/*
 * `heapsift graph [-o OUT.svg|OUT.dot] [--base BASE] FILE`: the call graph as
 * `go tool pprof -dot` and `-svg` draw it (the graph and its DOT text come from
 * src/common/reports/report_dot.c). DOT is written by heapsift itself; SVG is Graphviz's layout of
 * that text, made by running its `dot -Tsvg` program (scripts/setup.sh installs it); with
 * --layout heapsift, heapsift's own plainer drawing (report_graphsvg.c). With --base, the values
 * are FILE minus BASE and the nodes are coloured by heapsift diff's verdict on their cum. Exit
 * codes: 0, 1 usage, 2 bad input, 3 I/O (also: dot is missing or failed).
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void graph_usage(FILE *f)
{
    fprintf(f, "usage: heapsift graph [options] [-o OUT.svg|OUT.dot] [--base BASE] FILE\n"
               "\n"
               "Draws the call graph as `go tool pprof -dot` (or -svg) does: a box per\n"
               "function with its flat and cumulative values, the font growing with flat, an\n"
               "arrow per call weighted by the bytes that went through it. Nodes under 0.5%%\n"
               "of the total and edges under 0.1%% are dropped and counted in the legend,\n"
               "then the 80 nodes pprof ranks first are kept. Writes DOT on standard output,\n"
               "or to OUT; an OUT ending in .svg is laid out by Graphviz's `dot` program.\n"
               "\n"
               "  -o FILE             write to FILE: SVG when it ends in .svg, else DOT\n"
               "  --svg               write SVG on standard output\n"
               "  --layout L          how SVG is laid out: dot (Graphviz, the default) or\n"
               "                      heapsift (its own plainer layered drawing, no Graphviz:\n"
               "                      what the endpoint's ?display=svg serves)\n"
               "  --base BASE         FILE minus BASE; nodes red when their cum grew beyond\n"
               "                      sampling noise, green when it shrank, grey otherwise\n"
               "                      (heapsift diff's verdict)\n"
               "  --nodecount N       keep at most N nodes (default 80; 0: all)\n"
               "  --nodefraction F    drop nodes under F of the total (default 0.005)\n"
               "  --edgefraction F    drop edges under F of the total (default 0.001)\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error or Graphviz missing.\n");
}

typedef struct {
    hs_graph_opts_t g;
    bool svg;
    bool own_layout; /* --layout heapsift: report_graphsvg.c's drawing, no Graphviz */
} graph_args_t;

static int graph_number(const char *opt, const char *v, double *d, long *n)
{
    char *end;
    if (d)
        *d = strtod(v, &end);
    else
        *n = strtol(v, &end, 10);
    if (!*v || *end || (d && !(*d >= 0 && *d <= 1)) || (n && *n < 0)) {
        hs_cli_error("graph: %s wants %s, not '%s' (see heapsift graph --help)", opt,
                     d ? "a fraction from 0 to 1" : "a count", v);
        return 1;
    }
    return HS_VIEW_CONTINUE;
}

/* Takes graph's own options out of argv (shifting the rest down), leaving the view
 * options to hs_viewopts_parse. */
static int graph_own_options(int *argc, char **argv, graph_args_t *a)
{
    int k = 1;
    for (int i = 1; i < *argc; i++) {
        bool missing = false;
        const char *v;
        int rc = HS_VIEW_CONTINUE;
        if (strcmp(argv[i], "--svg") == 0)
            a->svg = true;
        else if ((v = hs_view_optval(*argc, argv, &i, "--layout", &missing))) {
            if (strcmp(v, "dot") != 0 && strcmp(v, "heapsift") != 0) {
                hs_cli_error("graph: unknown layout '%s' (dot, heapsift)", v);
                return 1;
            }
            a->own_layout = strcmp(v, "heapsift") == 0;
        } else if ((v = hs_view_optval(*argc, argv, &i, "--nodecount", &missing)))
            rc = graph_number("--nodecount", v, NULL, &a->g.node_count);
        else if ((v = hs_view_optval(*argc, argv, &i, "--nodefraction", &missing)))
            rc = graph_number("--nodefraction", v, &a->g.node_fraction, NULL);
        else if ((v = hs_view_optval(*argc, argv, &i, "--edgefraction", &missing)))
            rc = graph_number("--edgefraction", v, &a->g.edge_fraction, NULL);
        else if (missing) {
            hs_cli_error("graph: missing value for '%s' (see heapsift graph --help)", argv[i]);
            return 1;
        } else
            argv[k++] = argv[i];
        if (rc != HS_VIEW_CONTINUE)
            return rc;
    }
    *argc = k;
    return HS_VIEW_CONTINUE;
}

static bool graph_wants_svg(const graph_args_t *a, const char *out)
{
    size_t n = out ? strlen(out) : 0;
    return a->svg || (n > 4 && strcmp(out + n - 4, ".svg") == 0);
}

static int graph_output(hs_report_t *r, const hs_viewopts_t *o, graph_args_t *a)
{
    hs_graph_t g;
    char *text = NULL;
    size_t len = 0;
    int rc = 3;
    FILE *m = NULL;
    if (hs_graph_build(r, &a->g, &g) != 0) {
        hs_cli_error("%s: %s", o->pos[0], strerror(ENOMEM));
        return 3;
    }
    bool own = a->own_layout && graph_wants_svg(a, o->out);
    if (!(m = open_memstream(&text, &len)) ||
        (own ? hs_graph_write_svg(r, &g, &a->g, m) : hs_graph_write_dot(r, &g, &a->g, m)) != 0 ||
        fclose(m) != 0) {
        hs_cli_error("%s: %s", o->pos[0], strerror(ENOMEM));
        goto out;
    }
    hs_buf_t svg = HS_BUF_INIT;
    if (!own && graph_wants_svg(a, o->out)) {
        char err[512];
        if (hs_cli_dot_svg(text, len, &svg, err, sizeof(err)) != 0) {
            hs_cli_error("graph: %s; or write DOT with -o FILE.dot", err);
            hs_buf_free(&svg);
            goto out;
        }
        free(text);
        text = (char *)svg.data;
        len = svg.len;
        svg.data = NULL;
    }
    FILE *f = o->out ? fopen(o->out, "w") : stdout;
    if (!f) {
        hs_cli_error("%s: %s", o->out, strerror(errno));
        goto out;
    }
    bool bad = fwrite(text, 1, len, f) != len;
    if ((f == stdout ? fflush(f) : fclose(f)) != 0 || bad)
        hs_cli_error("%s: %s", o->out ? o->out : "stdout", strerror(errno));
    else
        rc = 0;
out:
    free(text);
    hs_graph_free(&g);
    return rc;
}

static int graph_view(hs_report_t *r, const hs_viewopts_t *o, void *arg)
{
    return graph_output(r, o, arg);
}

int hs_cmd_graph(int argc, char **argv)
{
    graph_args_t a = {0};
    hs_graph_opts_default(&a.g);
    int rc = graph_own_options(&argc, argv, &a);
    hs_viewopts_t o;
    if (rc != HS_VIEW_CONTINUE || (rc = hs_viewopts_parse(argc, argv, &o, HS_VO_OUT | HS_VO_BASE, 1,
                                                          graph_usage)) != HS_VIEW_CONTINUE)
        return rc;
    a.g.unit = o.unit;
    a.g.filters = &o.r;
    a.g.diff = o.base != NULL;
    return hs_view_base_main(&o, graph_view, &a);
}

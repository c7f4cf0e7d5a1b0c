/*
 * The Graph, Source and Peek tabs' API of `heapsift web` (web_api.c dispatches): the call graph
 * of a profile, or of B against a base A, exactly as `heapsift graph` draws it (the same
 * hs_graph_t, the same DOT text; laid out by Graphviz's dot when it is installed, else by
 * report_graphsvg.c), with the names of its nodes so the page can focus on one; the
 * source listing of `heapsift list` for a regular expression, and the callers and callees
 * of `heapsift peek` (pprof's Peek view) for one. Called with the store lock
 * held; dot runs for the time of one layout (a fraction of a second for 80 nodes).
 */
#define _GNU_SOURCE /* open_memstream */
#include "reports/report.h"
#include "kit/viewopts.h"
#include "web.h"
#include "verbs/verbs.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* The SVG of g: dot's layout of the DOT text, or heapsift's own when dot cannot run. */
static int graph_svg(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o,
                     hs_buf_t *svg, const char **layout)
{
    char *text = NULL, err[512];
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return -ENOMEM;
    int rc = hs_graph_write_dot(r, g, o, m);
    if (fclose(m) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc == 0 && hs_cli_dot_svg(text, len, svg, err, sizeof(err)) == 0) {
        *layout = "dot";
    } else if (rc == 0) {
        free(text);
        text = NULL;
        svg->len = 0;
        if (!(m = open_memstream(&text, &len)))
            return -ENOMEM;
        rc = hs_graph_write_svg(r, g, o, m);
        if (fclose(m) != 0 && rc == 0)
            rc = -ENOMEM;
        rc = rc ? rc : hs_buf_append(svg, text, len);
        *layout = "heapsift";
    }
    free(text);
    return rc;
}

static int graph_json(hs_web_req_t *q, hs_report_t *r, bool diff)
{
    hs_graph_opts_t o;
    hs_graph_t g;
    hs_buf_t svg = HS_BUF_INIT;
    const char *layout = "";
    hs_graph_opts_default(&o);
    o.diff = diff;
    o.unit = hs_web_unit(q, r->sample_unit);
    if (!o.unit)
        return hs_web_error(q, 400, "unit: B, kB, MB, GB, TB, PB or auto");
    int rc = hs_graph_build(r, &o, &g);
    if (rc)
        return hs_web_error(q, 500, strerror(-rc));
    rc = graph_svg(r, &g, &o, &svg, &layout);
    rc = rc ? rc : hs_buf_append(&svg, "", 1); /* a C string for hs_json_str */
    if (rc == 0) {
        hs_buf_printf(q->out, "{\"layout\":\"%s\",\"nodes\":%zu,\"edges\":%zu,\"svg\":", layout,
                      g.nnodes, g.nedges);
        hs_json_str(q->out, (const char *)svg.data);
        hs_buf_printf(q->out, ",\"names\":[");
        for (size_t i = 0; i < g.nnodes; i++) {
            if (i)
                hs_buf_append(q->out, ",", 1);
            hs_json_str(q->out, r->nodes[g.nodes[i]].name);
        }
        hs_buf_printf(q->out, "],\"functions\":[");
        for (size_t i = 0; i < g.nnodes; i++) {
            if (i)
                hs_buf_append(q->out, ",", 1);
            hs_json_str(q->out, r->nodes[g.nodes[i]].fname);
        }
        rc = hs_buf_append(q->out, "]}", 2);
    }
    hs_buf_free(&svg);
    hs_graph_free(&g);
    return rc ? hs_web_error(q, 500, strerror(ENOMEM)) : 0;
}

/* ?id=B [&base=A]: B's graph, or B minus A coloured by the noise verdicts. */
int hs_web_view_graph(hs_web_req_t *q)
{
    const hs_web_prof_t *p = hs_web_req_prof(q, "id"), *base = NULL;
    const char *bv = q->arg(q->ctx, "base");
    if (!p || (bv && *bv && !(base = hs_web_req_prof(q, "base"))))
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    const hs_profile_t *profs[2] = {p->prof, base ? base->prof : NULL};
    hs_report_opts_t o;
    hs_report_t r;
    int rc = hs_web_report_opts(q, &o);
    rc = rc ? rc : hs_web_report(q, &r, profs, base ? 2 : 1, &o);
    if (rc)
        return rc;
    rc = graph_json(q, &r, base != NULL);
    hs_report_free(&r);
    return rc;
}

typedef int web_text_fn(hs_report_t *r, const char *unit, const regex_t *re, FILE *f,
                        size_t *matched);

static int web_list_text(hs_report_t *r, const char *unit, const regex_t *re, FILE *f,
                         size_t *matched)
{
    return hs_list_print(r, unit, re, f, matched);
}

static int web_peek_text(hs_report_t *r, const char *unit, const regex_t *re, FILE *f,
                         size_t *matched)
{
    return hs_peek_print(r, unit, true, false, NULL, re, f, matched);
}

/* print's text for the functions fn names in B, as {"functions", "text"}; lines: at line
 * granularity with the objects' names (list), else at the page's. */
static int web_text_view(hs_web_req_t *q, web_text_fn *print, bool lines)
{
    const hs_web_prof_t *p = hs_web_req_prof(q, "id");
    const char *fn = q->arg(q->ctx, "fn");
    if (!p)
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    if (!fn || !*fn)
        return hs_web_error(q, 400, "fn: a regular expression naming functions");
    regex_t re;
    if (regcomp(&re, fn, REG_EXTENDED | REG_NOSUB) != 0)
        return hs_web_error(q, 400, "fn: bad regular expression");
    hs_report_opts_t o;
    hs_report_t r;
    int rc = hs_web_report_opts(q, &o);
    if (lines) {
        o.gran = HS_GRAN_LINES;
        o.obj_names = true;
    }
    const hs_profile_t *profs[1] = {p->prof};
    rc = rc ? rc : hs_web_report(q, &r, profs, 1, &o);
    const char *unit = rc ? NULL : hs_web_unit(q, r.sample_unit);
    if (!rc && !unit) {
        hs_report_free(&r);
        rc = hs_web_error(q, 400, "unit: B, kB, MB, GB, TB, PB or auto");
    }
    if (rc) {
        regfree(&re);
        return rc;
    }
    char *text = NULL, msg[600];
    size_t len = 0, matched = 0;
    FILE *m = open_memstream(&text, &len);
    rc = m ? print(&r, unit, &re, m, &matched) : -ENOMEM;
    if (m && fclose(m) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc == 0 && matched == 0) {
        snprintf(msg, sizeof(msg), "no matches found for regexp: %s", fn);
        rc = hs_web_error(q, 404, msg);
    } else if (rc == 0) {
        hs_buf_printf(q->out, "{\"functions\":%zu,\"text\":", matched);
        hs_json_str(q->out, text);
        rc = hs_buf_append(q->out, "}", 1) ? hs_web_error(q, 500, strerror(ENOMEM)) : 0;
    } else {
        rc = hs_web_error(q, 500, strerror(ENOMEM));
    }
    free(text);
    regfree(&re);
    hs_report_free(&r);
    return rc;
}

/* ?id=B&fn=REGEX: `heapsift list REGEX` of B, as text. */
int hs_web_view_source(hs_web_req_t *q)
{
    return web_text_view(q, web_list_text, true);
}

/* ?id=B&fn=REGEX: `heapsift peek REGEX` of B (its callers and callees), as text. */
int hs_web_view_peek(hs_web_req_t *q)
{
    return web_text_view(q, web_peek_text, false);
}

/*
 * The call graph (report_dot.c's hs_graph_t) as an SVG image laid out here, for where
 * Graphviz cannot be run: inside the profiled process (its endpoint's ?display=svg), where
 * forking a layout program from someone else's process is no option. A plain layered
 * drawing: each node one layer below the lowest of its callers (edges that close a cycle
 * are left out of that), nodes in a layer ordered by the mean position of their
 * neighbours over a few sweeps down and up, layers centred, edges drawn as curves from a
 * caller's bottom to a callee's top. Boxes, font sizes, colours, edge widths and labels
 * are pprof's, as in the DOT text. The layout is cruder than Graphviz's (no routing
 * around boxes, so a long edge may cross a box); `heapsift graph -o OUT.svg` uses dot.
 *
 * Reads a built report and graph; owns only its scratch arrays.
 */
#define _GNU_SOURCE /* open_memstream */
#include "report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum { SVG_GAP_X = 24, SVG_GAP_Y = 56, SVG_MARGIN = 16, SVG_SWEEPS = 6 };

typedef struct {
    const hs_report_t *r;
    const hs_graph_t *g;
    size_t n;
    uint32_t *pos; /* report node index -> graph position */
    int *layer;    /* per position */
    double *x, *w, *h, *key;
    int *font;
    char **label;  /* per position: lines separated by '\n' */
    uint32_t *ord; /* positions, by layer then order in it */
    int nlayers;
    double width, top;
    double *layer_y, *layer_h;
} svg_t;

static void svg_free(svg_t *s)
{
    for (size_t i = 0; s->label && i < s->n; i++)
        free(s->label[i]);
    free(s->label);
    free(s->pos);
    free(s->layer);
    free(s->x);
    free(s->w);
    free(s->h);
    free(s->key);
    free(s->font);
    free(s->ord);
    free(s->layer_y);
    free(s->layer_h);
}

static int svg_alloc(svg_t *s)
{
    size_t n = s->n + 1;
    s->pos = calloc(s->r->nnodes + 1, sizeof(*s->pos));
    s->layer = calloc(n, sizeof(*s->layer));
    s->x = calloc(n, sizeof(*s->x));
    s->w = calloc(n, sizeof(*s->w));
    s->h = calloc(n, sizeof(*s->h));
    s->key = calloc(n, sizeof(*s->key));
    s->font = calloc(n, sizeof(*s->font));
    s->label = calloc(n, sizeof(*s->label));
    s->ord = calloc(n, sizeof(*s->ord));
    s->layer_y = calloc(n, sizeof(*s->layer_y));
    s->layer_h = calloc(n, sizeof(*s->layer_h));
    if (!s->pos || !s->layer || !s->x || !s->w || !s->h || !s->key || !s->font || !s->label ||
        !s->ord || !s->layer_y || !s->layer_h)
        return -ENOMEM;
    return 0;
}

/* Layers: in pprof's node order, a node is placed once all its callers are (else the
 * first unplaced one in that order goes, its unplaced callers' edges treated as closing
 * cycles), one layer below its lowest placed caller. */
static void svg_layers(svg_t *s)
{
    bool *placed = (bool *)s->key; /* scratch: key is set later */
    memset(placed, 0, s->n * sizeof(bool));
    for (size_t done = 0; done < s->n; done++) {
        size_t pick = s->n;
        for (size_t i = 0; i < s->n && pick == s->n; i++) {
            if (placed[i])
                continue;
            bool ready = true;
            for (size_t k = 0; k < s->g->nedges && ready; k++) {
                const hs_redge_t *e = &s->g->edges[k];
                uint32_t from = s->pos[e->from - 1], to = s->pos[e->to - 1];
                ready = !(to == i && from != i && !placed[from]);
            }
            if (ready)
                pick = i;
        }
        if (pick == s->n)
            for (pick = 0; placed[pick]; pick++)
                ;
        int layer = 0;
        for (size_t k = 0; k < s->g->nedges; k++) {
            const hs_redge_t *e = &s->g->edges[k];
            uint32_t from = s->pos[e->from - 1], to = s->pos[e->to - 1];
            if (to == pick && from != pick && placed[from] && s->layer[from] + 1 > layer)
                layer = s->layer[from] + 1;
        }
        s->layer[pick] = layer;
        placed[pick] = true;
        if (layer + 1 > s->nlayers)
            s->nlayers = layer + 1;
    }
}

static int svg_ord_cmp(const void *a, const void *b, void *arg)
{
    const svg_t *s = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (s->layer[x] != s->layer[y])
        return s->layer[x] - s->layer[y];
    if (s->key[x] != s->key[y])
        return s->key[x] < s->key[y] ? -1 : 1;
    return (x > y) - (x < y);
}

/* x of every node: each layer's boxes side by side in s->ord's order, centred. */
static void svg_pack(svg_t *s)
{
    s->width = 0;
    for (size_t i = 0; i < s->n;) {
        size_t j = i;
        double total = 0;
        for (; j < s->n && s->layer[s->ord[j]] == s->layer[s->ord[i]]; j++)
            total += s->w[s->ord[j]] + (j > i ? SVG_GAP_X : 0);
        s->key[s->ord[i]] = total; /* the layer's width, for the second pass */
        if (total > s->width)
            s->width = total;
        i = j;
    }
    for (size_t i = 0; i < s->n;) {
        double total = s->key[s->ord[i]], x = 0;
        size_t j = i;
        for (; j < s->n && s->layer[s->ord[j]] == s->layer[s->ord[i]]; j++) {
            s->x[s->ord[j]] = (s->width - total) / 2 + x + s->w[s->ord[j]] / 2;
            x += s->w[s->ord[j]] + SVG_GAP_X;
        }
        i = j;
    }
}

/* One sweep: each node's key is the mean x of its neighbours in the layers above (down)
 * or below (up), or its own x when it has none; layers are then reordered by key. */
static void svg_sweep(svg_t *s, bool down)
{
    for (size_t i = 0; i < s->n; i++) {
        double sum = 0;
        int cnt = 0;
        for (size_t k = 0; k < s->g->nedges; k++) {
            const hs_redge_t *e = &s->g->edges[k];
            uint32_t from = s->pos[e->from - 1], to = s->pos[e->to - 1];
            uint32_t other = to == i ? from : from == i ? to : UINT32_MAX;
            if (other == UINT32_MAX || other == i)
                continue;
            if (down ? s->layer[other] < s->layer[i] : s->layer[other] > s->layer[i]) {
                sum += s->x[other];
                cnt++;
            }
        }
        s->key[i] = cnt ? sum / cnt : s->x[i];
    }
    qsort_r(s->ord, s->n, sizeof(*s->ord), svg_ord_cmp, s);
    svg_pack(s);
}

/* Labels and box sizes: a character is taken as 0.6 of the font size wide. */
static int svg_boxes(svg_t *s, const char *ou)
{
    double max_flat = hs_graph_max_flat(s->r, s->g);
    for (size_t i = 0; i < s->n; i++) {
        const hs_rnode_t *nd = &s->r->nodes[s->g->nodes[i]];
        size_t len = 0;
        FILE *m = open_memstream(&s->label[i], &len);
        if (!m)
            return -ENOMEM;
        hs_graph_node_label(s->r, nd, ou, false, m);
        if (fclose(m) != 0)
            return -ENOMEM;
        s->font[i] = hs_graph_font_size(nd->flat, max_flat);
        size_t lines = 1, longest = 0, cur = 0;
        for (const char *p = s->label[i]; *p; p++) {
            if (*p == '\n') {
                lines++;
                cur = 0;
            } else if (((unsigned char)*p & 0xc0) != 0x80 && ++cur > longest) {
                longest = cur;
            }
        }
        s->w[i] = (double)longest * s->font[i] * 0.6 + 16;
        s->h[i] = (double)lines * s->font[i] * 1.2 + 10;
    }
    return 0;
}

/* Lines of text (separated by '\n') from (x, y) down, anchored as given. */
static void svg_lines(const char *text, double x, double y, int font, const char *anchor, FILE *f)
{
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"%d\" text-anchor=\"%s\">", x, y, font,
            anchor);
    for (const char *p = text; *p;) {
        size_t n = strcspn(p, "\n");
        fprintf(f, "<tspan x=\"%.1f\" dy=\"%s\">", x, p == text ? "0" : "1.2em");
        hs_report_xml_escape(f, p, n);
        fputs("</tspan>", f);
        p += n + (p[n] == '\n');
    }
    fputs("</text>\n", f);
}

static void svg_node(const svg_t *s, size_t i, const hs_graph_opts_t *o, const char *ou, FILE *f)
{
    const hs_rnode_t *nd = &s->r->nodes[s->g->nodes[i]];
    char fg[16], bg[16], cum[64];
    const char *cls = hs_graph_node_colors(s->r, nd, o, fg, bg, sizeof(fg));
    hs_report_label(cum, sizeof(cum), nd->cum, s->r->sample_unit, ou);
    double y = s->layer_y[s->layer[i]], x = s->x[i] - s->w[i] / 2;
    fprintf(f, "<g id=\"node%zu\" class=\"node%s%s\" data-name=\"", i + 1, cls ? " " : "",
            cls ? cls : "");
    hs_report_xml_escape(f, nd->name, strlen(nd->name));
    fputs("\"><title>", f);
    hs_report_xml_escape(f, nd->name, strlen(nd->name));
    fprintf(f,
            " (%s)</title>\n<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
            "fill=\"%s\" stroke=\"%s\"/>\n",
            cum, x, y, s->w[i], s->h[i], bg, fg);
    svg_lines(s->label[i], s->x[i], y + 5 + s->font[i], s->font[i], "middle", f);
    fputs("</g>\n", f);
}

/* Where edge k meets node i's top (in) or bottom (out): the node's edges on that side
 * spread over its width in the order of their other ends, so they neither cross there
 * nor share a label's place. */
static double svg_port(const svg_t *s, size_t k, uint32_t i, bool in)
{
    const hs_redge_t *e = s->g->edges;
    size_t rank = 0, cnt = 0;
    uint32_t mine = s->pos[(in ? e[k].from : e[k].to) - 1];
    for (size_t j = 0; j < s->g->nedges; j++) {
        if (s->pos[(in ? e[j].to : e[j].from) - 1] != i)
            continue;
        uint32_t other = s->pos[(in ? e[j].from : e[j].to) - 1];
        cnt++;
        if (s->x[other] < s->x[mine] || (s->x[other] == s->x[mine] && j < k))
            rank++;
    }
    return s->x[i] - s->w[i] / 2 + s->w[i] * (double)(rank + 1) / (double)(cnt + 1);
}

static void svg_edge(const svg_t *s, size_t k, const char *ou, FILE *f)
{
    const hs_redge_t *e = &s->g->edges[k];
    uint32_t a = s->pos[e->from - 1], b = s->pos[e->to - 1];
    char w[64], col[16];
    int weight, width;
    hs_graph_edge_style(s->r, e, &weight, &width, col, sizeof(col));
    hs_report_label(w, sizeof(w), e->weight, s->r->sample_unit, ou);
    double x1 = svg_port(s, k, a, false), y1 = s->layer_y[s->layer[a]] + s->h[a];
    double x2 = svg_port(s, k, b, true), y2 = s->layer_y[s->layer[b]];
    double bend = y2 > y1 ? (y2 - y1) / 2 : SVG_GAP_Y;
    fprintf(f, "<g id=\"edge%zu\" class=\"edge\"><title>", k + 1);
    hs_report_xml_escape(f, s->r->nodes[e->from - 1].name, strlen(s->r->nodes[e->from - 1].name));
    fputs(e->residual ? " ... " : " -&gt; ", f);
    hs_report_xml_escape(f, s->r->nodes[e->to - 1].name, strlen(s->r->nodes[e->to - 1].name));
    fprintf(f,
            " (%s)</title>\n<path d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" "
            "stroke=\"%s\" stroke-width=\"%d\"%s marker-end=\"url(#hs-arrow)\"/>\n",
            w, x1, y1, x1, y1 + bend, x2, y2 - bend, x2, y2 - 2, col, width,
            e->residual ? " stroke-dasharray=\"2,3\"" : "");
    /* by the callee's end, where the edges fanning out of one caller are apart */
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\">", x2 + 4, y2 - 8);
    hs_report_xml_escape(f, w, strlen(w));
    fprintf(f, "%s</text></g>\n", e->inl ? " (inline)" : "");
}

/* Places the layers under a legend of legend_lines lines. */
static void svg_place(svg_t *s, size_t legend_lines)
{
    s->top = SVG_MARGIN + (double)legend_lines * 16 * 1.2 + 16 + SVG_GAP_Y / 2.0;
    for (size_t i = 0; i < s->n; i++)
        if (s->h[i] > s->layer_h[s->layer[i]])
            s->layer_h[s->layer[i]] = s->h[i];
    double y = s->top;
    for (int l = 0; l < s->nlayers; l++) {
        s->layer_y[l] = y;
        y += s->layer_h[l] + SVG_GAP_Y;
    }
}

static int svg_draw(svg_t *s, const hs_graph_opts_t *o, const char *ou, FILE *f)
{
    char *legend = hs_graph_legend(s->r, s->g, o, ou);
    if (!legend)
        return -ENOMEM;
    size_t lines = 0, longest = 0, cur = 0;
    for (const char *p = legend; *p; p++) {
        if (*p == '\n') {
            lines++;
            cur = 0;
        } else if (++cur > longest) {
            longest = cur;
        }
    }
    svg_place(s, lines);
    double lw = (double)longest * 16 * 0.55 + 20;
    double width = (s->width > lw ? s->width : lw) + 2 * SVG_MARGIN;
    double height = s->nlayers ? s->layer_y[s->nlayers - 1] + s->layer_h[s->nlayers - 1] : s->top;
    height += SVG_MARGIN;
    fprintf(f,
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\" font-family=\"Times,serif\">\n"
            "<defs><marker id=\"hs-arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" "
            "markerWidth=\"9\" markerHeight=\"9\" markerUnits=\"userSpaceOnUse\" "
            "orient=\"auto\"><path d=\"M0,0L10,5L0,10z\" "
            "fill=\"#555\"/></marker></defs>\n<g id=\"graph0\" class=\"graph\" "
            "transform=\"translate(%d,0)\">\n<rect x=\"%d\" y=\"0\" width=\"%.0f\" "
            "height=\"%.0f\" fill=\"white\"/>\n<g class=\"legend\"><rect x=\"0\" y=\"%d\" "
            "width=\"%.1f\" height=\"%.1f\" fill=\"#f8f8f8\" stroke=\"black\"/>\n",
            width, height, width, height, SVG_MARGIN, -SVG_MARGIN, width, height, SVG_MARGIN, lw,
            (double)lines * 16 * 1.2 + 12);
    svg_lines(legend, 8, SVG_MARGIN + 20, 16, "start", f);
    fputs("</g>\n", f);
    free(legend);
    for (size_t k = 0; k < s->g->nedges; k++)
        svg_edge(s, k, ou, f);
    for (size_t i = 0; i < s->n; i++)
        svg_node(s, i, o, ou, f);
    fputs("</g>\n</svg>\n", f);
    return 0;
}

int hs_graph_write_svg(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o, FILE *f)
{
    svg_t s;
    memset(&s, 0, sizeof(s));
    s.r = r;
    s.g = g;
    s.n = g->nnodes;
    const char *ou = hs_report_out_unit(r, o->unit ? o->unit : "minimum", g->nodes, g->nnodes);
    int rc = svg_alloc(&s);
    if (rc == 0)
        rc = svg_boxes(&s, ou);
    if (rc == 0) {
        for (size_t i = 0; i < s.n; i++) {
            s.pos[g->nodes[i]] = (uint32_t)i;
            s.ord[i] = (uint32_t)i;
        }
        svg_layers(&s);
        for (size_t i = 0; i < s.n; i++)
            s.key[i] = (double)i;
        qsort_r(s.ord, s.n, sizeof(*s.ord), svg_ord_cmp, &s);
        svg_pack(&s);
        for (int k = 0; k < SVG_SWEEPS; k++)
            svg_sweep(&s, k % 2 == 0);
        rc = svg_draw(&s, o, ou, f);
    }
    svg_free(&s);
    return rc;
}

/*
 * The call graph of a report (report.h), trimmed and written as `go tool pprof -dot` does:
 * nodes dropped under the node fraction, the rest ranked by pprof's entropy score (a node
 * that only passes its callers' weight on to one callee ranks low) and cut to the node
 * count, edges under the edge fraction dropped, and residual edges (drawn over dropped
 * nodes) removed where another path joins the same nodes. The DOT text follows pprof's
 * dotgraph: legend, labels, font sizes, edge weights and widths, colours. With a diff
 * base the colours come from noise.c's verdicts instead of the size of the change.
 *
 * Reads a built report and owns only the arrays of the hs_graph_t it returns. Never runs
 * Graphviz: laying the graph out is the caller's business (src/cli/verbs/graph.c).
 */
#define _GNU_SOURCE /* qsort_r, open_memstream */
#include "report.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int64_t dot_abs(int64_t v)
{
    return v < 0 ? -v : v;
}

void hs_graph_opts_default(hs_graph_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->node_fraction = 0.005;
    o->edge_fraction = 0.001;
    o->node_count = 80;
}

void hs_graph_free(hs_graph_t *g)
{
    free(g->nodes);
    free(g->edges);
    memset(g, 0, sizeof(*g));
}

/* ---- ranking ------------------------------------------------------------------------ */

typedef struct {
    const hs_report_t *r;
    const int64_t *score; /* by report node index */
} dot_rank_t;

/* pprof's EntropyOrder: |score|, then name, then |flat|, then the NodeInfo text. */
static int dot_rank_cmp(const void *a, const void *b, void *arg)
{
    const dot_rank_t *c = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int64_t sx = dot_abs(c->score[x]), sy = dot_abs(c->score[y]);
    if (sx != sy)
        return sx > sy ? -1 : 1;
    const hs_rnode_t *l = &c->r->nodes[x], *rr = &c->r->nodes[y];
    int k = strcmp(l->name, rr->name);
    if (k)
        return k;
    if (dot_abs(l->flat) != dot_abs(rr->flat))
        return dot_abs(l->flat) > dot_abs(rr->flat) ? -1 : 1;
    return hs_report_node_info_cmp(l, rr);
}

/* Per node: the sum of its positive in and out weights, then the entropy of each side. */
typedef struct {
    int64_t in_total, out_total;
    double in_h, out_h;
    bool has_in, has_out;
} dot_ent_t;

static double dot_h(int64_t w, int64_t total)
{
    if (total == 0 || w == 0)
        return 0;
    double frac = (double)dot_abs(w) / (double)total;
    return -frac * log2(frac);
}

/* entropyScore of every kept node into score[] (by report node index): a node with no
 * callers or no callees scores 1 on that side, else the entropy of its edges' weights
 * (its own flat value counts as one more outgoing share); times cum, plus flat. */
/* int64(v) + flat as Go computes it on amd64 (pprof's score): a NaN or out-of-range v
 * converts to the minimum int64, and the sum wraps. In C both are undefined; these are
 * Go's results, so that the ranking matches pprof's. */
static int64_t dot_go_score(double v, int64_t flat)
{
    int64_t iv =
        v == v && v > -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN;
    return (int64_t)((uint64_t)iv + (uint64_t)flat);
}

static int dot_scores(const hs_report_t *r, const hs_redge_t *e, size_t ne, int64_t *score)
{
    dot_ent_t *t = calloc(r->nnodes ? r->nnodes : 1, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t i = 0; i < r->nnodes; i++)
        t[i].out_total = r->nodes[i].flat;
    for (size_t k = 0; k < ne; k++) {
        dot_ent_t *from = &t[e[k].from - 1], *to = &t[e[k].to - 1];
        from->has_out = to->has_in = true;
        if (e[k].weight > 0) {
            from->out_total += e[k].weight;
            to->in_total += e[k].weight;
        }
    }
    for (size_t k = 0; k < ne; k++) {
        t[e[k].from - 1].out_h += dot_h(e[k].weight, t[e[k].from - 1].out_total);
        t[e[k].to - 1].in_h += dot_h(e[k].weight, t[e[k].to - 1].in_total);
    }
    for (size_t i = 0; i < r->nnodes; i++) {
        const hs_rnode_t *n = &r->nodes[i];
        double s = t[i].has_in ? t[i].in_h : 1;
        if (!t[i].has_out)
            s += 1;
        else
            s += t[i].out_h + (n->flat > 0 ? dot_h(n->flat, t[i].out_total) : 0);
        score[i] = dot_go_score(s * (double)n->cum, n->flat);
    }
    free(t);
    return 0;
}

/* The edges between the kept nodes, and the kept nodes in nodes[0..n) ordered by entropy
 * score (pprof's SortNodes in visual mode). */
static int dot_rank(hs_report_t *r, uint32_t *nodes, size_t n, hs_redge_t **e, size_t *ne)
{
    free(*e);
    *e = NULL;
    long k = hs_report_edges(r, true, e);
    if (k < 0)
        return (int)k;
    *ne = (size_t)k;
    int64_t *score = calloc(r->nnodes ? r->nnodes : 1, sizeof(*score));
    if (!score || dot_scores(r, *e, *ne, score)) {
        free(score);
        return -ENOMEM;
    }
    dot_rank_t c = {r, score};
    qsort_r(nodes, n, sizeof(*nodes), dot_rank_cmp, &c);
    free(score);
    return 0;
}

/* Drops the edges lighter than cutoff; returns how many went. */
static size_t dot_trim_edges(hs_redge_t *e, size_t *ne, int64_t cutoff)
{
    size_t k = 0, n = *ne;
    for (size_t i = 0; i < n; i++)
        if (dot_abs(e[i].weight) >= cutoff)
            e[k++] = e[i];
    *ne = k;
    return n - k;
}

/* ---- redundant residual edges ------------------------------------------------------- */

typedef struct {
    const hs_redge_t *e;
    size_t ne;
    bool *gone;      /* per edge */
    uint32_t *queue; /* report node indices */
    bool *seen;      /* per report node */
    size_t nnodes;
} dot_reach_t;

/* Whether edge x's source reaches its destination by another path (isRedundantEdge):
 * a walk backwards from the destination over the remaining edges. */
static bool dot_redundant(dot_reach_t *c, size_t x)
{
    uint32_t src = c->e[x].from - 1, dst = c->e[x].to - 1;
    memset(c->seen, 0, c->nnodes * sizeof(*c->seen));
    size_t head = 0, tail = 0;
    c->queue[tail++] = dst;
    c->seen[dst] = true;
    while (head < tail) {
        uint32_t n = c->queue[head++];
        for (size_t k = 0; k < c->ne; k++) {
            if (k == x || c->gone[k] || c->e[k].to - 1 != n || c->seen[c->e[k].from - 1])
                continue;
            if (c->e[k].from - 1 == src)
                return true;
            c->seen[c->e[k].from - 1] = true;
            c->queue[tail++] = c->e[k].from - 1;
        }
    }
    return false;
}

/* pprof's RemoveRedundantEdges: from the last node up, its incoming edges lightest first,
 * while they are residual. e is in pprof's edge order, so a node's incoming edges are too. */
static int dot_remove_redundant(const hs_report_t *r, const uint32_t *nodes, size_t n,
                                hs_redge_t *e, size_t *ne)
{
    dot_reach_t c = {e,
                     *ne,
                     calloc(*ne + 1, sizeof(bool)),
                     malloc((r->nnodes + 1) * 4),
                     calloc(r->nnodes + 1, sizeof(bool)),
                     r->nnodes};
    int rc = -ENOMEM;
    if (!c.gone || !c.queue || !c.seen)
        goto out;
    for (size_t i = n; i-- > 0;) {
        for (size_t k = *ne; k-- > 0;) {
            if (c.gone[k] || e[k].to - 1 != nodes[i])
                continue;
            if (!e[k].residual)
                break;
            if (dot_redundant(&c, k))
                c.gone[k] = true;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < *ne; i++)
        if (!c.gone[i])
            e[k++] = e[i];
    *ne = k;
    rc = 0;
out:
    free(c.gone);
    free(c.queue);
    free(c.seen);
    return rc;
}

/* ---- the trimmed graph (pprof's newTrimmedGraph, without its call-tree mode) --------- */

int hs_graph_build(hs_report_t *r, const hs_graph_opts_t *o, hs_graph_t *g)
{
    memset(g, 0, sizeof(*g));
    int64_t flat_total = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        flat_total += r->nodes[i].flat;
    int64_t edge_cutoff = dot_abs((int64_t)((double)flat_total * o->edge_fraction));
    size_t n, orig, dropped;
    uint32_t *nodes = hs_report_select(r, false, o->node_fraction, 0, &n, &orig, &dropped);
    if (!nodes)
        return -ENOMEM;
    g->nodes = nodes;
    g->dropped_nodes = dropped;
    g->orig = n;
    int rc = dot_rank(r, nodes, n, &g->edges, &g->nedges);
    if (rc)
        goto fail;
    if (o->node_count > 0) {
        /* pprof trims the edges here already: the final count below then misses them
         * unless the graph is rebuilt for the node count. */
        dot_trim_edges(g->edges, &g->nedges, edge_cutoff);
        if ((size_t)o->node_count < n) {
            for (size_t i = (size_t)o->node_count; i < n; i++)
                r->nodes[nodes[i]].kept = false;
            n = (size_t)o->node_count;
            if ((rc = dot_rank(r, nodes, n, &g->edges, &g->nedges)))
                goto fail;
        }
    }
    g->nnodes = n;
    g->dropped_edges = dot_trim_edges(g->edges, &g->nedges, edge_cutoff);
    hs_report_sort_edges(r, g->edges, g->nedges);
    if ((rc = dot_remove_redundant(r, nodes, n, g->edges, &g->nedges)))
        goto fail;
    return 0;
fail:
    hs_graph_free(g);
    return rc;
}

/* ---- DOT ------------------------------------------------------------------------------ */

/* pprof's escapeForDot: backslash and quote escaped, a newline becomes a left-justified
 * line break. */
static void dot_escaped(const char *s, FILE *f)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\l", f);
        else
            fputc(*s, f);
    }
}

/* pprof's dotColor: score in [-1, 1], red for positive, green for negative, grey near 0;
 * light when background. */
static void dot_color(char *out, size_t len, double score, bool background)
{
    double sat = background ? 0.1 : 1.0, val = background ? 0.93 : 0.7;
    if (isnan(score))
        score = 0;
    score = fmax(-1.0, fmin(1.0, score));
    if (fabs(score) < 0.2)
        sat *= fabs(score) / 0.2;
    if (score > 0)
        score = pow(score, 0.3);
    else if (score < 0)
        score = -pow(-score, 0.3);
    double red = val, green = val;
    if (score < 0)
        red = val * (1 + sat * score);
    else
        green = val * (1 - sat * score);
    double blue = val * (1 - sat);
    snprintf(out, len, "#%02x%02x%02x", (unsigned)(uint8_t)(red * 255.0),
             (unsigned)(uint8_t)(green * 255.0), (unsigned)(uint8_t)(blue * 255.0));
}

/* The prefix pprof's ShortenFunctionName takes off Go package paths ("a/b/c.F" -> "c.F"):
 * as many leading "segment/" as there are, segments of letters, digits, '_', '-', '.'. */
static const char *dot_short_name(const char *f)
{
    static const char anon[] = "(anonymous namespace)::";
    if (strncmp(f, anon, sizeof(anon) - 1) == 0)
        f += sizeof(anon) - 1;
    const char *p = f, *cut = NULL;
    for (;;) {
        size_t k = strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                             "0123456789_-.");
        if (k == 0 || p[k] != '/' || p[k + 1] == '\0')
            break;
        p += k + 1;
        cut = p;
    }
    return cut ? cut : f;
}

/* multilinePrintableName: the name split at "::" and '.', then file:line or file or
 * [object], each part ended by nl; dot: the name escaped for DOT first. */
static void dot_multiline_name(const hs_rnode_t *n, bool dot, FILE *f)
{
    const char *nl = dot ? "\\n" : "\n";
    if (n->address)
        fprintf(f, "%016llx%s", (unsigned long long)n->address, nl);
    if (*n->fname) {
        char *esc = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&esc, &len);
        if (m) {
            if (dot)
                dot_escaped(dot_short_name(n->fname), m);
            else
                fputs(dot_short_name(n->fname), m);
            fclose(m);
        }
        for (const char *s = esc ? esc : ""; *s; s++) {
            if (s[0] == ':' && s[1] == ':') {
                fputs(nl, f);
                s++;
            } else if (strncmp(s, "[...]", 5) == 0) {
                fputs("[\xe2\x80\xa6]", f);
                s += 4;
            } else if (*s == '.') {
                fputs(nl, f);
            } else {
                fputc(*s, f);
            }
        }
        free(esc);
        fputs(nl, f);
    }
    const char *base = strrchr(n->file, '/');
    base = base && base[1] ? base + 1 : n->file;
    if (n->lineno)
        fprintf(f, "%s:%lld%s", base, (long long)n->lineno, nl);
    else if (*n->file)
        fprintf(f, "%s%s", base, nl);
    else if (*n->fname)
        ;
    else if (n->obj && *n->obj) {
        const char *ob = strrchr(n->obj, '/');
        fprintf(f, "[%s]%s", ob && ob[1] ? ob + 1 : n->obj, nl);
    } else
        fprintf(f, "<unknown>%s", nl);
}

void hs_graph_node_label(const hs_report_t *r, const hs_rnode_t *n, const char *ou, bool dot,
                         FILE *f)
{
    char v[64], pct[32];
    dot_multiline_name(n, dot, f);
    if (n->flat) {
        hs_report_label(v, sizeof(v), n->flat, r->sample_unit, ou);
        hs_report_percent(pct, sizeof(pct), n->flat, r->total);
        fprintf(f, "%s (%s)", v, pct + strspn(pct, " "));
    } else {
        fputc('0', f);
    }
    if (n->cum != n->flat) {
        fputs(n->flat ? (dot ? "\\n" : "\n") : " ", f);
        hs_report_label(v, sizeof(v), n->cum, r->sample_unit, ou);
        hs_report_percent(pct, sizeof(pct), n->cum, r->total);
        fprintf(f, "of %s (%s)", v, pct + strspn(pct, " "));
    }
}

int hs_graph_font_size(int64_t flat, double max_flat)
{
    double af = (double)dot_abs(flat);
    if (max_flat != 0 && flat != 0 && af <= max_flat)
        return 8 + (int)ceil(16.0 * sqrt(af / max_flat));
    return 8;
}

double hs_graph_max_flat(const hs_report_t *r, const hs_graph_t *g)
{
    double m = g->nnodes ? (double)dot_abs(r->nodes[g->nodes[0]].flat) : 0;
    for (size_t i = 0; i < g->nnodes; i++)
        if ((double)dot_abs(r->nodes[g->nodes[i]].flat) > m)
            m = (double)dot_abs(r->nodes[g->nodes[i]].flat);
    return m;
}

void hs_graph_edge_style(const hs_report_t *r, const hs_redge_t *e, int *weight, int *width,
                         char *color, size_t len)
{
    *weight = *width = 1;
    snprintf(color, len, "#b2b2b2");
    if (r->total == 0)
        return;
    int64_t a = dot_abs(e->weight * 100 / r->total), b = dot_abs(e->weight * 5 / r->total);
    *weight = 1 + (int)(a < 100 ? a : 100);
    *width = 1 + (int)(b < 5 ? b : 5);
    dot_color(color, len, (double)e->weight / (double)dot_abs(r->total), false);
}

/* The node's colours: pprof's from cum's share of the total; in a diff, grey unless its
 * cum changed beyond noise, and then at least as strong as a 20% change. */
const char *hs_graph_node_colors(const hs_report_t *r, const hs_rnode_t *n,
                                 const hs_graph_opts_t *o, char *fg, char *bg, size_t len)
{
    double score = (double)n->cum / (double)dot_abs(r->total);
    const char *cls = NULL;
    if (o->diff) {
        hs_verdict_t v = hs_report_row_verdict(r, n, true);
        cls = v == HS_GREW ? "grew" : v == HS_SHRANK ? "shrank" : "noise";
        if (v == HS_GREW)
            score = fmax(fabs(score), 0.2);
        else if (v == HS_SHRANK)
            score = -fmax(fabs(score), 0.2);
        else
            score = 0;
    }
    dot_color(fg, len, score, false);
    dot_color(bg, len, score, true);
    return cls;
}

static void dot_node(const hs_report_t *r, const hs_rnode_t *n, size_t id, double max_flat,
                     const char *ou, const hs_graph_opts_t *o, FILE *f)
{
    char cum[64], fg[16], bg[16];
    fprintf(f, "N%zu [label=\"", id);
    hs_graph_node_label(r, n, ou, true, f);
    hs_report_label(cum, sizeof(cum), n->cum, r->sample_unit, ou);
    const char *cls = hs_graph_node_colors(r, n, o, fg, bg, sizeof(fg));
    fprintf(f, "\" id=\"node%zu\" fontsize=%d shape=box tooltip=\"", id,
            hs_graph_font_size(n->flat, max_flat));
    dot_escaped(n->name, f);
    fprintf(f, " (%s)\" color=\"%s\" fillcolor=\"%s\"", cum, fg, bg);
    if (cls)
        fprintf(f, " class=\"%s\"", cls);
    fputs("]\n", f);
}

static void dot_edge(const hs_report_t *r, const hs_redge_t *e, const size_t *ids, const char *ou,
                     FILE *f)
{
    char w[64], col[16];
    int weight, width;
    hs_report_label(w, sizeof(w), e->weight, r->sample_unit, ou);
    fprintf(f, "N%zu -> N%zu [label=\" %s%s\"", ids[e->from - 1], ids[e->to - 1], w,
            e->inl ? "\\n (inline)" : "");
    if (r->total != 0) {
        hs_graph_edge_style(r, e, &weight, &width, col, sizeof(col));
        if (weight > 1)
            fprintf(f, " weight=%d", weight);
        if (width > 1)
            fprintf(f, " penwidth=%d", width);
        fprintf(f, " color=\"%s\"", col);
    }
    for (int t = 0; t < 2; t++) {
        fputs(t ? " labeltooltip=\"" : " tooltip=\"", f);
        dot_escaped(r->nodes[e->from - 1].name, f);
        fputs(e->residual ? " ... " : " -> ", f);
        dot_escaped(r->nodes[e->to - 1].name, f);
        fprintf(f, " (%s)\"", w);
    }
    if (e->residual)
        fputs(" style=\"dotted\"", f);
    fputs("]\n", f);
}

char *hs_graph_legend(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o,
                      const char *ou)
{
    char *text = NULL, a[64], b[64], pct[32];
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m)
        return NULL;
    hs_report_print_header(r, ou, m);
    if (o->filters)
        hs_report_print_filters(o->filters, m);
    int64_t flat_sum = 0;
    for (size_t i = 0; i < g->nnodes; i++)
        flat_sum += r->nodes[g->nodes[i]].flat;
    hs_report_label(a, sizeof(a), flat_sum, r->sample_unit, ou);
    hs_report_label(b, sizeof(b), r->total, r->sample_unit, ou);
    hs_report_percent(pct, sizeof(pct), flat_sum, r->total);
    fprintf(m, "Showing nodes accounting for %s, %s of %s total\n", a, pct + strspn(pct, " "), b);
    if (r->total != 0) {
        const char *what[2] = {"node", "edge"};
        size_t d[2] = {g->dropped_nodes, g->dropped_edges};
        double frac[2] = {o->node_fraction, o->edge_fraction};
        for (int i = 0; i < 2; i++) {
            if (!d[i])
                continue;
            hs_report_label(a, sizeof(a), dot_abs((int64_t)((double)r->total * frac[i])),
                            r->sample_unit, ou);
            fprintf(m, "Dropped %zu %s%s (%s <= %s)\n", d[i], what[i], d[i] > 1 ? "s" : "",
                    i ? "freq" : "cum", a);
        }
        if (g->nnodes > 0 && g->nnodes < g->orig)
            fprintf(m, "Showing top %zu nodes out of %zu\n", g->nnodes, g->orig);
    }
    fputs("\nSee https://git.io/JfYMW for how to read the graph\n", m);
    if (fclose(m) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* The legend as pprof's cluster_L: its lines escaped, each ended with "\l". */
static int dot_legend(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o,
                      const char *ou, FILE *f)
{
    char *text = hs_graph_legend(r, g, o, ou);
    if (!text)
        return -ENOMEM;
    char *first = strdup(text);
    if (first)
        first[strcspn(first, "\n")] = '\0';
    fputs("subgraph cluster_L { \"", f);
    dot_escaped(first ? first : "", f);
    fputs("\" [shape=box fontsize=16 label=\"", f);
    dot_escaped(text, f);
    fputc('"', f);
    free(first);
    free(text);
    return 0;
}

int hs_graph_write_dot(const hs_report_t *r, const hs_graph_t *g, const hs_graph_opts_t *o, FILE *f)
{
    const hs_profile_t *p = r->first;
    const char *title = "",
               *ou = hs_report_out_unit(r, o->unit ? o->unit : "minimum", g->nodes, g->nnodes);
    if (p && p->nmappings)
        title = hs_profile_get_str(p, p->mappings[0].filename);
    const char *slash = strrchr(title, '/');
    title = slash && slash[1] ? slash + 1 : title;
    fprintf(f, "digraph \"%s\" {\nnode [style=filled fillcolor=\"#f8f8f8\"]\n",
            *title ? title : "unnamed");
    if (dot_legend(r, g, o, ou, f))
        return -ENOMEM;
    if (*title)
        fprintf(f, " tooltip=\"%s\"", title);
    fputs("] }\n", f);
    size_t *ids = calloc(r->nnodes ? r->nnodes : 1, sizeof(*ids));
    if (!ids)
        return -ENOMEM;
    double max_flat = hs_graph_max_flat(r, g);
    for (size_t i = 0; i < g->nnodes; i++)
        ids[g->nodes[i]] = i + 1;
    for (size_t i = 0; i < g->nnodes; i++)
        dot_node(r, &r->nodes[g->nodes[i]], i + 1, max_flat, ou, o, f);
    for (size_t i = 0; i < g->nedges; i++)
        dot_edge(r, &g->edges[i], ids, ou, f);
    fputs("}\n", f);
    free(ids);
    return 0;
}

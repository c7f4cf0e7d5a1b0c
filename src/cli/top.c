/*
 * `heapsift top`: flat and cumulative use by function, byte-identical to `go tool pprof
 * -top` from the "Showing nodes" line on. It reproduces pprof's pipeline for the text
 * report: aggregation to function granularity (a node per function name; unnamed
 * functions and unsymbolized locations become "[binary]" or "<unknown>"), cum counted
 * once per sample, the 0.005 node fraction, sorting, the "minimum" output unit, the
 * measurement scaling and the (inline) markers. Owns nothing but its own allocations;
 * reads the profile through pprof.c. Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#define _GNU_SOURCE /* qsort_r, tm_zone */
#include "cli.h"
#include "pprof.h"
#include "readers.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- pprof's measurement package ------------------------------------------------------ */

typedef struct {
    const char *name;
    const char *aliases[4];
    double factor;
} top_unit_t;

typedef struct {
    top_unit_t dflt;
    top_unit_t units[10];
} top_unit_type_t;

static const top_unit_type_t top_unit_types[] = {
    {{"B", {"b", "byte"}, 1},
     {{"B", {"b", "byte"}, 1},
      {"kB", {"kb", "kbyte", "kilobyte"}, 1024.0},
      {"MB", {"mb", "mbyte", "megabyte"}, 1048576.0},
      {"GB", {"gb", "gbyte", "gigabyte"}, 1073741824.0},
      {"TB", {"tb", "tbyte", "terabyte"}, 1099511627776.0},
      {"PB", {"pb", "pbyte", "petabyte"}, 1125899906842624.0}}},
    {{"s", {NULL}, 1e9},
     {{"ns", {"ns", "nanosecond"}, 1},
      {"us", {"\xce\xbcs", "us", "microsecond"}, 1e3},
      {"ms", {"ms", "millisecond"}, 1e6},
      {"s", {"s", "sec", "second"}, 1e9},
      {"hrs", {"hour", "hr"}, 3600e9}}},
    {{"GCU", {NULL}, 1},
     {{"n*GCU", {"nanogcu"}, 1e-9},
      {"u*GCU", {"microgcu"}, 1e-6},
      {"m*GCU", {"milligcu"}, 1e-3},
      {"GCU", {"gcu"}, 1},
      {"k*GCU", {"kilogcu"}, 1e3},
      {"M*GCU", {"megagcu"}, 1e6},
      {"G*GCU", {"gigagcu"}, 1e9},
      {"T*GCU", {"teragcu"}, 1e12},
      {"P*GCU", {"petagcu"}, 1e15}}},
};

/* The unit of ut named by unit (lower-cased, one plural "s" dropped), or NULL. */
static const top_unit_t *top_sniff_unit(const top_unit_type_t *ut, const char *unit)
{
    char low[64];
    size_t n = strlen(unit);
    if (n >= sizeof(low))
        return NULL;
    for (size_t i = 0; i <= n; i++)
        low[i] = (unit[i] >= 'A' && unit[i] <= 'Z') ? (char)(unit[i] + 32) : unit[i];
    if (n > 2 && low[n - 1] == 's')
        low[n - 1] = '\0';
    for (size_t i = 0; i < 10 && ut->units[i].name; i++)
        for (size_t j = 0; j < 4 && ut->units[i].aliases[j]; j++)
            if (strcmp(ut->units[i].aliases[j], low) == 0)
                return &ut->units[i];
    return NULL;
}

static bool top_auto_scale(const top_unit_type_t *ut, double v, double *out, const char **unit)
{
    double f = 0;
    for (size_t i = 0; i < 10 && ut->units[i].name; i++) {
        if (ut->units[i].factor >= f && v / ut->units[i].factor >= 1.0) {
            f = ut->units[i].factor;
            *unit = ut->units[i].name;
        }
    }
    if (f == 0)
        return false;
    *out = v / f;
    return true;
}

static bool top_is_auto(const char *to)
{
    return strcmp(to, "minimum") == 0 || strcmp(to, "auto") == 0;
}

/* measurement.Scale: value in from-units expressed in to-units ("minimum" = auto). */
static double top_scale(int64_t value, const char *from, const char *to, const char **unit)
{
    if (value < 0 && value != INT64_MIN) {
        double v = top_scale(-value, from, to, unit);
        return -v;
    }
    for (size_t t = 0; t < sizeof(top_unit_types) / sizeof(top_unit_types[0]); t++) {
        const top_unit_type_t *ut = &top_unit_types[t];
        const top_unit_t *fu = top_sniff_unit(ut, from);
        if (!fu)
            continue;
        double v = (double)value * fu->factor, out;
        if (top_is_auto(to) && top_auto_scale(ut, v, &out, unit))
            return out;
        const top_unit_t *tu = top_is_auto(to) ? NULL : top_sniff_unit(ut, to);
        if (!tu)
            tu = &ut->dflt;
        *unit = tu->name;
        return v / tu->factor;
    }
    static const char *unitless[] = {"count", "sample", "unit", "minimum", "auto"};
    *unit = to;
    for (size_t i = 0; i < 5; i++)
        if (strcmp(to, unitless[i]) == 0)
            *unit = "";
    return (double)value;
}

/* measurement.ScaledLabel: "%.2f" without a trailing ".00", plus the unit. */
static void top_label(char *out, size_t len, int64_t value, const char *from, const char *to)
{
    const char *unit = "";
    double v = top_scale(value, from, to, &unit);
    char num[64];
    snprintf(num, sizeof(num), "%.2f", v);
    size_t n = strlen(num);
    if (n > 3 && strcmp(num + n - 3, ".00") == 0)
        num[n - 3] = '\0';
    if (strcmp(num, "0") == 0 || strcmp(num, "-0") == 0)
        snprintf(out, len, "0");
    else
        snprintf(out, len, "%s%s", num, unit);
}

/* measurement.Percentage, padded to width 6 like pprof's columns. */
static void top_percent(char *out, size_t len, int64_t value, int64_t total)
{
    double r = 0;
    if (total != 0) {
        r = (double)value / (double)total * 100;
        if (r < 0)
            r = -r;
    }
    if (r >= 99.95 && r <= 100.05)
        snprintf(out, len, "  100%%");
    else if (r >= 1.0)
        snprintf(out, len, "%5.2f%%", r);
    else
        snprintf(out, len, "%5.2g%%", r);
}

/* ---- the function-granularity graph ---------------------------------------------------- */

typedef struct {
    char *name;        /* printable name */
    const char *fname; /* function name, "" for unnamed nodes */
    const char *obj;   /* mapping file, only for unnamed nodes */
    int64_t start_line;
    int64_t flat, cum;
    size_t stamp; /* last sample that added to cum, + 1 */
    bool kept, shown, inline_in, noinline_in;
} top_node_t;

typedef struct {
    uint64_t id;
    size_t idx;
} top_id_t;

/* id -> array index, O(1) for dense ids, else binary search over a sorted copy. */
typedef struct {
    top_id_t *sorted; /* NULL when dense */
    size_t n;
} top_idmap_t;

typedef struct {
    uint32_t from, to; /* node index + 1; 0 = empty slot */
    int64_t weight;
    size_t stamp;
    bool inl;
} top_edge_t;

typedef struct {
    const hs_profile_t *p;
    int sidx;                /* sample type index */
    const char *sample_unit; /* unit of the sample type */
    top_node_t *nodes;
    size_t nnodes, nodes_cap;
    uint32_t *node_slots; /* hash of node keys: node index + 1 */
    size_t slots_cap;
    uint32_t *loc_nodes; /* per location: nodes of lines[0..n) (or one node) */
    size_t *loc_off, *loc_cnt;
    top_idmap_t locmap;
    bool any_inline;
    int64_t total; /* sum of |value| over samples */
} top_graph_t;

static int top_cmp_id(const void *a, const void *b)
{
    uint64_t x = ((const top_id_t *)a)->id, y = ((const top_id_t *)b)->id;
    return x < y ? -1 : x > y;
}

static int top_idmap_init(top_idmap_t *m, const void *arr, size_t n, size_t stride)
{
    m->n = n;
    m->sorted = NULL;
    bool dense = true;
    for (size_t i = 0; i < n && dense; i++)
        dense = *(const uint64_t *)((const char *)arr + i * stride) == i + 1;
    if (dense)
        return 0;
    m->sorted = malloc((n ? n : 1) * sizeof(top_id_t));
    if (!m->sorted)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        m->sorted[i].id = *(const uint64_t *)((const char *)arr + i * stride);
        m->sorted[i].idx = i;
    }
    qsort(m->sorted, n, sizeof(top_id_t), top_cmp_id);
    return 0;
}

/* Index of id, or SIZE_MAX. */
static size_t top_idmap_get(const top_idmap_t *m, uint64_t id)
{
    if (!m->sorted)
        return id >= 1 && id <= m->n ? (size_t)(id - 1) : SIZE_MAX;
    top_id_t key = {id, 0};
    const top_id_t *f = bsearch(&key, m->sorted, m->n, sizeof(key), top_cmp_id);
    return f ? f->idx : SIZE_MAX;
}

static uint64_t top_hash_key(const char *fname, const char *obj, int64_t start_line)
{
    uint64_t h = 1469598103934665603ull;
    for (const char *s = fname; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    if (*fname)
        return h;
    for (const char *s = obj; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return (h ^ (uint64_t)start_line) * 1099511628211ull;
}

static bool top_node_is(const top_node_t *n, const char *fname, const char *obj, int64_t sl)
{
    if (strcmp(n->fname, fname) != 0)
        return false;
    return *fname || (strcmp(n->obj, obj) == 0 && n->start_line == sl);
}

/* filepath.Base */
static void top_basename(char *out, size_t len, const char *path)
{
    size_t n = strlen(path);
    while (n > 1 && path[n - 1] == '/')
        n--;
    size_t b = n;
    while (b > 0 && path[b - 1] != '/')
        b--;
    if (n == 0)
        snprintf(out, len, ".");
    else
        snprintf(out, len, "%.*s", (int)(n - b ? n - b : 1), path + (n - b ? b : 0));
}

static int top_slots_grow(top_graph_t *g)
{
    size_t cap = g->slots_cap ? g->slots_cap * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < g->nnodes; i++) {
        const top_node_t *n = &g->nodes[i];
        size_t j = top_hash_key(n->fname, n->obj, n->start_line) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(g->node_slots);
    g->node_slots = s;
    g->slots_cap = cap;
    return 0;
}

static int top_new_node(top_graph_t *g, const char *fname, const char *obj, int64_t sl)
{
    if (g->nnodes == g->nodes_cap) {
        size_t cap = g->nodes_cap ? g->nodes_cap * 2 : 256;
        top_node_t *a = realloc(g->nodes, cap * sizeof(*a));
        if (!a)
            return -ENOMEM;
        g->nodes = a;
        g->nodes_cap = cap;
    }
    char base[4096];
    top_node_t *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof(*n));
    n->fname = fname;
    n->obj = *fname ? "" : obj;
    n->start_line = *fname ? 0 : sl;
    if (*fname) {
        n->name = strdup(fname);
    } else if (*obj) {
        top_basename(base, sizeof(base), obj);
        n->name = malloc(strlen(base) + 3);
        if (n->name)
            sprintf(n->name, "[%s]", base);
    } else {
        n->name = strdup("<unknown>");
    }
    if (!n->name)
        return -ENOMEM;
    g->nnodes++;
    return 0;
}

/* The node for (function name, or mapping file and start line when unnamed), created on
 * first use. Returns its index or -1 on ENOMEM. */
static int64_t top_node(top_graph_t *g, const char *fname, const char *obj, int64_t sl)
{
    if ((g->nnodes + 1) * 2 > g->slots_cap && top_slots_grow(g))
        return -1;
    size_t mask = g->slots_cap - 1;
    size_t j = top_hash_key(fname, obj, sl) & mask;
    for (; g->node_slots[j]; j = (j + 1) & mask)
        if (top_node_is(&g->nodes[g->node_slots[j] - 1], fname, obj, sl))
            return g->node_slots[j] - 1;
    if (top_new_node(g, fname, obj, sl))
        return -1;
    g->node_slots[j] = (uint32_t)g->nnodes;
    return (int64_t)g->nnodes - 1;
}

/* Maps every location to its nodes, one per line (pprof's CreateNodes). */
static int top_map_locations(top_graph_t *g, const top_idmap_t *funcs)
{
    const hs_profile_t *p = g->p;
    size_t total = 0;
    for (size_t i = 0; i < p->nlocations; i++)
        total += p->locations[i].nlines ? p->locations[i].nlines : 1;
    g->loc_nodes = malloc((total ? total : 1) * sizeof(uint32_t));
    g->loc_off = malloc((p->nlocations + 1) * sizeof(size_t));
    g->loc_cnt = malloc((p->nlocations + 1) * sizeof(size_t));
    if (!g->loc_nodes || !g->loc_off || !g->loc_cnt)
        return -ENOMEM;
    size_t k = 0;
    for (size_t i = 0; i < p->nlocations; i++) {
        const hs_location_t *l = &p->locations[i];
        const hs_mapping_t *m = hs_profile_mapping(p, l->mapping_id);
        const char *obj = m ? hs_profile_get_str(p, m->filename) : "";
        g->loc_off[i] = k;
        g->loc_cnt[i] = l->nlines ? l->nlines : 1;
        g->any_inline |= l->nlines > 1;
        for (size_t j = 0; j < g->loc_cnt[i]; j++) {
            const hs_function_t *f = NULL;
            if (l->nlines) {
                size_t fi = top_idmap_get(funcs, l->lines[j].function_id);
                f = fi == SIZE_MAX ? NULL : &p->functions[fi];
            }
            const char *fname = f ? hs_profile_get_str(p, f->name) : "";
            int64_t n = top_node(g, fname, obj, f ? f->start_line : 0);
            if (n < 0)
                return -ENOMEM;
            g->loc_nodes[k++] = (uint32_t)n;
        }
    }
    return 0;
}

static uint64_t top_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t top_mix_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return top_mix(h, 0xff);
}

/* Hash of a location's content the way pprof's Merge keys it (mapping by size, offset
 * and build id or file; address relative to the mapping; functions by content). */
static uint64_t top_loc_hash(const hs_profile_t *p, const hs_location_t *l)
{
    uint64_t h = top_mix(0, l->is_folded), addr = l->address;
    const hs_mapping_t *m = hs_profile_mapping(p, l->mapping_id);
    if (m) {
        const char *bid = hs_profile_get_str(p, m->build_id);
        uint64_t size = m->memory_limit - m->memory_start + 0xfff;
        h = top_mix(top_mix(h, size - size % 0x1000), m->file_offset);
        h = top_mix_str(h, *bid ? bid : hs_profile_get_str(p, m->filename));
        addr -= m->memory_start;
    }
    h = top_mix(h, addr);
    for (size_t i = 0; i < l->nlines; i++) {
        const hs_function_t *f = hs_profile_function(p, l->lines[i].function_id);
        if (f) {
            h = top_mix_str(top_mix_str(h, hs_profile_get_str(p, f->name)),
                            hs_profile_get_str(p, f->system_name));
            h = top_mix(top_mix_str(h, hs_profile_get_str(p, f->filename)), f->start_line);
        }
        h = top_mix(h, (uint64_t)l->lines[i].line);
    }
    return h;
}

static uint64_t top_sample_key(const top_graph_t *g, const hs_sample_t *s)
{
    const hs_profile_t *p = g->p;
    uint64_t h = 0, labels = 0;
    for (size_t i = 0; i < s->nlocs; i++) {
        size_t li = top_idmap_get(&g->locmap, s->location_ids[i]);
        h = top_mix(h, li == SIZE_MAX ? 0 : top_loc_hash(p, &p->locations[li]));
    }
    for (size_t i = 0; i < s->nlabels; i++) { /* a multiset: order does not matter */
        const hs_label_t *l = &s->labels[i];
        uint64_t lh = top_mix_str(0, hs_profile_get_str(p, l->key));
        lh = top_mix_str(lh, hs_profile_get_str(p, l->str));
        lh = top_mix(top_mix_str(lh, hs_profile_get_str(p, l->num_unit)), (uint64_t)l->num);
        labels += lh;
    }
    return top_mix(h, labels);
}

typedef struct {
    uint64_t key;
    int64_t sum;
    bool used;
} top_group_t;

/* pprof merges samples with equal stacks and labels before summing |value|: that only
 * changes the total when values of both signs meet, so it is done only then. */
static int top_total_merged(top_graph_t *g)
{
    const hs_profile_t *p = g->p;
    size_t cap = 16;
    while (cap < p->nsamples * 2)
        cap *= 2;
    top_group_t *t = calloc(cap, sizeof(*t));
    if (!t)
        return -ENOMEM;
    for (size_t si = 0; si < p->nsamples; si++) {
        uint64_t k = top_sample_key(g, &p->samples[si]);
        size_t j = k & (cap - 1);
        while (t[j].used && t[j].key != k)
            j = (j + 1) & (cap - 1);
        t[j].used = true;
        t[j].key = k;
        t[j].sum += p->samples[si].values[g->sidx];
    }
    g->total = 0;
    for (size_t j = 0; j < cap; j++)
        g->total += t[j].sum < 0 ? -t[j].sum : t[j].sum;
    free(t);
    return 0;
}

static size_t top_loc_index(const top_graph_t *g, uint64_t id)
{
    return top_idmap_get(&g->locmap, id);
}

/* Flat and cum per node (pprof's newGraph): cum once per sample per node, flat to the
 * leaf-most node. */
static void top_accumulate(top_graph_t *g)
{
    const hs_profile_t *p = g->p;
    for (size_t si = 0; si < p->nsamples; si++) {
        const hs_sample_t *s = &p->samples[si];
        int64_t w = s->values[g->sidx];
        g->total += w < 0 ? -w : w;
        if (w == 0)
            continue;
        int64_t leaf = -1;
        for (size_t i = s->nlocs; i-- > 0;) {
            size_t li = top_loc_index(g, s->location_ids[i]);
            if (li == SIZE_MAX)
                continue;
            for (size_t ni = g->loc_cnt[li]; ni-- > 0;) {
                top_node_t *n = &g->nodes[g->loc_nodes[g->loc_off[li] + ni]];
                if (n->stamp != si + 1) {
                    n->stamp = si + 1;
                    n->cum += w;
                }
                leaf = g->loc_nodes[g->loc_off[li] + ni];
            }
        }
        if (leaf >= 0)
            g->nodes[leaf].flat += w;
    }
}

typedef struct {
    top_edge_t *e;
    size_t cap, n;
} top_edges_t;

static top_edge_t *top_edge(top_edges_t *t, uint32_t from, uint32_t to)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        top_edge_t *a = calloc(cap, sizeof(*a));
        if (!a)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->e[i].from)
                continue;
            size_t j = ((uint64_t)t->e[i].from * 0x9e3779b97f4a7c15ull ^ t->e[i].to) & (cap - 1);
            while (a[j].from)
                j = (j + 1) & (cap - 1);
            a[j] = t->e[i];
        }
        free(t->e);
        t->e = a;
        t->cap = cap;
    }
    size_t j = ((uint64_t)from * 0x9e3779b97f4a7c15ull ^ to) & (t->cap - 1);
    for (; t->e[j].from; j = (j + 1) & (t->cap - 1))
        if (t->e[j].from == from && t->e[j].to == to)
            return &t->e[j];
    t->e[j].from = from;
    t->e[j].to = to;
    t->e[j].inl = true;
    t->n++;
    return &t->e[j];
}

/* Edges between shown nodes, for the "(inline)" markers: an edge is inline when every
 * sample reaches its callee as an inlined frame; edges under cutoff are ignored. */
static int top_inline_marks(top_graph_t *g, int64_t cutoff)
{
    const hs_profile_t *p = g->p;
    top_edges_t t = {NULL, 0, 0};
    for (size_t si = 0; si < p->nsamples; si++) {
        const hs_sample_t *s = &p->samples[si];
        int64_t w = s->values[g->sidx];
        int64_t parent = -1;
        for (size_t i = s->nlocs; w && i-- > 0;) {
            size_t li = top_loc_index(g, s->location_ids[i]);
            for (size_t ni = li == SIZE_MAX ? 0 : g->loc_cnt[li]; ni-- > 0;) {
                uint32_t n = g->loc_nodes[g->loc_off[li] + ni];
                if (!g->nodes[n].shown)
                    continue;
                if (parent >= 0 && n != parent) {
                    top_edge_t *e = top_edge(&t, (uint32_t)parent + 1, n + 1);
                    if (!e) {
                        free(t.e);
                        return -ENOMEM;
                    }
                    if (e->stamp != si + 1) {
                        e->stamp = si + 1;
                        e->weight += w;
                        e->inl &= ni != g->loc_cnt[li] - 1;
                    }
                }
                parent = n;
            }
        }
    }
    for (size_t i = 0; i < t.cap; i++) {
        const top_edge_t *e = &t.e[i];
        if (!e->from || (e->weight < 0 ? -e->weight : e->weight) < cutoff)
            continue;
        if (e->inl)
            g->nodes[e->to - 1].inline_in = true;
        else
            g->nodes[e->to - 1].noinline_in = true;
    }
    free(t.e);
    return 0;
}

/* ---- ordering, units, labels ------------------------------------------------------------ */

static int64_t top_abs(int64_t v)
{
    return v < 0 ? -v : v;
}

/* fmt.Sprint of pprof's NodeInfo after aggregation: the last tie-breaker. */
static void top_sprint(const top_node_t *n, char *out, size_t len)
{
    snprintf(out, len, "{%s  0  %" PRId64 " 0 %s}", n->fname, n->start_line, n->obj);
}

static int top_cmp(const void *a, const void *b, void *arg)
{
    const top_node_t *l = *(top_node_t *const *)a, *r = *(top_node_t *const *)b;
    bool cum = *(const bool *)arg;
    int64_t lk = cum ? top_abs(l->cum) : top_abs(l->flat);
    int64_t rk = cum ? top_abs(r->cum) : top_abs(r->flat);
    if (lk != rk)
        return lk > rk ? -1 : 1;
    int c = strcmp(l->name, r->name);
    if (c)
        return c;
    lk = cum ? top_abs(l->flat) : top_abs(l->cum);
    rk = cum ? top_abs(r->flat) : top_abs(r->cum);
    if (lk != rk)
        return lk > rk ? -1 : 1;
    char ls[512], rs[512];
    top_sprint(l, ls, sizeof(ls));
    top_sprint(r, rs, sizeof(rs));
    return strcmp(ls, rs);
}

/* pprof's selectOutputUnit for the "minimum" unit: the unit of the smallest non-zero
 * node value, moved up one unit when it is under 1% of the total. */
static const char *top_min_unit(top_node_t **shown, size_t n, int64_t total, const char *su)
{
    int64_t minv = 0, maxv = total;
    for (size_t i = 0; i < n; i++) {
        int64_t v = top_abs(shown[i]->flat);
        if (v == 0)
            v = top_abs(shown[i]->cum);
        if (v > 0 && (minv == 0 || v < minv))
            minv = v;
    }
    if (minv == 0)
        minv = maxv;
    const char *minu = "", *maxu = "", *unit;
    top_scale(minv, su, "minimum", &minu);
    top_scale(maxv, su, "minimum", &maxu);
    unit = minu;
    if (strcmp(minu, maxu) != 0 && minv * 100 < maxv)
        top_scale(100 * minv, su, "minimum", &unit);
    return *unit ? unit : su;
}

static void top_print_time(int64_t nanos)
{
    static const char *mon[] = {"Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
    time_t t = (time_t)(nanos / 1000000000);
    if (nanos % 1000000000 < 0)
        t--;
    struct tm tm;
    if (!localtime_r(&t, &tm))
        return;
    int h = tm.tm_hour % 12 ? tm.tm_hour % 12 : 12;
    printf("Time: %s %d, %d at %d:%02d%s (%s)\n", mon[tm.tm_mon], tm.tm_mday, tm.tm_year + 1900, h,
           tm.tm_min, tm.tm_hour < 12 ? "am" : "pm", tm.tm_zone);
}

/* pprof's ProfileLabels. */
static void top_print_header(const top_graph_t *g, const char *out_unit)
{
    const hs_profile_t *p = g->p;
    char buf[4096], a[64], b[64], pb[32], pct[40];
    if (p->nmappings) {
        const char *file = hs_profile_get_str(p, p->mappings[0].filename);
        const char *bid = hs_profile_get_str(p, p->mappings[0].build_id);
        top_basename(buf, sizeof(buf), file);
        if (*file)
            printf("File: %s\n", buf);
        if (*bid)
            printf("Build ID: %s\n", bid);
    }
    for (size_t i = 0; i < p->ncomments; i++) {
        const char *c = hs_profile_get_str(p, p->comments[i]);
        if (c[0] != '#')
            printf("%s\n", c);
    }
    printf("Type: %s\n", hs_profile_get_str(p, p->sample_types[g->sidx].type));
    if (p->time_nanos)
        top_print_time(p->time_nanos);
    if (p->duration_nanos) {
        const char *unit = "";
        top_label(a, sizeof(a), p->duration_nanos, "nanoseconds", "auto");
        top_label(b, sizeof(b), g->total, g->sample_unit, out_unit);
        double nanos = top_scale(g->total, g->sample_unit, "nanoseconds", &unit);
        pct[0] = '\0';
        if (strcmp(unit, "ns") == 0 && nanos != 0) {
            top_percent(pb, sizeof(pb), (int64_t)nanos, p->duration_nanos);
            snprintf(pct, sizeof(pct), "(%s)", pb);
        }
        printf("Duration: %s, Total samples = %s %s\n", a, b, pct);
    }
}

/* ---- the report --------------------------------------------------------------------------- */

typedef struct {
    const char *path;
    const char *sample_type; /* NULL: the profile's default */
    const char *unit;        /* pprof unit name, "minimum" by default */
    long count;              /* 0: all nodes */
    bool cum;
} top_opts_t;

/* Keeps nodes above pprof's node fraction, sorts them and returns the ones to show.
 * *orig gets the count before -n, *dropped the count under the cutoff. */
static top_node_t **top_select(top_graph_t *g, const top_opts_t *o, size_t *nshown, size_t *orig,
                               size_t *dropped, int64_t *edge_cutoff)
{
    int64_t flat_total = 0;
    size_t live = 0;
    for (size_t i = 0; i < g->nnodes; i++) {
        if (g->nodes[i].flat || g->nodes[i].cum) {
            flat_total += g->nodes[i].flat;
            live++;
        }
    }
    int64_t cutoff = top_abs((int64_t)((double)flat_total * 0.005));
    *edge_cutoff = top_abs((int64_t)((double)flat_total * 0.001));
    top_node_t **shown = malloc((live ? live : 1) * sizeof(*shown));
    if (!shown)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < g->nnodes; i++) {
        top_node_t *nd = &g->nodes[i];
        if ((nd->flat || nd->cum) && (cutoff == 0 || top_abs(nd->cum) >= cutoff))
            shown[n++] = nd;
    }
    *dropped = live - n;
    *orig = n;
    bool cum = o->cum;
    qsort_r(shown, n, sizeof(*shown), top_cmp, &cum);
    if (o->count > 0 && (size_t)o->count < n)
        n = (size_t)o->count;
    for (size_t i = 0; i < n; i++)
        shown[i]->shown = true;
    *nshown = n;
    return shown;
}

static void top_print_rows(const top_graph_t *g, top_node_t **shown, size_t n, const char *ou)
{
    char f[64], c[64], fp[32], sp[32], cp[32];
    int64_t sum = 0;
    printf("%10s %5s%% %5s%% %10s %5s%%\n", "flat", "flat", "sum", "cum", "cum");
    for (size_t i = 0; i < n; i++) {
        const top_node_t *nd = shown[i];
        sum += nd->flat;
        top_label(f, sizeof(f), nd->flat, g->sample_unit, ou);
        top_label(c, sizeof(c), nd->cum, g->sample_unit, ou);
        top_percent(fp, sizeof(fp), nd->flat, g->total);
        top_percent(sp, sizeof(sp), sum, g->total);
        top_percent(cp, sizeof(cp), nd->cum, g->total);
        const char *inl = !nd->inline_in ? "" : nd->noinline_in ? " (partial-inline)" : " (inline)";
        printf("%10s %s %s %10s %s  %s%s\n", f, fp, sp, c, cp, nd->name, inl);
    }
}

static int top_report(top_graph_t *g, const top_opts_t *o)
{
    size_t n, orig, dropped;
    int64_t edge_cutoff;
    top_node_t **shown = top_select(g, o, &n, &orig, &dropped, &edge_cutoff);
    if (!shown || (g->any_inline && top_inline_marks(g, edge_cutoff))) {
        free(shown);
        return -ENOMEM;
    }
    const char *ou = o->unit;
    if (strcmp(ou, "minimum") == 0 && n)
        ou = top_min_unit(shown, n, g->total, g->sample_unit);
    top_print_header(g, ou);
    int64_t flat_sum = 0;
    for (size_t i = 0; i < n; i++)
        flat_sum += shown[i]->flat;
    char a[64], b[64], pct[32];
    top_label(a, sizeof(a), flat_sum, g->sample_unit, ou);
    top_label(b, sizeof(b), g->total, g->sample_unit, ou);
    top_percent(pct, sizeof(pct), flat_sum, g->total);
    printf("Showing nodes accounting for %s, %s of %s total\n", a, pct + strspn(pct, " "), b);
    if (g->total != 0) {
        if (dropped > 0) {
            top_label(a, sizeof(a), top_abs((int64_t)((double)g->total * 0.005)), g->sample_unit,
                      ou);
            printf("Dropped %zu node%s (cum <= %s)\n", dropped, dropped > 1 ? "s" : "", a);
        }
        if (n > 0 && n < orig)
            printf("Showing top %zu nodes out of %zu\n", n, orig);
    }
    top_print_rows(g, shown, n, ou);
    free(shown);
    return 0;
}

/* pprof's SampleIndexByName: a name (also without "inuse_"), an index, or the default
 * sample type, else the last one. -1 when name matches nothing. */
static int top_sample_index(const hs_profile_t *p, const char *name)
{
    if (!name) {
        const char *dst = hs_profile_get_str(p, p->default_sample_type);
        int i = *dst ? hs_profile_sample_type_index(p, dst) : -1;
        return i >= 0 ? i : (int)p->ntypes - 1;
    }
    char *end;
    long idx = strtol(name, &end, 10);
    if (*name && !*end)
        return idx >= 0 && (size_t)idx < p->ntypes ? (int)idx : -1;
    const char *no_inuse = strncmp(name, "inuse_", 6) == 0 ? name + 6 : name;
    for (size_t i = 0; i < p->ntypes; i++) {
        const char *t = hs_profile_get_str(p, p->sample_types[i].type);
        if (strcmp(t, name) == 0 || strcmp(t, no_inuse) == 0)
            return (int)i;
    }
    return -1;
}

static void top_graph_free(top_graph_t *g)
{
    for (size_t i = 0; i < g->nnodes; i++)
        free(g->nodes[i].name);
    free(g->nodes);
    free(g->node_slots);
    free(g->loc_nodes);
    free(g->loc_off);
    free(g->loc_cnt);
    free(g->locmap.sorted);
}

static int top_run(const hs_profile_t *p, const top_opts_t *o)
{
    top_graph_t g;
    memset(&g, 0, sizeof(g));
    g.p = p;
    if (p->ntypes == 0) {
        hs_cli_error("%s: profile has no samples", o->path);
        return 2;
    }
    g.sidx = top_sample_index(p, o->sample_type);
    if (g.sidx < 0) {
        hs_buf_t names = HS_BUF_INIT;
        for (size_t i = 0; i < p->ntypes; i++)
            hs_buf_printf(&names, "%s%s", i ? " " : "",
                          hs_profile_get_str(p, p->sample_types[i].type));
        hs_cli_error("%s: sample type \"%s\" must be one of: [%s]", o->path, o->sample_type,
                     names.data ? (char *)names.data : "");
        hs_buf_free(&names);
        return 1;
    }
    g.sample_unit = hs_profile_get_str(p, p->sample_types[g.sidx].unit);
    top_idmap_t funcs = {NULL, 0};
    int rc = top_idmap_init(&funcs, p->functions, p->nfunctions, sizeof(hs_function_t));
    if (!rc)
        rc = top_idmap_init(&g.locmap, p->locations, p->nlocations, sizeof(hs_location_t));
    if (!rc)
        rc = top_map_locations(&g, &funcs);
    bool negative = false;
    for (size_t i = 0; !rc && i < p->nsamples; i++)
        negative |= p->samples[i].values[g.sidx] < 0;
    if (!rc) {
        top_accumulate(&g);
        if (negative)
            rc = top_total_merged(&g);
    }
    if (!rc) {
        rc = top_report(&g, o);
    }
    free(funcs.sorted);
    top_graph_free(&g);
    if (rc) {
        hs_cli_error("%s: %s", o->path, strerror(-rc));
        return 3;
    }
    return fflush(stdout) == 0 ? 0 : 3;
}

/* ---- options ------------------------------------------------------------------------------ */

static void top_usage(FILE *f)
{
    fprintf(f, "usage: heapsift top FILE [--sample-type NAME] [--unit B|kB|MB|GB|auto] [-n N]\n"
               "                    [--cum] [--help]\n"
               "\n"
               "Prints flat and cumulative use by function, like `go tool pprof -top`.\n"
               "FILE is a pprof profile, gzipped or not.\n"
               "\n"
               "  --sample-type NAME  sample type to show (name or index); default: the\n"
               "                      profile's default sample type, else the last one\n"
               "  --unit UNIT         B, kB, MB, GB, TB or auto (pprof's default: the unit of\n"
               "                      the smallest value shown)\n"
               "  -n N                show only the top N functions\n"
               "  --cum               sort by cumulative instead of flat use\n"
               "  --help              show this help\n"
               "\n"
               "Exit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

/* The value of option name at argv[*i] ("--opt V" or "--opt=V"), advancing *i; NULL if
 * argv[*i] is not that option. *missing is set when the value is absent. */
static const char *top_optval(int argc, char **argv, int *i, const char *name, bool *missing)
{
    size_t n = strlen(name);
    if (strncmp(argv[*i], name, n) != 0)
        return NULL;
    if (argv[*i][n] == '=')
        return argv[*i] + n + 1;
    if (argv[*i][n] != '\0')
        return NULL;
    if (*i + 1 >= argc) {
        *missing = true;
        return NULL;
    }
    return argv[++*i];
}

static const char *top_unit_arg(const char *u)
{
    static const char *units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    if (strcmp(u, "auto") == 0)
        return "minimum";
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(u, units[i]) == 0)
            return units[i];
    return NULL;
}

/* Returns -1 on success (options in o), else the exit status to return. */
static int top_parse(int argc, char **argv, top_opts_t *o)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        char *end;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            top_usage(stdout);
            return 0;
        } else if (strcmp(a, "--cum") == 0) {
            o->cum = true;
        } else if ((v = top_optval(argc, argv, &i, "--sample-type", &missing))) {
            o->sample_type = v;
        } else if ((v = top_optval(argc, argv, &i, "--unit", &missing))) {
            if (!(o->unit = top_unit_arg(v))) {
                hs_cli_error("top: unknown unit '%s' (B, kB, MB, GB, TB, PB or auto)", v);
                return 1;
            }
        } else if ((v = top_optval(argc, argv, &i, "-n", &missing))) {
            o->count = strtol(v, &end, 10);
            if (!*v || *end || o->count < 0) {
                hs_cli_error("top: -n wants a count, not '%s'", v);
                return 1;
            }
        } else if (missing || (a[0] == '-' && a[1] != '\0') || o->path) {
            hs_cli_error("top: %s '%s' (see heapsift top --help)",
                         missing                  ? "missing value for"
                         : o->path && a[0] != '-' ? "unexpected argument"
                                                  : "unknown option",
                         a);
            return 1;
        } else {
            o->path = a;
        }
    }
    if (!o->path) {
        hs_cli_error("top: missing profile file (see heapsift top --help)");
        return 1;
    }
    return -1;
}

int hs_cmd_top(int argc, char **argv)
{
    top_opts_t o = {NULL, NULL, "minimum", 0, false};
    int rc = top_parse(argc, argv, &o);
    if (rc >= 0)
        return rc;
    hs_profile_t *p = NULL;
    char err[512];
    rc = hs_profile_read_any(o.path, &p, err, sizeof(err));
    if (rc) {
        hs_cli_error("%s: %s", o.path, err);
        return rc == -EINVAL ? 2 : 3;
    }
    rc = top_run(p, &o);
    hs_profile_free(p);
    return rc;
}

/*
 * The graph side of the report model (report.h): pprof's node orderings and trimming
 * (Graph.SortNodes, DiscardLowFrequencyNodes, SelectTopNodes) and its edges (weights once
 * per sample, inline flags, edge order), and the numbering of distinct stacks. Reads a
 * built hs_report_t; owns only the arrays it returns.
 */
#define _GNU_SOURCE /* qsort_r */
#include "report.h"
#include "base/satmath.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t rep_abs(int64_t v)
{
    return v < 0 ? -v : v;
}

/* fmt.Sprint of pprof's NodeInfo: the last tie-breaker of its orderings. */
int hs_report_node_info_cmp(const hs_rnode_t *l, const hs_rnode_t *r)
{
    char ls[1024], rs[1024];
    snprintf(ls, sizeof(ls), "{%s  %" PRIu64 " %s %" PRId64 " %" PRId64 " %s}", l->fname,
             l->address, l->file, l->start_line, l->lineno, l->obj);
    snprintf(rs, sizeof(rs), "{%s  %" PRIu64 " %s %" PRId64 " %" PRId64 " %s}", r->fname,
             r->address, r->file, r->start_line, r->lineno, r->obj);
    return strcmp(ls, rs);
}

static int rep_cmp(const void *a, const void *b, void *arg)
{
    const hs_report_t *rep = ((void **)arg)[0];
    bool cum = *(const bool *)((void **)arg)[1];
    const hs_rnode_t *l = &rep->nodes[*(const uint32_t *)a], *r = &rep->nodes[*(const uint32_t *)b];
    int64_t lk = rep_abs(cum ? l->cum : l->flat), rk = rep_abs(cum ? r->cum : r->flat);
    if (lk != rk)
        return lk > rk ? -1 : 1;
    int c = strcmp(l->name, r->name);
    if (c)
        return c;
    lk = rep_abs(cum ? l->flat : l->cum);
    rk = rep_abs(cum ? r->flat : r->cum);
    if (lk != rk)
        return lk > rk ? -1 : 1;
    return hs_report_node_info_cmp(l, r);
}

uint32_t *hs_report_select(hs_report_t *r, bool cum, double fraction, long count, size_t *nshown,
                           size_t *orig, size_t *dropped)
{
    int64_t flat_total = 0;
    size_t live = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        r->nodes[i].kept = false;
        if (r->nodes[i].flat || r->nodes[i].cum) {
            flat_total = hs_sat_add(flat_total, r->nodes[i].flat);
            live++;
        }
    }
    int64_t cutoff = rep_abs((int64_t)((double)flat_total * fraction));
    uint32_t *shown = malloc((live ? live : 1) * sizeof(*shown));
    if (!shown)
        return NULL;
    size_t n = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        const hs_rnode_t *nd = &r->nodes[i];
        if ((nd->flat || nd->cum) && (cutoff == 0 || rep_abs(nd->cum) >= cutoff))
            shown[n++] = (uint32_t)i;
    }
    *dropped = live - n;
    *orig = n;
    void *arg[2] = {r, &cum};
    qsort_r(shown, n, sizeof(*shown), rep_cmp, arg);
    if (count > 0 && (size_t)count < n)
        n = (size_t)count;
    for (size_t i = 0; i < n; i++)
        r->nodes[shown[i]].kept = true;
    *nshown = n;
    return shown;
}

typedef struct {
    hs_redge_t *e;
    size_t cap, n;
} rep_edges_t;

static size_t rep_edge_slot(uint32_t from, uint32_t to, size_t cap)
{
    return ((uint64_t)from * 0x9e3779b97f4a7c15ull ^ to) & (cap - 1);
}

static hs_redge_t *rep_edge(rep_edges_t *t, uint32_t from, uint32_t to)
{
    if ((t->n + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 1024;
        hs_redge_t *a = calloc(cap, sizeof(*a));
        if (!a)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->e[i].from)
                continue;
            size_t j = rep_edge_slot(t->e[i].from, t->e[i].to, cap);
            while (a[j].from)
                j = (j + 1) & (cap - 1);
            a[j] = t->e[i];
        }
        free(t->e);
        t->e = a;
        t->cap = cap;
    }
    size_t j = rep_edge_slot(from, to, t->cap);
    for (; t->e[j].from; j = (j + 1) & (t->cap - 1))
        if (t->e[j].from == from && t->e[j].to == to)
            return &t->e[j];
    t->e[j].from = from;
    t->e[j].to = to;
    t->e[j].inl = true;
    t->n++;
    return &t->e[j];
}

long hs_report_edges(const hs_report_t *r, bool kept_only, hs_redge_t **out)
{
    return hs_report_edges_into(r, kept_only, NULL, out);
}

long hs_report_edges_into(const hs_report_t *r, bool kept_only, const bool *into, hs_redge_t **out)
{
    rep_edges_t t = {NULL, 0, 0};
    for (size_t si = 0; si < r->nsamples; si++) {
        const hs_rsample_t *s = &r->samples[si];
        int64_t parent = -1;
        bool residual = false;
        for (size_t i = s->nframes; s->value && i-- > 0;) {
            uint32_t n = s->frames[i];
            if (kept_only && !r->nodes[n].kept) {
                residual = true;
                continue;
            }
            if (parent >= 0 && n != parent && (!into || into[n])) {
                hs_redge_t *e = rep_edge(&t, (uint32_t)parent + 1, n + 1);
                if (!e) {
                    free(t.e);
                    return -ENOMEM;
                }
                if (e->stamp != si + 1) {
                    e->stamp = si + 1;
                    e->weight = hs_sat_add(e->weight, s->value);
                    e->inl &= s->inl[i] != 0;
                    e->residual |= residual;
                }
            }
            parent = n;
            residual = false;
        }
    }
    size_t k = 0;
    for (size_t i = 0; i < t.cap; i++)
        if (t.e[i].from)
            t.e[k++] = t.e[i];
    *out = t.e;
    return (long)k;
}

static int rep_edge_cmp(const void *a, const void *b, void *arg)
{
    const hs_report_t *r = arg;
    const hs_redge_t *x = a, *y = b;
    if (rep_abs(x->weight) != rep_abs(y->weight))
        return rep_abs(x->weight) > rep_abs(y->weight) ? -1 : 1;
    int c = strcmp(r->nodes[x->from - 1].name, r->nodes[y->from - 1].name);
    return c ? c : strcmp(r->nodes[x->to - 1].name, r->nodes[y->to - 1].name);
}

void hs_report_sort_edges(const hs_report_t *r, hs_redge_t *e, size_t n)
{
    if (n > 1) /* e is NULL when there is no edge: qsort_r's pointer must not be */
        qsort_r(e, n, sizeof(*e), rep_edge_cmp, (void *)r);
}

/* ---- call tree ------------------------------------------------------------------------------ */

typedef struct {
    hs_rtree_t *t;
    size_t n, cap;
    uint32_t *slots; /* (parent, node) -> tree index */
    size_t slots_cap;
} rep_tree_t;

static size_t rep_tree_slot(uint32_t parent, uint32_t node, size_t cap)
{
    /* The top bits of the product depend on both halves of the key (low bits of it
     * would ignore the parent for small tables); cap is a power of two >= 2. */
    return (size_t)((((uint64_t)parent << 32 | node) * 0x9e3779b97f4a7c15ull) >>
                    (64 - __builtin_ctzll((unsigned long long)cap)));
}

static int rep_tree_grow(rep_tree_t *t)
{
    size_t cap = t->slots_cap * 2;
    uint32_t *s = calloc(cap, sizeof(*s));
    hs_rtree_t *a = realloc(t->t, cap / 2 * sizeof(*a));
    if (a)
        t->t = a;
    if (!s || !a) {
        free(s);
        return -ENOMEM;
    }
    for (size_t i = 1; i < t->n; i++) {
        size_t j = rep_tree_slot(t->t[i].parent, t->t[i].node, cap);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)i;
    }
    free(t->slots);
    t->slots = s;
    t->slots_cap = cap;
    t->cap = cap / 2;
    return 0;
}

/* The child of parent for report node `node`, created when absent; 0 on ENOMEM. */
static uint32_t rep_tree_child(rep_tree_t *t, uint32_t parent, uint32_t node)
{
    if (t->n + 1 > t->cap && rep_tree_grow(t))
        return 0;
    size_t mask = t->slots_cap - 1, j = rep_tree_slot(parent, node, t->slots_cap);
    for (; t->slots[j]; j = (j + 1) & mask)
        if (t->t[t->slots[j]].parent == parent && t->t[t->slots[j]].node == node)
            return t->slots[j];
    uint32_t i = (uint32_t)t->n++;
    hs_rtree_t *c = &t->t[i];
    memset(c, 0, sizeof(*c));
    c->node = node;
    c->parent = parent;
    c->depth = t->t[parent].depth + 1;
    c->sibling = t->t[parent].child;
    t->t[parent].child = i;
    t->slots[j] = i;
    return i;
}

long hs_report_tree(const hs_report_t *r, hs_rtree_t **out)
{
    rep_tree_t t = {NULL, 1, 0, NULL, 1024};
    t.slots = calloc(t.slots_cap, sizeof(*t.slots));
    t.t = calloc(t.slots_cap / 2, sizeof(*t.t));
    t.cap = t.slots_cap / 2;
    if (!t.slots || !t.t)
        goto fail;
    t.t[0].node = UINT32_MAX;
    for (size_t si = 0; si < r->nsamples; si++) {
        const hs_rsample_t *s = &r->samples[si];
        int64_t v = s->base ? -s->value : s->value;
        uint32_t cur = 0;
        if (s->value == 0)
            continue;
        for (size_t i = s->nframes; i-- > 0;) {
            if (!(cur = rep_tree_child(&t, cur, s->frames[i])))
                goto fail;
            int64_t *cum = s->base ? &t.t[cur].base_cum : &t.t[cur].cum;
            *cum = hs_sat_add(*cum, v);
            *(s->base ? &t.t[cur].base_cum_var : &t.t[cur].cum_var) += s->var;
        }
        int64_t *flat = s->base ? &t.t[cur].base_flat : &t.t[cur].flat;
        int64_t *root = s->base ? &t.t[0].base_cum : &t.t[0].cum;
        *flat = hs_sat_add(*flat, v);
        *root = hs_sat_add(*root, v);
        *(s->base ? &t.t[0].base_cum_var : &t.t[0].cum_var) += s->var;
    }
    free(t.slots);
    *out = t.t;
    return (long)t.n;
fail:
    free(t.slots);
    free(t.t);
    return -ENOMEM;
}

typedef struct {
    const hs_report_t *r;
    const hs_rtree_t *t;
} rep_kids_t;

static int rep_kids_cmp(const void *a, const void *b, void *arg)
{
    const rep_kids_t *c = arg;
    const hs_rtree_t *x = &c->t[*(const uint32_t *)a];
    const hs_rtree_t *y = &c->t[*(const uint32_t *)b];
    return strcmp(c->r->nodes[x->node].name, c->r->nodes[y->node].name);
}

uint32_t *hs_report_tree_children(const hs_report_t *r, const hs_rtree_t *t, uint32_t i, size_t *n)
{
    *n = 0;
    for (uint32_t c = t[i].child; c; c = t[c].sibling)
        (*n)++;
    uint32_t *a = malloc((*n + 1) * sizeof(*a));
    if (!a)
        return NULL;
    size_t k = 0;
    for (uint32_t c = t[i].child; c; c = t[c].sibling)
        a[k++] = c;
    rep_kids_t ctx = {r, t};
    qsort_r(a, k, sizeof(*a), rep_kids_cmp, &ctx);
    return a;
}

/* One step of the stack hash of hs_report_stack_ids. */
static uint64_t graph_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

long hs_report_stack_ids(const hs_report_t *r, bool leaf_only, uint32_t *ids)
{
    size_t cap = 16, n = 0;
    while (cap < r->nsamples * 2)
        cap *= 2;
    uint32_t *slots = calloc(cap, sizeof(uint32_t)); /* first sample of the stack + 1 */
    uint32_t *first = malloc((r->nsamples + 1) * sizeof(uint32_t));
    if (!slots || !first) {
        free(slots);
        free(first);
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->nsamples; i++) {
        const hs_rsample_t *s = &r->samples[i];
        size_t nf = leaf_only && s->nframes ? 1 : s->nframes;
        uint64_t h = nf;
        for (size_t k = 0; k < nf; k++)
            h = graph_mix(h, s->frames[k]);
        size_t j = h & (cap - 1);
        for (; slots[j]; j = (j + 1) & (cap - 1)) {
            const hs_rsample_t *o = &r->samples[slots[j] - 1];
            size_t onf = leaf_only && o->nframes ? 1 : o->nframes;
            if (onf == nf && memcmp(o->frames, s->frames, nf * sizeof(uint32_t)) == 0)
                break;
        }
        if (!slots[j]) {
            slots[j] = (uint32_t)i + 1;
            first[i] = (uint32_t)n++;
        }
        ids[i] = first[slots[j] - 1];
    }
    free(slots);
    free(first);
    return (long)n;
}

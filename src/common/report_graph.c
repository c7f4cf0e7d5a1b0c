/*
 * The graph side of the report model (report.h): pprof's node orderings and trimming
 * (Graph.SortNodes, DiscardLowFrequencyNodes, SelectTopNodes) and its edges (weights once
 * per sample, inline flags, edge order). Reads a built hs_report_t; owns only the arrays
 * it returns.
 */
#define _GNU_SOURCE /* qsort_r */
#include "report.h"

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
static int rep_sprint_cmp(const hs_rnode_t *l, const hs_rnode_t *r)
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
    return rep_sprint_cmp(l, r);
}

uint32_t *hs_report_select(hs_report_t *r, bool cum, double fraction, long count, size_t *nshown,
                           size_t *orig, size_t *dropped)
{
    int64_t flat_total = 0;
    size_t live = 0;
    for (size_t i = 0; i < r->nnodes; i++) {
        r->nodes[i].kept = false;
        if (r->nodes[i].flat || r->nodes[i].cum) {
            flat_total += r->nodes[i].flat;
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
    rep_edges_t t = {NULL, 0, 0};
    for (size_t si = 0; si < r->nsamples; si++) {
        const hs_rsample_t *s = &r->samples[si];
        int64_t parent = -1;
        for (size_t i = s->nframes; s->value && i-- > 0;) {
            uint32_t n = s->frames[i];
            if (kept_only && !r->nodes[n].kept)
                continue;
            if (parent >= 0 && n != parent) {
                hs_redge_t *e = rep_edge(&t, (uint32_t)parent + 1, n + 1);
                if (!e) {
                    free(t.e);
                    return -ENOMEM;
                }
                if (e->stamp != si + 1) {
                    e->stamp = si + 1;
                    e->weight += s->value;
                    e->inl &= s->inl[i] != 0;
                }
            }
            parent = n;
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
    qsort_r(e, n, sizeof(*e), rep_edge_cmp, (void *)r);
}

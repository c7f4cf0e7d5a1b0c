/*
 * `heapsift tree FILE`: the call tree from the roots down, one line per distinct call
 * path, indented two spaces per level, with flat and cum in pprof's number format.
 * Children come by |cum|, largest first; paths under pprof's node fraction (0.5% of the
 * total, --all keeps them) are dropped and counted. Exit codes: 0, 1 usage, 2 bad input,
 * 3 I/O.
 */
#include "kit/cli.h"
#include "verbs.h"
#include "base/sort.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const hs_report_t *r;
    const hs_rtree_t *t;
    const char *ou;
    int64_t cutoff;
    size_t dropped;
} tree_state_t;

static const tree_state_t *tree_sort_state;

static int64_t tree_abs(int64_t v)
{
    return v < 0 ? -v : v;
}

static int tree_cmp(const void *a, const void *b)
{
    const tree_state_t *st = tree_sort_state;
    const hs_rtree_t *x = &st->t[*(const uint32_t *)a], *y = &st->t[*(const uint32_t *)b];
    if (tree_abs(x->cum) != tree_abs(y->cum))
        return tree_abs(x->cum) > tree_abs(y->cum) ? -1 : 1;
    return strcmp(st->r->nodes[x->node].name, st->r->nodes[y->node].name);
}

static int tree_walk(tree_state_t *st, uint32_t i)
{
    const hs_rtree_t *t = st->t;
    if (i) {
        char f[64], c[64], fp[32], cp[32];
        hs_report_label(f, sizeof(f), t[i].flat, st->r->sample_unit, st->ou);
        hs_report_label(c, sizeof(c), t[i].cum, st->r->sample_unit, st->ou);
        hs_report_percent(fp, sizeof(fp), t[i].flat, st->r->total);
        hs_report_percent(cp, sizeof(cp), t[i].cum, st->r->total);
        printf("%10s %s %10s %s  %*s%s\n", f, fp, c, cp, (int)(2 * (t[i].depth - 1)), "",
               st->r->nodes[t[i].node].name);
    }
    size_t n = 0, k = 0;
    for (uint32_t c = t[i].child; c; c = t[c].sibling)
        n++;
    uint32_t *kids = malloc((n + 1) * sizeof(*kids));
    if (!kids)
        return -ENOMEM;
    for (uint32_t c = t[i].child; c; c = t[c].sibling)
        kids[k++] = c;
    tree_sort_state = st;
    hs_sort(kids, n, sizeof(*kids), tree_cmp);
    int rc = 0;
    for (k = 0; !rc && k < n; k++) {
        if (t[kids[k]].cum == 0 || tree_abs(t[kids[k]].cum) < st->cutoff)
            st->dropped++;
        else
            rc = tree_walk(st, kids[k]);
    }
    free(kids);
    return rc;
}

static int tree_print(hs_report_t *r, const hs_viewopts_t *o)
{
    hs_rtree_t *t = NULL;
    size_t n, orig, dropped;
    uint32_t *order = hs_report_select(r, false, 0, 0, &n, &orig, &dropped);
    long nt = order ? hs_report_tree(r, &t) : -ENOMEM;
    if (nt < 0) {
        free(order);
        return -ENOMEM;
    }
    tree_state_t st = {r, t, hs_report_out_unit(r, o->unit, order, n), 0, 0};
    st.cutoff = o->all ? 0 : tree_abs((int64_t)((double)r->total * 0.005));
    hs_report_print_header(r, st.ou, stdout);
    hs_report_print_filters(&o->r, stdout);
    char a[64];
    hs_report_label(a, sizeof(a), r->total, r->sample_unit, st.ou);
    printf("Total: %s\n", a);
    printf("%10s %5s%% %10s %5s%%  %s\n", "flat", "flat", "cum", "cum", "call tree");
    int rc = tree_walk(&st, 0);
    if (!rc && st.dropped) {
        hs_report_label(a, sizeof(a), st.cutoff, r->sample_unit, st.ou);
        printf("Dropped %zu path%s (cum < %s)\n", st.dropped, st.dropped > 1 ? "s" : "", a);
    }
    free(t);
    free(order);
    return rc;
}

static void tree_usage(FILE *f)
{
    fprintf(f, "usage: heapsift tree [options] FILE\n"
               "\n"
               "Prints the call tree from the roots down, indented, with flat and cumulative\n"
               "use per call path; children by cumulative use, largest first.\n"
               "\n"
               "  --all               keep paths under 0.5%% of the total (dropped by default)\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_tree(int argc, char **argv)
{
    static const hs_view_t v = {HS_VO_ALL, tree_usage, true, tree_print};
    return hs_view_main(argc, argv, &v);
}

/*
 * `heapsift collapsed FILE`: folded stacks, one line per distinct stack, "root;...;leaf
 * VALUE", the input of flamegraph.pl, speedscope and inferno. Frames are the report's
 * nodes (functions by default; inlined calls are frames of their own), values the raw
 * numbers of the chosen sample type, summed over equal stacks; lines are sorted, so the
 * output is stable. Values are signed: for a delta (diff) profile the lines sum to the
 * signed total, which is what `top` prints as "accounting for" when it drops no node;
 * top's "of N total" sums absolute values, as pprof's does. A note on stderr says so when
 * the two differ. Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "base/satmath.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static int col_walk(const hs_report_t *r, const hs_rtree_t *t, uint32_t i, const char **path,
                    size_t depth)
{
    if (i) {
        path[depth++] = r->nodes[t[i].node].name;
        if (t[i].flat) {
            for (size_t k = 0; k < depth; k++)
                printf("%s%s", k ? ";" : "", path[k]);
            printf(" %" PRId64 "\n", t[i].flat);
        }
    }
    size_t n;
    uint32_t *kids = hs_report_tree_children(r, t, i, &n);
    if (!kids)
        return -ENOMEM;
    int rc = 0;
    for (size_t k = 0; !rc && k < n; k++)
        rc = col_walk(r, t, kids[k], path, depth);
    free(kids);
    return rc;
}

/* A delta profile's lines sum to a signed figure that is not top's total: say which. */
static void col_note_signed(const hs_report_t *r, const char *path)
{
    int64_t sum = 0;
    bool neg = false;
    for (size_t i = 0; i < r->nnodes; i++) {
        sum = hs_sat_add(sum, r->nodes[i].flat);
        neg = neg || r->nodes[i].flat < 0;
    }
    if (neg)
        fprintf(stderr,
                "heapsift: note: %s: values are signed (a delta profile): the lines sum to %" PRId64
                ", top's \"accounting for\"; its total, %" PRId64 ", sums absolute values\n",
                path, sum, r->total);
}

static int col_print(hs_report_t *r, const hs_viewopts_t *o)
{
    col_note_signed(r, o->pos[0]);
    hs_rtree_t *t = NULL;
    long n = hs_report_tree(r, &t);
    if (n < 0)
        return -ENOMEM;
    uint32_t maxd = 0;
    for (long i = 0; i < n; i++)
        maxd = t[i].depth > maxd ? t[i].depth : maxd;
    const char **path = malloc((maxd + 1) * sizeof(*path));
    int rc = path ? col_walk(r, t, 0, path, 0) : -ENOMEM;
    free(path);
    free(t);
    return rc;
}

static void col_usage(FILE *f)
{
    fprintf(f, "usage: heapsift collapsed [options] FILE\n"
               "\n"
               "Prints folded stacks, \"root;caller;...;leaf VALUE\" one per distinct stack,\n"
               "values in the sample type's own unit (bytes or objects): the input of\n"
               "flamegraph.pl, speedscope and inferno. Values are signed: for a delta\n"
               "profile they sum to what top shows as \"accounting for\", while top's\n"
               "total sums absolute values (a note on stderr says so).\n"
               "\n");
    /* The views' options but --unit: values stay raw (it is accepted, for scripts). */
    for (const char *l = hs_viewopts_help; *l;) {
        size_t n = strcspn(l, "\n") + 1;
        if (strncmp(l, "  --unit ", 9) != 0)
            fwrite(l, 1, n, f);
        l += n;
    }
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_collapsed(int argc, char **argv)
{
    static const hs_view_t v = {0, col_usage, true, col_print};
    return hs_view_main(argc, argv, &v);
}

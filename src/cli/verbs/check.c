/*
 * `heapsift check FILE [--base BASE] [--max-inuse SIZE] [--max REGEX=SIZE]...
 * [--no-new-growth]`: CI assertions on a profile. Each check prints one line on stdout,
 * "ok" or "FAIL" with the figure, its 95% interval, the limit and the site that holds most
 * of it; growth against BASE is judged per stack with diff's few-sample test
 * (hs_report_compare), its level divided by the number of stacks compared so that a run
 * with no real growth passes 97.5% of the time. Exit codes: 0 every check passed, 1
 * usage, 2 bad input, 3 I/O, 4 a check failed.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/sort.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <regex.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CHECK_MAX_BUDGETS 64
#define CHECK_FAILED 4

typedef struct {
    const char *arg; /* as given, for the messages */
    char re[512];
    double limit;
} check_budget_t;

typedef struct {
    double max_inuse; /* < 0: not asked */
    const char *max_inuse_arg;
    check_budget_t budgets[CHECK_MAX_BUDGETS];
    int nbudgets;
    bool growth;
    int failed, run;
} check_opts_t;

static void check_usage(FILE *f)
{
    fprintf(f, "usage: heapsift check [options] FILE\n"
               "\n"
               "CI assertions on a heap profile: exits 4 when one fails, printing one line per\n"
               "check (ok or FAIL, the figure, the limit, the site holding most of it).\n"
               "\n"
               "  --max-inuse SIZE    the live heap (inuse_space) must be at most SIZE\n"
               "  --max REGEX=SIZE    the samples with a frame matching REGEX (function, file or\n"
               "                      mapping, like --focus) must hold at most SIZE of the\n"
               "                      sample type (inuse_space by default); repeatable\n"
               "  --no-new-growth     no stack may grow beyond sampling noise against --base:\n"
               "                      diff's test (one-sided p < 0.025 for one stack), its\n"
               "                      level divided by the number of stacks that changed\n"
               "                      (Bonferroni), so a run without real growth passes\n"
               "                      97.5%% of the time; profiles at rate 1 are exact\n"
               "  --base FILE         the baseline profile for --no-new-growth\n"
               "SIZE: bytes, with an optional B, kB, MB, GB or TB (powers of 1024, as pprof\n"
               "prints them; KiB, MiB, GiB, k, M, G too): 100MB, 1.5GB, 4096. With an objects\n"
               "sample type, a count.\n"
               "The view options below select the sample type and filter the samples\n"
               "(--focus is replaced by REGEX for --max).\n"
               "\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 every check passed, 1 usage, 2 bad input, 3 I/O error, 4 a check\n"
               "failed.\n");
}

/* "100MB", "1.5g", "4096": bytes, or -1. */
static double check_size(const char *s)
{
    static const struct {
        const char *sfx;
        double mul;
    } units[] = {{"", 1},
                 {"b", 1},
                 {"k", 1024.0},
                 {"kb", 1024.0},
                 {"kib", 1024.0},
                 {"m", 1048576.0},
                 {"mb", 1048576.0},
                 {"mib", 1048576.0},
                 {"g", 1073741824.0},
                 {"gb", 1073741824.0},
                 {"gib", 1073741824.0},
                 {"t", 1099511627776.0},
                 {"tb", 1099511627776.0},
                 {"tib", 1099511627776.0}};
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || errno || !(v >= 0) || isinf(v))
        return -1;
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (strcasecmp(end, units[i].sfx) == 0)
            return v * units[i].mul;
    return -1;
}

static int check_bad_size(const char *opt, const char *v)
{
    hs_cli_error("check: bad size '%s' for %s (say 100MB, 512kB, 1.5GB or a number of bytes)", v,
                 opt);
    return 1;
}

/* --max REGEX=SIZE: split at the last '='. */
static int check_budget(check_opts_t *c, const char *v)
{
    const char *eq = strrchr(v, '=');
    if (!eq || eq == v) {
        hs_cli_error("check: --max wants REGEX=SIZE, not '%s'", v);
        return 1;
    }
    if (c->nbudgets == CHECK_MAX_BUDGETS || (size_t)(eq - v) >= sizeof(c->budgets[0].re)) {
        hs_cli_error("check: too many or too long --max options");
        return 1;
    }
    check_budget_t *b = &c->budgets[c->nbudgets++];
    b->arg = v;
    snprintf(b->re, sizeof(b->re), "%.*s", (int)(eq - v), v);
    if ((b->limit = check_size(eq + 1)) < 0)
        return check_bad_size("--max", eq + 1);
    regex_t re;
    int rc = regcomp(&re, b->re, REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char why[128];
        regerror(rc, &re, why, sizeof(why));
        hs_cli_error("check: bad --max regular expression '%s': %s", b->re, why);
        return 1;
    }
    regfree(&re);
    return -1;
}

/* Takes check's own options out of argv (compacting it) before the shared parser. */
static int check_own_opts(int *argc, char **argv, check_opts_t *c)
{
    int w = 1, rc = -1;
    for (int i = 1; i < *argc && rc < 0; i++) {
        const char *a = argv[i], *v;
        bool missing = false;
        if (strcmp(a, "--no-new-growth") == 0) {
            c->growth = true;
        } else if ((v = hs_view_optval(*argc, argv, &i, "--max-inuse", &missing))) {
            if ((c->max_inuse = check_size(v)) < 0)
                rc = check_bad_size("--max-inuse", v);
            else
                c->max_inuse_arg = v;
        } else if ((v = hs_view_optval(*argc, argv, &i, "--max", &missing))) {
            rc = check_budget(c, v);
        } else if (missing) {
            hs_cli_error("check: missing value for '%s' (see heapsift check --help)", a);
            return 1;
        } else {
            argv[w++] = argv[i];
        }
    }
    *argc = w;
    return rc;
}

/* The leaf node holding most of the report's samples, or NULL. */
static const hs_rnode_t *check_top_leaf(const hs_report_t *r)
{
    const hs_rnode_t *best = NULL;
    for (size_t i = 0; i < r->nnodes; i++)
        if (r->nodes[i].flat > 0 && (!best || r->nodes[i].flat > best->flat))
            best = &r->nodes[i];
    return best;
}

static void check_line(check_opts_t *c, bool ok, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void check_line(check_opts_t *c, bool ok, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("%-5s ", ok ? "ok" : "FAIL");
    vprintf(fmt, ap);
    putchar('\n');
    va_end(ap);
    c->run++;
    c->failed += !ok;
}

/* Builds the report of FILE with sample type st (NULL: the options') and focus (NULL:
 * the options'); prints an error and returns the exit status on failure, else -1. */
static int check_build(hs_report_t *r, const hs_profile_t *p, const hs_viewopts_t *o,
                       const char *st, const char *focus)
{
    hs_viewopts_t v = *o;
    v.tags = false;
    if (st)
        v.r.sample_type = st;
    else if (!v.r.sample_type)
        v.r.sample_type = "inuse_space";
    if (focus)
        v.r.focus = focus;
    int sign = 1;
    return hs_view_build(r, &p, &sign, 1, &v, o->pos[0]);
}

/* One budget: the sum of the (filtered) samples against limit. */
static int check_limit(check_opts_t *c, const hs_profile_t *p, const hs_viewopts_t *o,
                       const char *st, const char *focus, double limit, const char *what)
{
    hs_report_t r;
    int rc = check_build(&r, p, o, st, focus);
    if (rc >= 0)
        return rc;
    int64_t sum = 0;
    double var = 0;
    for (size_t i = 0; i < r.nsamples; i++) {
        sum += r.samples[i].value;
        var += r.samples[i].var;
    }
    char v[64], lim[64], iv[160], top[64] = "";
    hs_report_label(v, sizeof(v), sum, r.sample_unit, "minimum");
    hs_report_flabel(lim, sizeof(lim), limit, r.sample_unit, "minimum");
    hs_report_interval_offsets(iv, sizeof(iv), (double)sum, var, r.sample_unit, "minimum");
    const hs_rnode_t *t = check_top_leaf(&r);
    if (t)
        hs_report_label(top, sizeof(top), t->flat, r.sample_unit, "minimum");
    bool ok = (double)sum <= limit;
    if (!focus)
        check_line(c, ok, "%s %s (%s) %s limit %s (%s)%s%s%s%s", r.sample_type, v, iv,
                   ok ? "<=" : ">", lim, what, t ? "; largest site: " : "", t ? t->name : "",
                   t ? " " : "", top);
    if (focus)
        check_line(c, ok, "%s: %s of %s (%s) %s limit %s (%s)%s%s%s%s", focus, v, r.sample_type, iv,
                   ok ? "<=" : ">", lim, what, t ? "; largest site: " : "", t ? t->name : "",
                   t ? " " : "", top);
    if (focus && !r.focus_matched)
        printf("      (no frame matches '%s')\n", focus);
    hs_report_free(&r);
    return -1;
}

typedef struct {
    int64_t d;            /* new minus base */
    int64_t base;         /* the base's value, positive */
    double var, base_var; /* sampling variance of new's value, of base's */
    uint32_t first;       /* a sample of the stack, for its frames */
} check_stack_t;

static int check_cmp_growth(const void *a, const void *b)
{
    int64_t x = ((const check_stack_t *)a)->d, y = ((const check_stack_t *)b)->d;
    return x > y ? -1 : x < y;
}

/* Per stack: the change from base to new and each side's value and variance (the diff
 * report's samples, base negated, grouped by stack). *out is malloc'ed; returns the count
 * or -ENOMEM. */
static long check_stacks(const hs_report_t *r, check_stack_t **out)
{
    uint32_t *ids = malloc((r->nsamples + 1) * sizeof(uint32_t));
    long n = ids ? hs_report_stack_ids(r, false, ids) : -ENOMEM;
    *out = n >= 0 ? calloc((size_t)n + 1, sizeof(check_stack_t)) : NULL;
    if (!*out) {
        free(ids);
        return -ENOMEM;
    }
    for (size_t i = 0; i < r->nsamples; i++) {
        const hs_rsample_t *rs = &r->samples[i];
        check_stack_t *s = &(*out)[ids[i]];
        s->d += rs->value;
        s->base -= rs->base ? rs->value : 0;
        *(rs->base ? &s->base_var : &s->var) += rs->var;
        if (!s->first)
            s->first = (uint32_t)i + 1;
    }
    free(ids);
    return n;
}

/* The stack of s, its first frames, as a string (hs_view_print_stack). */
static void check_stack_name(const hs_report_t *r, const hs_rsample_t *s, char *out, size_t len)
{
    memset(out, 0, len); /* fmemopen leaves no NUL when the text fills its buffer */
    FILE *f = fmemopen(out, len - 1, "w");
    if (f) {
        hs_view_print_stack(r, s->frames, s->nframes, 4, f);
        fclose(f);
    }
}

/* --no-new-growth: every stack of NEW against BASE. */
static int check_growth(check_opts_t *c, hs_profile_t *const p[2], const hs_viewopts_t *o)
{
    hs_viewopts_t v = *o;
    v.tags = false;
    if (!v.r.sample_type)
        v.r.sample_type = "inuse_space";
    hs_report_t r;
    int signs[2] = {1, -1};
    int rc = hs_view_build(&r, (const hs_profile_t *const *)p, signs, 2, &v, o->pos[0]);
    if (rc >= 0)
        return rc;
    check_stack_t *st = NULL;
    long n = check_stacks(&r, &st);
    if (n < 0) {
        hs_report_free(&r);
        hs_cli_error("check: %s", strerror(ENOMEM));
        return 3;
    }
    size_t changed = 0, grew = 0;
    for (long i = 0; i < n; i++)
        changed += st[i].d != 0;
    double alpha = HS_NOISE_ALPHA / (double)(changed ? changed : 1);
    hs_sort(st, (size_t)n, sizeof(*st), check_cmp_growth);
    char name[512], d[64];
    for (long i = 0; i < n; i++) {
        hs_estimate_t b = {(double)st[i].base, st[i].base_var, r.base_exact};
        hs_estimate_t now = {(double)st[i].base + (double)st[i].d, st[i].var, r.exact};
        if (st[i].d <= 0 || hs_report_compare(b, now, alpha) != HS_GREW)
            continue;
        check_stack_name(&r, &r.samples[st[i].first - 1], name, sizeof(name));
        hs_report_label(d, sizeof(d), st[i].d, r.sample_unit, "minimum");
        if (grew++ < 10)
            check_line(c, false,
                       "%s: %s grew %s against %s, beyond noise (p=%.2g < %.2g) (--no-new-growth)",
                       name, r.sample_type, d, o->base, hs_report_change_p(b, now), alpha);
    }
    if (grew > 10)
        printf("      (and %zu more stacks grew)\n", grew - 10);
    if (!grew)
        check_line(c, true,
                   "%s: no stack grew beyond noise against %s (%zu of %ld stacks changed; "
                   "each tested at p < %.2g) (--no-new-growth)",
                   r.sample_type, o->base, changed, n, alpha);
    free(st);
    hs_report_free(&r);
    return -1;
}

static int check_run(check_opts_t *c, hs_profile_t *const p[2], const hs_viewopts_t *o)
{
    int rc = -1;
    char what[600];
    if (c->max_inuse >= 0) {
        snprintf(what, sizeof(what), "--max-inuse %s", c->max_inuse_arg);
        rc = check_limit(c, p[0], o, "inuse_space", NULL, c->max_inuse, what);
    }
    for (int i = 0; rc < 0 && i < c->nbudgets; i++) {
        snprintf(what, sizeof(what), "--max '%s'", c->budgets[i].arg);
        rc = check_limit(c, p[0], o, NULL, c->budgets[i].re, c->budgets[i].limit, what);
    }
    if (rc < 0 && c->growth)
        rc = check_growth(c, p, o);
    if (rc >= 0)
        return rc;
    if (c->failed)
        printf("check: %d of %d checks failed\n", c->failed, c->run);
    rc = hs_view_done(0, o->pos[0]);
    return rc ? rc : c->failed ? CHECK_FAILED : 0;
}

int hs_cmd_check(int argc, char **argv)
{
    check_opts_t c = {.max_inuse = -1};
    hs_viewopts_t o;
    int rc = check_own_opts(&argc, argv, &c);
    if (rc < 0)
        rc = hs_viewopts_parse(argc, argv, &o, HS_VO_BASE, 1, check_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    if ((rc = hs_view_no_tags(&o)) != HS_VIEW_CONTINUE)
        return rc;
    if (c.max_inuse < 0 && !c.nbudgets && !c.growth) {
        hs_cli_error("check: nothing to check (--max-inuse, --max or --no-new-growth)");
        return 1;
    }
    if (c.growth != (o.base != NULL)) {
        hs_cli_error("check: %s", c.growth ? "--no-new-growth needs --base FILE"
                                           : "--base is for --no-new-growth");
        return 1;
    }
    hs_profile_t *p[2] = {NULL, NULL}; /* FILE, then BASE: the diff's order */
    if ((rc = hs_view_read(&o, o.pos[0], &p[0])) < 0 &&
        (!o.base || (rc = hs_view_read(&o, o.base, &p[1])) < 0))
        rc = check_run(&c, p, &o);
    hs_profile_free(p[0]);
    hs_profile_free(p[1]);
    return rc;
}

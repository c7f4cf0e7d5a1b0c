/*
 * `heapsift list REGEX FILE`: the source of every function whose name matches REGEX,
 * each line with its flat and cumulative value, as `go tool pprof -list REGEX` prints it:
 * the report at line granularity, one section per function and source file, the lines
 * from the function's first line (or 5 before its first sampled line) to 5 after its last
 * sampled one. Source files are read where the profile's file:line names them: an
 * absolute path as it is, a relative one from the current directory and its parents,
 * and a path holding "/<current directory's name>/" from what follows it (pprof's guess
 * for a tree built elsewhere), then, unlike pprof, as it is when that guess found nothing.
 * A file that cannot be read gets pprof's " Error:" line.
 * Exit codes: 0, 1 usage (also: nothing matched), 2 bad input, 3 I/O.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <ctype.h>
#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A source file's lines, lines[1..n] (lines[0] unused), or err when it was not read. */
typedef struct {
    char *text;
    char **lines;
    size_t n;
    char err[512];
} list_src_t;

static void list_usage(FILE *f)
{
    fprintf(f, "usage: heapsift list [options] REGEX FILE\n"
               "\n"
               "Prints the source of every function whose name matches REGEX (POSIX\n"
               "extended syntax), each line with its flat and cumulative value, like\n"
               "`go tool pprof -list REGEX`. Source files are read from the paths the\n"
               "profile names (relative ones from the current directory and its parents);\n"
               "a file that is not there gets an \"Error:\" line. Granularity is always\n"
               "lines.\n"
               "\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage or no match, 2 bad input, 3 I/O error.\n");
}

/* Reads path into its lines (bufio.Scanner's: "\n" or "\r\n" ends a line). */
static int list_read_lines(FILE *f, list_src_t *s)
{
    size_t len = 0, cap = 0;
    char *text = NULL;
    for (;;) {
        if (len + 4096 + 1 > cap) {
            char *t = realloc(text, cap = (cap + 4096) * 2);
            if (!t)
                goto nomem;
            text = t;
        }
        size_t got = fread(text + len, 1, cap - len - 1, f);
        len += got;
        if (got == 0)
            break;
    }
    text[len] = '\0';
    size_t n = 1;
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    if (!(s->lines = calloc(n + 1, sizeof(char *))))
        goto nomem;
    s->text = text;
    for (char *p = text; p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        char *end = nl ? nl : text + len;
        if (end > p && end[-1] == '\r')
            end[-1] = '\0';
        *end = '\0';
        s->lines[++s->n] = p;
        p = end + 1;
    }
    return 0;
nomem:
    free(text);
    return -ENOMEM;
}

/* pprof's openSourceFile with the current directory as the search path. */
static FILE *list_open(const char *path, char *err, size_t errlen)
{
    char cwd[4096], buf[8192];
    if (!getcwd(cwd, sizeof(cwd)))
        strcpy(cwd, ".");
    const char *base = strrchr(cwd, '/');
    base = base && base[1] ? base + 1 : cwd;
    snprintf(buf, sizeof(buf), "/%s/", base);
    const char *rel = path, *hit = strstr(path, buf);
    if (hit)
        rel = hit + strlen(buf);
    if (rel[0] == '/') {
        FILE *f = fopen(rel, "r");
        if (!f) {
            char why[128]; /* Go's error text: lower case */
            snprintf(why, sizeof(why), "%s", strerror(errno));
            why[0] = (char)tolower((unsigned char)why[0]);
            snprintf(err, errlen, "open %s: %s", rel, why);
        }
        return f;
    }
    char dir[4096];
    snprintf(dir, sizeof(dir), "%s", cwd);
    for (;;) {
        snprintf(buf, sizeof(buf), "%s/%s", strcmp(dir, "/") ? dir : "", rel);
        FILE *f = fopen(buf, "r");
        if (f)
            return f;
        char *slash = strrchr(dir, '/');
        if (!slash || strcmp(dir, "/") == 0)
            break;
        if (slash == dir)
            strcpy(dir, "/");
        else
            *slash = '\0';
    }
    /* pprof gives up here; the path as the profile has it may still be there (a
     * directory above happens to share the current directory's name). */
    FILE *f = rel != path && path[0] == '/' ? fopen(path, "r") : NULL;
    if (!f)
        snprintf(err, errlen, "could not find file %s on path %s", rel, cwd);
    return f;
}

static void list_src_load(const char *path, list_src_t *s)
{
    memset(s, 0, sizeof(*s));
    FILE *f = list_open(path, s->err, sizeof(s->err));
    if (!f)
        return;
    if (list_read_lines(f, s))
        snprintf(s->err, sizeof(s->err), "%s: %s", path, strerror(ENOMEM));
    fclose(f);
}

static void list_src_free(list_src_t *s)
{
    free(s->text);
    free(s->lines);
}

static void list_value(char *out, size_t len, const hs_report_t *r, int64_t v, const char *ou)
{
    if (v == 0)
        snprintf(out, len, ".");
    else
        hs_report_label(out, len, v, r->sample_unit, ou);
}

/* One ROUTINE section: function fn in file, from the nodes nodes[0..n). */
static void list_section(const hs_report_t *r, const uint32_t *nodes, size_t n, const char *ou,
                         FILE *f)
{
    const hs_rnode_t *first = &r->nodes[nodes[0]];
    int64_t flat = 0, cum = 0, start = first->start_line ? first->start_line : first->lineno - 5;
    int64_t end = first->lineno + 5;
    for (size_t i = 0; i < n; i++) {
        const hs_rnode_t *nd = &r->nodes[nodes[i]];
        int64_t ns = nd->start_line ? nd->start_line : nd->lineno - 5;
        flat += nd->flat;
        cum += nd->cum;
        if (ns < start)
            start = ns;
        else if (nd->lineno + 5 > end)
            end = nd->lineno + 5;
    }
    char a[64], b[64], pct[32];
    hs_report_label(a, sizeof(a), flat, r->sample_unit, ou);
    hs_report_label(b, sizeof(b), cum, r->sample_unit, ou);
    hs_report_percent(pct, sizeof(pct), cum, r->total);
    fprintf(f, "ROUTINE ======================== %s in %s\n", first->fname, first->file);
    fprintf(f, "%10s %10s (flat, cum) %s of Total\n", a, b, pct);
    list_src_t src;
    list_src_load(first->file, &src);
    if (src.err[0]) {
        fprintf(f, " Error: %s\n", src.err);
        return;
    }
    for (int64_t ln = start < 1 ? 1 : start; ln <= end && (size_t)ln <= src.n; ln++) {
        int64_t lf = 0, lc = 0;
        for (size_t i = 0; i < n; i++) {
            if (r->nodes[nodes[i]].lineno == ln) {
                lf += r->nodes[nodes[i]].flat;
                lc += r->nodes[nodes[i]].cum;
            }
        }
        list_value(a, sizeof(a), r, lf, ou);
        list_value(b, sizeof(b), r, lc, ou);
        fprintf(f, "%10s %10s %6lld:%s\n", a, b, (long long)ln, src.lines[ln]);
    }
    list_src_free(&src);
}

/* Orders node indices by function name, then file, then index. */
static int list_cmp(const void *x, const void *y, void *arg)
{
    const hs_report_t *r = arg;
    const hs_rnode_t *a = &r->nodes[*(const uint32_t *)x], *b = &r->nodes[*(const uint32_t *)y];
    int c = strcmp(a->fname, b->fname);
    if (!c)
        c = strcmp(a->file, b->file);
    return c ? c
             : (*(const uint32_t *)x > *(const uint32_t *)y) -
                   (*(const uint32_t *)x < *(const uint32_t *)y);
}

int hs_list_print(const hs_report_t *r, const char *unit, const regex_t *re, FILE *f,
                  size_t *matched)
{
    uint32_t *idx = malloc((r->nnodes + 1) * sizeof(*idx));
    if (!idx)
        return -ENOMEM;
    size_t n = 0;
    for (size_t i = 0; i < r->nnodes; i++)
        if ((r->nodes[i].flat || r->nodes[i].cum) &&
            regexec(re, r->nodes[i].fname, 0, NULL, 0) == 0)
            idx[n++] = (uint32_t)i;
    qsort_r(idx, n, sizeof(*idx), list_cmp, (void *)r);
    const char *ou = unit, *fn = NULL;
    char total[64];
    hs_report_label(total, sizeof(total), r->total, r->sample_unit, ou);
    if (n)
        fprintf(f, "Total: %s\n", total);
    for (size_t i = 0; i < n;) {
        fn = r->nodes[idx[i]].fname;
        size_t j = i;
        while (j < n && strcmp(r->nodes[idx[j]].fname, fn) == 0)
            j++;
        (*matched)++;
        size_t k = i;
        while (k < j && !*r->nodes[idx[k]].file)
            k++;
        if (k == j)
            fprintf(f, "No source information for %s\n", fn);
        while (k < j) {
            size_t e = k;
            while (e < j && strcmp(r->nodes[idx[e]].file, r->nodes[idx[k]].file) == 0)
                e++;
            list_section(r, idx + k, e - k, ou, f);
            k = e;
        }
        i = j;
    }
    free(idx);
    return 0;
}

static int list_print(hs_report_t *r, const hs_viewopts_t *o, const regex_t *re, size_t *matched)
{
    return hs_list_print(r, o->unit, re, stdout, matched);
}

int hs_cmd_list(int argc, char **argv)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, 0, 2, list_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    o.r.gran = HS_GRAN_LINES;
    o.r.obj_names = true;
    return hs_view_regex_main("list", &o, list_print);
}

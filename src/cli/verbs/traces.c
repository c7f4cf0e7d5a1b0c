/*
 * `heapsift traces FILE`: every stack with its value, byte-identical to `go tool pprof
 * -traces` (samples merged and filtered like pprof, in its order; labels sorted; inlined
 * frames marked). Reads through the shared report model; prints on stdout.
 * Exit codes: 0, 1 usage, 2 bad input, 3 I/O.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/sort.h"
#include "reports/report.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char traces_sep[] =
    "-----------+-------------------------------------------------------";

static int traces_strcmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One line per label key, "%10s:  v1 v2", string labels then numeric ones, each sorted. */
static int traces_labels(const hs_report_t *r, const hs_profile_t *p, const hs_sample_t *s,
                         bool numeric)
{
    int want = numeric ? HS_LABEL_NUM : HS_LABEL_STR;
    char **lines = calloc(s->nlabels + 1, sizeof(char *));
    size_t n = 0;
    int rc = lines ? 0 : -ENOMEM;
    for (size_t i = 0; !rc && i < s->nlabels; i++) {
        const hs_label_t *l = &s->labels[i];
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++)
            seen = s->labels[j].key == l->key && hs_label_kind(&s->labels[j]) == want;
        if (seen || hs_label_kind(l) != want)
            continue;
        char *line = NULL, v[64];
        size_t len = 0;
        FILE *f = open_memstream(&line, &len);
        if (!f) {
            rc = -ENOMEM;
            break;
        }
        fprintf(f, "%10s: ", hs_profile_get_str(p, l->key));
        for (size_t j = i; j < s->nlabels; j++) {
            const hs_label_t *m = &s->labels[j];
            if (m->key != l->key || hs_label_kind(m) != want)
                continue;
            if (numeric)
                hs_report_label(v, sizeof(v), m->num, hs_report_num_unit(r, p, m->key), "auto");
            fprintf(f, " %s", numeric ? v : hs_profile_get_str(p, m->str));
        }
        fputc('\n', f);
        fclose(f);
        lines[n++] = line;
    }
    hs_sort(lines, n, sizeof(char *), traces_strcmp);
    for (size_t i = 0; i < n; i++) {
        fputs(lines[i], stdout);
        free(lines[i]);
    }
    free(lines);
    return rc;
}

static int traces_print(hs_report_t *r, const hs_viewopts_t *o)
{
    const char *unit = o->unit;
    char v[64];
    hs_report_print_header(r, unit, stdout);
    for (size_t i = 0; i < r->nsamples; i++) {
        const hs_rsample_t *s = &r->samples[i];
        puts(traces_sep);
        if (traces_labels(r, s->prof, s->src, false) || traces_labels(r, s->prof, s->src, true))
            return -ENOMEM;
        for (size_t k = 0; k < s->nframes; k++) {
            if (k == 0)
                hs_report_label(v, sizeof(v), s->value, r->sample_unit, unit);
            printf("%10s   %s%s\n", k == 0 ? v : "", r->nodes[s->frames[k]].name,
                   s->inl[k] ? " (inline)" : "");
        }
    }
    puts(traces_sep);
    return 0;
}

static void traces_usage(FILE *f)
{
    fprintf(f, "usage: heapsift traces [options] FILE\n"
               "\n"
               "Prints every stack of the profile with its value, leaf first, like\n"
               "`go tool pprof -traces`.\n"
               "\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_traces(int argc, char **argv)
{
    /* pprof's traces skip its graph's path trimming */
    static const hs_view_t v = {0, traces_usage, false, traces_print};
    return hs_view_main(argc, argv, &v);
}

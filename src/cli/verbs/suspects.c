/*
 * `heapsift suspects FILES...|DIR`: leak suspects from a series of profiles of one process
 * (the interval trigger or heapsift_dump makes them): the stacks whose live bytes keep
 * growing, ranked, with their slope, how steady the growth is and whether it is beyond
 * sampling noise. The analysis is report_suspects.c (shared with the web UI); this file
 * reads the files, prints the table or JSON on stdout. Exit codes: 0, 1 usage, 2 bad input
 * (unreadable profile, fewer than two, empty directory), 3 I/O.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/sort.h"
#include "reports/report_suspects.h"
#include "kit/viewopts.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void sus_usage(FILE *f)
{
    fprintf(f, "usage: heapsift suspects [options] FILE FILE... | DIR\n"
               "\n"
               "Leak suspects: from several profiles of one process (HEAPSIFT_INTERVAL_SECONDS\n"
               "or heapsift_dump make them; a DIR means every profile in it), the stacks whose\n"
               "live bytes keep growing. Profiles are put in time order (the time they were\n"
               "written; the given order if they have none) and stacks matched by their frames\n"
               "(names, not addresses). Per stack:\n"
               "  slope    least-squares growth per second (per profile when untimed)\n"
               "  growth   last profile minus first, and +- the 95%% sampling noise on it\n"
               "  R^2      how well a straight line fits (1: steady growth)\n"
               "  rises    steps between consecutive profiles where the value rose\n"
               "  verdict  growing (beyond sampling noise at 95%%), noise (sampling alone\n"
               "           explains it), flat, shrinking\n"
               "  unreach  of last, the objects no pointer reaches (reachable=no: only when the\n"
               "           last profile has heapsift's reachable labels, as the exit profile\n"
               "           with HEAPSIFT_LEAKS and heapsift_leak_check's have)\n"
               "Stacks with growth or a positive slope are listed, growing ones first, then by\n"
               "slope; with reachable labels, stacks with unreachable objects come first\n"
               "(most unreachable first), listed whatever their growth. Profiles of more than\n"
               "one process (a program run twice, a parent and its children, told apart by\n"
               "heapsift's start times) are analysed with a warning.\n"
               "\n"
               "  -n N                show the top N stacks (default 20)\n"
               "  --all               list every stack, flat and shrinking ones too\n"
               "  --json              the same as JSON (every frame, every value)\n");
    fputs(hs_viewopts_help, f);
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

static int sus_cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static const char *sus_verdict(const hs_suspect_t *x)
{
    hs_verdict_t v = hs_report_verdict((double)x->growth, x->var);
    if (x->growing)
        return "growing";
    if (x->growth == 0 && x->slope == 0)
        return "flat";
    return v == HS_SHRANK && x->slope < 0 ? "shrinking" : "noise";
}

static void sus_table(const hs_suspects_t *s, const hs_viewopts_t *o)
{
    const char *u = s->rep.sample_unit;
    char slope[64], growth[64], noise[64], last[64], r2[16], rises[32];
    char span[64];
    if (s->timed)
        snprintf(span, sizeof(span), "over %.2fs", s->t[s->nprofiles - 1]);
    else
        snprintf(span, sizeof(span), "(untimed: in the order given, slope per profile)");
    fprintf(stdout,
            "Leak suspects: %zu profiles %s, %s; %zu of %zu stacks grow beyond sampling noise",
            s->nprofiles, span, s->rep.sample_type, s->ngrowing, s->n);
    if (s->reach)
        fprintf(stdout, "; %zu hold objects no pointer reaches (reachable=no)", s->nunreach);
    fprintf(stdout, "\n%12s %11s %10s %10s %6s %7s  %-9s ", "slope", "growth", "+-noise", "last",
            "R^2", "rises", "verdict");
    if (s->reach)
        fprintf(stdout, "%10s ", "unreach");
    fprintf(stdout, "%s\n", "stack (leaf first)");
    long shown = 0, max = o->count ? o->count : 20;
    for (size_t i = 0; i < s->n && shown < max; i++) {
        const hs_suspect_t *x = &s->s[i];
        if (!o->all && x->growth <= 0 && x->slope <= 0 && x->unreach <= 0)
            continue;
        hs_report_flabel(slope, sizeof(slope) - 10, x->slope, u, "minimum");
        strcat(slope, s->timed ? "/s" : "/prof");
        hs_report_label(growth + 1, sizeof(growth) - 1, x->growth, u, "minimum");
        growth[0] = '+';
        hs_report_flabel(noise, sizeof(noise), 1.96 * sqrt(x->var), u, "minimum");
        hs_report_label(last, sizeof(last), x->last, u, "minimum");
        snprintf(r2, sizeof(r2), isnan(x->r2) ? "-" : "%.2f", x->r2);
        snprintf(rises, sizeof(rises), "%zu/%zu", x->rises, s->nprofiles - 1);
        fprintf(stdout, "%12s %11s %10s %10s %6s %7s  %-9s ", slope,
                x->growth > 0 ? growth : growth + 1, noise, last, r2, rises, sus_verdict(x));
        if (s->reach) {
            char un[64];
            hs_report_label(un, sizeof(un), x->unreach, u, "minimum");
            fprintf(stdout, "%10s ", x->unreach > 0 ? un : "-");
        }
        hs_view_print_stack(&s->rep, x->frames, x->nframes, 6, stdout);
        fputc('\n', stdout);
        shown++;
    }
    if (shown == 0)
        fprintf(stdout, "(no stack grew)\n");
}

static void sus_json(const hs_suspects_t *s, const hs_viewopts_t *o, char **files)
{
    printf("{\"sample_type\": ");
    hs_view_json_str(s->rep.sample_type, stdout);
    printf(", \"unit\": ");
    hs_view_json_str(s->rep.sample_unit, stdout);
    printf(", \"timed\": %s, \"reachable_labels\": %s, \"profiles\": [",
           s->timed ? "true" : "false", s->reach ? "true" : "false");
    for (size_t i = 0; i < s->nprofiles; i++) {
        printf("%s{\"file\": ", i ? ", " : "");
        hs_view_json_str(files[s->order[i]], stdout);
        printf(", \"t\": %.9g}", s->t[i]);
    }
    printf("],\n \"stacks\": [");
    long shown = 0, max = o->count ? o->count : (long)s->n;
    for (size_t i = 0; i < s->n && shown < max; i++) {
        const hs_suspect_t *x = &s->s[i];
        if (!o->all && x->growth <= 0 && x->slope <= 0 && x->unreach <= 0)
            continue;
        printf("%s\n  {\"verdict\": \"%s\", \"growing\": %s, \"slope\": %.6g, \"r2\": ",
               shown++ ? "," : "", sus_verdict(x), x->growing ? "true" : "false", x->slope);
        printf(isnan(x->r2) ? "null" : "%.4f", x->r2);
        printf(", \"rises\": %zu, \"first\": %lld, \"last\": %lld, \"growth\": %lld, "
               "\"noise\": %.6g, \"values\": ",
               x->rises, (long long)x->first, (long long)x->last, (long long)x->growth,
               1.96 * sqrt(x->var));
        hs_view_json_ints(x->values, s->nprofiles, stdout);
        if (s->reach)
            printf(", \"unreachable\": %lld", (long long)x->unreach);
        printf(", \"frames\": ");
        hs_view_json_frames(&s->rep, x->frames, x->nframes, stdout);
        printf("}");
    }
    printf("\n]}\n");
}

/* The file list: the arguments, or a directory's profiles. */
static int sus_files(const hs_viewopts_t *o, char ***files, long *n)
{
    struct stat st;
    if (o->nfiles == 1 && stat(o->files[0], &st) != 0) {
        hs_cli_error("%s: %s", o->files[0], strerror(errno));
        return 3;
    }
    if (o->nfiles == 1 && S_ISDIR(st.st_mode)) {
        if ((*n = hs_view_profile_dir(o->files[0], sus_cmp_name, files)) < 0)
            return 3;
        if (*n == 0) {
            hs_cli_error("%s: no profiles in this directory", o->files[0]);
            return 2;
        }
    } else {
        if (!(*files = calloc((size_t)o->nfiles, sizeof(char *))))
            goto nomem;
        for (*n = 0; *n < o->nfiles; ++*n)
            if (!((*files)[*n] = strdup(o->files[*n])))
                goto nomem;
    }
    if (*n < 2) {
        hs_cli_error("suspects: need at least two profiles of the process, got %ld (%s)", *n,
                     (*files)[0]);
        return 2;
    }
    return -1;
nomem:
    hs_cli_error("suspects: %s", strerror(ENOMEM));
    return 3;
}

/* Warns of a series that mixes processes (a directory holding the dumps of a program run
 * twice, or of a parent and its children): slopes across them compare runs, not growth
 * within one. The warning names how many profiles each process has and one file of
 * each, to pick them by; the analysis goes on, as the web UI's does. */
static void sus_one_process(char **files, hs_profile_t **p, long n)
{
    enum { SUS_SHOWN = 8 };
    long first[SUS_SHOWN], count[SUS_SHOWN];
    int64_t start[SUS_SHOWN];
    int groups = 0;
    bool more = false;
    for (long i = 0; i < n; i++) {
        int64_t s = hs_suspects_process_start(p[i]);
        int g = 0;
        while (g < groups && start[g] != s)
            g++;
        if (s == 0)
            continue; /* unknown: taken as the series' */
        if (g < groups)
            count[g]++;
        else if (groups < SUS_SHOWN)
            start[groups] = s, first[groups] = i, count[groups++] = 1;
        else
            more = true;
    }
    if (groups <= 1)
        return;
    char list[1024];
    size_t len = 0;
    for (int g = 0; g < groups && len < sizeof(list); g++)
        len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%ld like %s", g ? ", " : "",
                                count[g], files[first[g]]);
    fprintf(stderr,
            "heapsift: warning: suspects: these profiles come from %s%d processes (%s%s): "
            "slopes across them compare runs; give the files of one process for its growth\n",
            more ? "more than " : "", groups, list, more ? ", ..." : "");
}

static int sus_run(const hs_viewopts_t *o, char **files, hs_profile_t **p, long n)
{
    int rc;
    for (long i = 0; i < n; i++)
        if ((rc = hs_view_read(o, files[i], &p[i])) != HS_VIEW_CONTINUE)
            return rc;
    sus_one_process(files, p, n);
    char err[512];
    hs_suspects_t s;
    rc = hs_suspects_find(&s, (const hs_profile_t *const *)p, (size_t)n, &o->r, err, sizeof(err));
    size_t bad = 0;
    if (rc && sscanf(err, "profile %zu has other sample types", &bad) == 1 && bad >= 1 &&
        bad <= (size_t)n) {
        hs_cli_error("suspects: %s has other sample types than %s", files[bad - 1], files[0]);
        hs_suspects_free(&s);
        return 2;
    }
    if (rc) {
        hs_cli_error("suspects: %s", err);
        hs_suspects_free(&s);
        return rc == -ENOMEM ? 3 : rc == -EPROTO ? 2 : 1;
    }
    if (o->json)
        sus_json(&s, o, files);
    else
        sus_table(&s, o);
    hs_suspects_free(&s);
    return hs_view_done(0, files[0]);
}

int hs_cmd_suspects(int argc, char **argv)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, HS_VO_COUNT | HS_VO_ALL | HS_VO_FILES | HS_VO_JSON,
                               1, sus_usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    if ((rc = hs_view_no_tags(&o)) != HS_VIEW_CONTINUE) {
        free(o.files);
        return rc;
    }
    char **files = NULL;
    long n = 0;
    hs_profile_t **p = NULL;
    if ((rc = sus_files(&o, &files, &n)) < 0) {
        if ((p = calloc((size_t)n, sizeof(*p)))) {
            rc = sus_run(&o, files, p, n);
        } else {
            hs_cli_error("suspects: %s", strerror(ENOMEM));
            rc = 3;
        }
    }
    for (long i = 0; i < n; i++) {
        if (p)
            hs_profile_free(p[i]);
        if (files)
            free(files[i]);
    }
    free(p);
    free(files);
    free(o.files);
    return rc;
}

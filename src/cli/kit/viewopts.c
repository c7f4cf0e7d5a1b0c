/*
 * The views' shared command line (viewopts.h): option parsing, reading profiles with the
 * CLI's error messages and exit codes, and building the report. Prints only errors (on
 * stderr) and --help (on stdout).
 */
#define _GNU_SOURCE
#include "viewopts.h"
#include "cli.h"
#include "outfile.h"
#include "readers/readers.h"
#include "base/sort.h"
#include "symbolize/symbolize.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char hs_viewopts_help[] =
    "  --sample-type NAME  inuse_space, inuse_objects, alloc_space, alloc_objects (or an\n"
    "                      index); default: the profile's default, else the last one\n"
    "  --unit UNIT         B, kB, MB, GB, TB, PB or auto (pprof's choice, the default)\n"
    "  --granularity G     functions (default), lines or addresses\n"
    "  --focus REGEX       keep only samples with a frame matching REGEX (function name,\n"
    "                      source file or mapping file; POSIX extended syntax)\n"
    "  --ignore REGEX      drop samples with a frame matching REGEX\n"
    "  --hide REGEX        remove frames matching REGEX from the stacks\n"
    "  --show REGEX        keep only the frames matching REGEX in the stacks\n"
    "  --tagfocus F        keep only samples whose labels match F: [KEY=]REGEX[,REGEX]\n"
    "                      (string labels), or [KEY=]N, N:, :N, LO:HI with units such as\n"
    "                      64kb or 1ms (numeric labels), like pprof -tagfocus\n"
    "  --tagignore F       drop samples whose labels match F\n"
    "  --tags              list the label keys and values with their totals instead\n"
    "  --comments          every comment of the profile in the header (heapsift's\n"
    "                      accounting lines too: heapsift stats reads them)\n"
    "  --symbolize MODE    auto (default: name unsymbolized frames from the binaries the\n"
    "                      mappings name) or none\n"
    "  --no-drop-frames    keep the frames the profile's drop_frames expression prunes (the\n"
    "                      allocator's own: malloc, operator new, std::__new_allocator,\n"
    "                      alloc::raw_vec, ...), so a stack's leaf is the allocator again\n"
    "  --help              show this help\n";

bool hs_view_profile_name(const char *n)
{
    static const char *const suffixes[] = {".pb.gz", ".pb", ".pprof", ".prof",
                                           ".heap",  ".gz", ".spool"};
    size_t len = strlen(n);
    if (n[0] == '.' || strstr(n, ".tmp."))
        return false;
    for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
        size_t sl = strlen(suffixes[i]);
        if (len > sl && strcmp(n + len - sl, suffixes[i]) == 0)
            return true;
    }
    return false;
}

long hs_view_profile_dir(const char *dir, int (*cmp)(const void *, const void *), char ***out)
{
    DIR *d = opendir(dir);
    if (!d) {
        hs_cli_error("%s: %s", dir, strerror(errno));
        return -1;
    }
    size_t n = 0, cap = 16, empty = 0;
    char **v = malloc(cap * sizeof(char *));
    struct dirent *e;
    while (v && (e = readdir(d))) {
        struct stat st;
        char *path = NULL;
        if (!hs_view_profile_name(e->d_name) || asprintf(&path, "%s/%s", dir, e->d_name) < 0)
            continue;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0) {
            empty += st.st_size == 0 && S_ISREG(st.st_mode);
            free(path);
            continue;
        }
        if (n == cap) {
            char **a = realloc(v, (cap *= 2) * sizeof(char *));
            if (!a) {
                free(path);
                break;
            }
            v = a;
        }
        v[n++] = path;
    }
    closedir(d);
    if (!v) {
        hs_cli_error("%s: %s", dir, strerror(ENOMEM));
        return -1;
    }
    if (empty) /* a dump being written, or one a full disk cut short */
        fprintf(stderr, "heapsift: warning: %s: %zu empty file%s skipped\n", dir, empty,
                empty == 1 ? "" : "s");
    hs_sort(v, n, sizeof(char *), cmp);
    *out = v;
    return (long)n;
}

/* The value of option name at argv[*i] ("--opt V" or "--opt=V"), advancing *i; NULL if
 * argv[*i] is not that option. *missing is set when the value is absent. */
const char *hs_view_optval(int argc, char **argv, int *i, const char *name, bool *missing)
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

/* vo_valued: argv[*i] is none of the valued options. */
#define VO_NOT_MINE (-2)

static int vo_bad(const hs_viewopts_t *o, const char *what, const char *a)
{
    hs_cli_error("%s: %s '%s' (see heapsift %s --help)", o->verb, what, a, o->verb);
    return 1;
}

static int vo_granularity(hs_viewopts_t *o, const char *v)
{
    static const char *names[] = {"functions", "lines", "addresses"};
    for (int g = 0; g < 3; g++) {
        if (strcmp(v, names[g]) == 0) {
            o->r.gran = (hs_gran_t)g;
            return HS_VIEW_CONTINUE;
        }
    }
    return vo_bad(o, "unknown granularity (functions, lines, addresses)", v);
}

/* One option with a value; returns -2 when argv[*i] is none of them. */
static int vo_valued(int argc, char **argv, int *i, hs_viewopts_t *o, unsigned flags)
{
    bool missing = false;
    const char *v;
    char *end;
    if ((v = hs_view_optval(argc, argv, i, "--sample-type", &missing)))
        o->r.sample_type = v;
    else if ((v = hs_view_optval(argc, argv, i, "--unit", &missing))) {
        if (!(o->unit = hs_report_unit_arg(v)))
            return vo_bad(o, "unknown unit (B, kB, MB, GB, TB, PB or auto)", v);
    } else if ((v = hs_view_optval(argc, argv, i, "--granularity", &missing)))
        return vo_granularity(o, v);
    else if ((v = hs_view_optval(argc, argv, i, "--symbolize", &missing))) {
        if (strcmp(v, "none") != 0 && strcmp(v, "auto") != 0)
            return vo_bad(o, "unknown symbolize mode (auto, none)", v);
        o->no_symbolize = strcmp(v, "none") == 0;
    } else if ((v = hs_view_optval(argc, argv, i, "--focus", &missing)))
        o->r.focus = v;
    else if ((v = hs_view_optval(argc, argv, i, "--ignore", &missing)))
        o->r.ignore = v;
    else if ((v = hs_view_optval(argc, argv, i, "--hide", &missing)))
        o->r.hide = v;
    else if ((v = hs_view_optval(argc, argv, i, "--show", &missing)))
        o->r.show = v;
    else if ((v = hs_view_optval(argc, argv, i, "--tagfocus", &missing)))
        o->r.tagfocus = v;
    else if ((v = hs_view_optval(argc, argv, i, "--tagignore", &missing)))
        o->r.tagignore = v;
    else if ((flags & HS_VO_OUT) && (v = hs_view_optval(argc, argv, i, "-o", &missing)))
        o->out = v;
    else if ((flags & HS_VO_BASE) && (v = hs_view_optval(argc, argv, i, "--base", &missing)))
        o->base = v;
    else if ((flags & HS_VO_COUNT) && (v = hs_view_optval(argc, argv, i, "-n", &missing))) {
        o->count = strtol(v, &end, 10);
        if (!*v || *end || o->count < 0)
            return vo_bad(o, "-n wants a count, not", v);
    } else if (missing)
        return vo_bad(o, "missing value for", argv[*i]);
    else
        return VO_NOT_MINE;
    return HS_VIEW_CONTINUE;
}

static int vo_parse(int argc, char **argv, hs_viewopts_t *o, unsigned flags, int npos,
                    void (*usage)(FILE *))
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int rc;
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            usage(stdout);
            return 0;
        } else if ((flags & HS_VO_CUM) && strcmp(a, "--cum") == 0) {
            o->cum = true;
        } else if ((flags & HS_VO_CI) && strcmp(a, "--ci") == 0) {
            o->ci = true;
        } else if ((flags & HS_VO_ALL) && strcmp(a, "--all") == 0) {
            o->all = true;
        } else if ((flags & HS_VO_JSON) && strcmp(a, "--json") == 0) {
            o->json = true;
        } else if (strcmp(a, "--tags") == 0) {
            o->tags = true;
        } else if (strcmp(a, "--comments") == 0) {
            o->r.all_comments = true;
        } else if (strcmp(a, "--no-drop-frames") == 0) {
            o->r.no_drop_frames = true;
        } else if ((rc = vo_valued(argc, argv, &i, o, flags)) != VO_NOT_MINE) {
            if (rc != HS_VIEW_CONTINUE)
                return rc;
        } else if (a[0] == '-' && a[1] != '\0') {
            return vo_bad(o, "unknown option", a);
        } else if (flags & HS_VO_FILES) {
            o->files[o->nfiles++] = a;
            if (o->npos < 2)
                o->pos[o->npos++] = a;
        } else if (o->npos == npos) {
            return vo_bad(o, "unexpected argument", a);
        } else {
            o->pos[o->npos++] = a;
        }
    }
    if (o->npos < npos || ((flags & HS_VO_FILES) && o->nfiles < npos)) {
        hs_cli_error("%s: missing %s (see heapsift %s --help)", o->verb,
                     npos - o->npos > 1 ? "arguments" : "argument", o->verb);
        return 1;
    }
    return HS_VIEW_CONTINUE;
}

int hs_viewopts_parse(int argc, char **argv, hs_viewopts_t *o, unsigned flags, int npos,
                      void (*usage)(FILE *))
{
    memset(o, 0, sizeof(*o));
    o->verb = argv[0];
    o->unit = "minimum";
    o->r.trim_paths = true;
    if ((flags & HS_VO_FILES) && !(o->files = calloc((size_t)argc, sizeof(char *)))) {
        hs_cli_error("%s: %s", o->verb, strerror(ENOMEM));
        return 3;
    }
    int rc = vo_parse(argc, argv, o, flags, npos, usage);
    if (rc != HS_VIEW_CONTINUE) {
        free(o->files);
        o->files = NULL;
    }
    return rc;
}

int hs_view_no_tags(const hs_viewopts_t *o)
{
    if (!o->tags)
        return HS_VIEW_CONTINUE;
    hs_cli_error("%s: --tags lists labels of its own: use heapsift top --tags", o->verb);
    return 1;
}

int hs_view_read(const hs_viewopts_t *o, const char *path, hs_profile_t **out)
{
    char err[512];
    hs_cli_heap_for(path);
    int rc = hs_profile_read_any(path, out, err, sizeof(err));
    if (rc) {
        hs_cli_error("%s: %s", path, err);
        return rc == -EINVAL ? 2 : 3;
    }
    bool unnamed = false;
    if (o->no_symbolize)
        return HS_VIEW_CONTINUE;
    for (size_t i = 0; i < (*out)->nlocations && !unnamed; i++)
        unnamed = (*out)->locations[i].nlines == 0 && (*out)->locations[i].address != 0;
    if (unnamed && hs_profile_symbolize(*out, true) < 0) {
        hs_cli_error("%s: %s", path, strerror(ENOMEM));
        hs_profile_free(*out);
        *out = NULL;
        return 3;
    }
    return HS_VIEW_CONTINUE;
}

int hs_view_build(hs_report_t *r, const hs_profile_t *const *profs, const int *signs, size_t n,
                  const hs_viewopts_t *o, const char *path)
{
    char err[512];
    int rc = hs_report_build(r, profs, signs, n, &o->r, err, sizeof(err));
    if (rc) {
        hs_cli_error("%s: %s", path, err);
        hs_report_free(r);
        return rc == -ENOMEM ? 3 : rc == -EPROTO ? 2 : 1;
    }
    if (o->tags) { /* pprof -tags: the listing replaces the verb's own output */
        rc = hs_view_done(hs_report_print_tags(r, o->unit, stdout), path);
        hs_report_free(r);
        return rc;
    }
    return HS_VIEW_CONTINUE;
}

int hs_view_done(int print_failed, const char *path)
{
    if (print_failed) {
        hs_cli_error("%s: %s", path, strerror(ENOMEM));
        return 3;
    }
    return fflush(stdout) == 0 ? 0 : 3;
}

void hs_view_print_stack(const hs_report_t *r, const uint32_t *frames, size_t n, size_t max,
                         FILE *f)
{
    for (size_t k = 0; k < n && k < max; k++)
        fprintf(f, "%s%s", k ? " < " : "", r->nodes[frames[k]].name);
    if (n > max)
        fprintf(f, " < ... (%zu more)", n - max);
}

/* The profile of a verb that ends the process when it returns (hs_view_main's): its
 * memory goes with the process. Freeing one of 35,008 stacks block by block took 25M
 * instructions, 5% of `heapsift top` on it (bench/top_jeprof.sh). Freed under
 * AddressSanitizer, whose leak check runs at exit. */
static void view_release_at_exit(hs_profile_t *p)
{
#if defined(__SANITIZE_ADDRESS__)
    hs_profile_free(p);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
    hs_profile_free(p);
#else
    (void)p;
#endif
#else
    (void)p;
#endif
}

int hs_view_main(int argc, char **argv, const hs_view_t *v)
{
    hs_viewopts_t o;
    int rc = hs_viewopts_parse(argc, argv, &o, v->flags, 1, v->usage);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    if (!v->trim_paths)
        o.r.trim_paths = false;
    hs_profile_t *p = NULL;
    if ((rc = hs_view_read(&o, o.pos[0], &p)) != HS_VIEW_CONTINUE)
        return rc;
    hs_report_t r;
    int sign = 1;
    rc = hs_view_build(&r, (const hs_profile_t *const *)&p, &sign, 1, &o, o.pos[0]);
    if (rc == HS_VIEW_CONTINUE) {
        rc = hs_view_done(v->print(&r, &o), o.pos[0]);
        hs_report_free(&r);
    }
    view_release_at_exit(p);
    return rc;
}

static int view_regex_run(hs_profile_t *p, hs_viewopts_t *o, const regex_t *re,
                          hs_view_regex_print_t *print)
{
    hs_report_t r;
    int sign = 1, rc = hs_view_build(&r, (const hs_profile_t *const *)&p, &sign, 1, o, o->pos[1]);
    if (rc >= 0)
        return rc;
    size_t matched = 0;
    if (print(&r, o, re, &matched)) {
        hs_cli_error("%s: %s", o->pos[1], strerror(ENOMEM));
        rc = 3;
    } else if (fflush(stdout) != 0) {
        rc = 3;
    } else if (matched == 0) {
        hs_cli_error("no matches found for regexp: %s", o->pos[0]);
        rc = 1;
    } else {
        rc = 0;
    }
    hs_report_free(&r);
    return rc;
}

int hs_view_regex_main(const char *verb, hs_viewopts_t *o, hs_view_regex_print_t *print)
{
    regex_t re;
    int rc = regcomp(&re, o->pos[0], REG_EXTENDED | REG_NOSUB);
    if (rc != 0) {
        char msg[128];
        regerror(rc, &re, msg, sizeof(msg));
        hs_cli_error("%s: bad regular expression '%s': %s", verb, o->pos[0], msg);
        return 1;
    }
    hs_profile_t *p = NULL;
    if ((rc = hs_view_read(o, o->pos[1], &p)) < 0) {
        rc = view_regex_run(p, o, &re, print);
        hs_profile_free(p);
    }
    regfree(&re);
    return rc;
}

int hs_view_base_main(hs_viewopts_t *o, hs_view_out_t *out, void *arg)
{
    hs_profile_t *p[2] = {NULL, NULL};
    int rc = hs_view_read(o, o->pos[0], &p[0]);
    if (rc != HS_VIEW_CONTINUE)
        return rc;
    if (o->base && (rc = hs_view_read(o, o->base, &p[1])) != HS_VIEW_CONTINUE) {
        hs_profile_free(p[0]);
        return rc;
    }
    hs_report_t r;
    int signs[2] = {1, -1};
    rc = hs_view_build(&r, (const hs_profile_t *const *)p, signs, o->base ? 2 : 1, o, o->pos[0]);
    if (rc == HS_VIEW_CONTINUE) {
        rc = out(&r, o, arg);
        hs_report_free(&r);
    }
    hs_profile_free(p[0]);
    hs_profile_free(p[1]);
    return rc;
}

/*
 * What the profile views (top, traces, peek, tree, collapsed, flamegraph, diff) share on
 * the command line: one option parser for --sample-type, --unit, --granularity,
 * --focus/--ignore/--hide and the per-verb extras, reading the profile files through
 * hs_profile_read_any, and building the report with CLI error reporting; and the main of
 * the views that print one profile's report (hs_view_main). Every function returning int
 * returns HS_VIEW_CONTINUE to go on, else the exit status (0, 1 usage, 2 bad input, 3 I/O).
 */
#ifndef HS_VIEWOPTS_H
#define HS_VIEWOPTS_H

#include "model/profile.h"
#include "json.h"
#include "reports/report.h"

#include "base/buf.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>

/* "No exit status yet: carry on", from every step below. */
#define HS_VIEW_CONTINUE (-1)

enum {
    HS_VO_COUNT = 1 << 0, /* -n N */
    HS_VO_CUM = 1 << 1,   /* --cum */
    HS_VO_CI = 1 << 2,    /* --ci */
    HS_VO_OUT = 1 << 3,   /* -o FILE */
    HS_VO_BASE = 1 << 4,  /* --base FILE */
    HS_VO_ALL = 1 << 5,   /* --all */
    HS_VO_FILES = 1 << 6, /* any number (>= npos) of positional arguments, in files */
    HS_VO_JSON = 1 << 7,  /* --json */
};

typedef struct {
    const char *verb;
    const char *pos[2]; /* positional arguments */
    int npos;
    const char **files; /* HS_VO_FILES: every positional argument (malloc'ed; free it) */
    int nfiles;
    hs_report_opts_t r;
    const char *unit; /* pprof unit name; "minimum" by default */
    long count;
    bool cum, ci, all, json;
    bool tags;         /* --tags: print the label listing instead of the view */
    bool no_symbolize; /* --symbolize=none */
    const char *out, *base;
} hs_viewopts_t;

/* The option lines every view's --help shows. */
extern const char hs_viewopts_help[];

/* Whether a directory entry's name is a profile's (.pb.gz, .pb, .pprof, .prof, .heap, .gz,
 * or .spool: a HEAPSIFT_SPOOL spool), neither a dot file nor a half-written ".tmp." one:
 * what suspects and web read of a DIR. */
bool hs_view_profile_name(const char *name);

/* Every non-empty regular file of dir with a profile's name, sorted by cmp over the
 * names' pointers (char *const *), in *out (malloc'ed, with malloc'ed names); empty ones
 * (a dump being written, or one a full disk cut short) are skipped with one warning.
 * Returns the count, or -1 after an error line naming dir. What suspects and diagnose
 * read of a DIR. */
long hs_view_profile_dir(const char *dir, int (*cmp)(const void *, const void *), char ***out);

/* The value of option name at argv[*i] ("--opt V" or "--opt=V"), advancing *i past it;
 * NULL if argv[*i] is not that option, with *missing set when its value is absent. */
const char *hs_view_optval(int argc, char **argv, int *i, const char *name, bool *missing);

/* Parses argv (argv[0] is the verb) into o: flags selects the extras, npos is the number
 * of positional arguments required. usage prints the verb's help. */
int hs_viewopts_parse(int argc, char **argv, hs_viewopts_t *o, unsigned flags, int npos,
                      void (*usage)(FILE *));

/* For the verbs that are no pprof view (suspects, lifetimes, check): --tags is refused
 * (returns 1 after the error) rather than ignored; else -1. */
int hs_view_no_tags(const hs_viewopts_t *o);

/* Reads the profile at path (any format), symbolizing it when it has unnamed locations
 * and o does not say --symbolize=none. */
int hs_view_read(const hs_viewopts_t *o, const char *path, hs_profile_t **out);
/* A view's exit status once it printed: print_failed (out of memory) or a stdout that
 * cannot be flushed is an I/O error (3, reported naming path), else 0. */
int hs_view_done(int print_failed, const char *path);

/* Builds the report over n profiles (see hs_report_build); path names them in errors.
 * With --tags it prints pprof's -tags listing, frees the report and returns the status. */
int hs_view_build(hs_report_t *r, const hs_profile_t *const *profs, const int *signs, size_t n,
                  const hs_viewopts_t *o, const char *path);

/* The verbs of the form VERB REGEX FILE (peek, list), o parsed: compiles o->pos[0], reads
 * o->pos[1], builds the report and calls print, which sets *matched and returns 0 or
 * -ENOMEM. The exit status: 1 for a bad regex or no match (pprof's message), 3 for an I/O
 * error, else 0. */
typedef int hs_view_regex_print_t(hs_report_t *r, const hs_viewopts_t *o, const regex_t *re,
                                  size_t *matched);
int hs_view_regex_main(const char *verb, hs_viewopts_t *o, hs_view_regex_print_t *print);

/* The views of FILE and, with --base, its difference from BASE (flamegraph, graph), o
 * parsed: reads both, builds the report (BASE subtracted) and returns out's status. */
typedef int hs_view_out_t(hs_report_t *r, const hs_viewopts_t *o, void *arg);
int hs_view_base_main(hs_viewopts_t *o, hs_view_out_t *out, void *arg);

/* Writes "leaf < caller < ..." of the report nodes frames[0..n), at most max frames and
 * " < ... (N more)", on f. */
void hs_view_print_stack(const hs_report_t *r, const uint32_t *frames, size_t n, size_t max,
                         FILE *f);

/* A view of one profile (top, traces, tree, collapsed): its extras (HS_VO_*), its help,
 * whether pprof's path trimming applies, and its printer, which returns 0 or -ENOMEM. */
typedef struct {
    unsigned flags;
    void (*usage)(FILE *f);
    bool trim_paths;
    int (*print)(hs_report_t *r, const hs_viewopts_t *o);
} hs_view_t;
/* Parses argv, reads FILE, builds the report and prints it with v: the exit status. */
int hs_view_main(int argc, char **argv, const hs_view_t *v);

/* Runs Graphviz's `dot -Tsvg` on DOT text (dotrun.c): 0 with the SVG appended to svg,
 * else -ENOENT (dot is not installed) or -EIO / -ENOMEM, with a message in err. */
int hs_cli_dot_svg(const char *text, size_t len, hs_buf_t *svg, char *err, size_t errlen);

#endif

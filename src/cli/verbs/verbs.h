/*
 * The verbs that read profiles and print or write them (one file each in src/cli/verbs):
 * the views (top, traces, peek, list, tree, collapsed, flamegraph, graph, diff), the
 * files (convert, merge, symbolize, recover) and the checks (stats, suspects, diagnose,
 * check, lifetimes). argv[0] is the verb name; each returns the process exit status. Also the
 * printers other folders reuse: web/ prints top, list and peek listings, run/ reads a
 * rescue spool. Nothing here knows web/, run/ or inject/.
 */
#ifndef HS_VERBS_H
#define HS_VERBS_H

#include "kit/viewopts.h"
#include "model/profile.h"
#include "reports/report.h"

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

int hs_cmd_top(int argc, char **argv);
int hs_cmd_traces(int argc, char **argv);
int hs_cmd_peek(int argc, char **argv);
int hs_cmd_tree(int argc, char **argv);
int hs_cmd_list(int argc, char **argv);
int hs_cmd_collapsed(int argc, char **argv);
int hs_cmd_flamegraph(int argc, char **argv);
int hs_cmd_graph(int argc, char **argv);
int hs_cmd_diff(int argc, char **argv);
int hs_cmd_convert(int argc, char **argv);
int hs_cmd_merge(int argc, char **argv);
int hs_cmd_symbolize(int argc, char **argv);
int hs_cmd_recover(int argc, char **argv);
/* recover.c: reads the spool at path into *out, symbolized (quiet: no warnings). 0, or an
 * exit status after a line on stderr. */
int hs_recover_read(const char *path, bool quiet, hs_profile_t **out);
int hs_cmd_stats(int argc, char **argv);
int hs_cmd_suspects(int argc, char **argv);
int hs_cmd_diagnose(int argc, char **argv);
int hs_cmd_check(int argc, char **argv);
int hs_cmd_lifetimes(int argc, char **argv);

/* Prints a built report the way `go tool pprof -top` does (top.c), with the extra columns
 * cols (NULL-terminated list, or NULL). Returns 0 or -ENOMEM. */
int hs_top_print(hs_report_t *r, const hs_viewopts_t *o, const hs_top_column_t *cols);

/* heapsift list's listing (list.c) of the functions matching re in r (a report at line
 * granularity with obj_names), values in unit, on f; *matched gets the number of functions
 * listed. 0 or -ENOMEM. */
int hs_list_print(const hs_report_t *r, const char *unit, const regex_t *re, FILE *f,
                  size_t *matched);

/* heapsift peek's listing (peek.c): the callers and callees of the functions matching re in
 * r, as `go tool pprof -peek` prints them, nodes sorted by cum (or flat), values in unit
 * (NULL: pprof's choice), on f; with header, the profile's header and the filters first;
 * *matched gets the number of functions matched. 0 or -ENOMEM. */
int hs_peek_print(hs_report_t *r, const char *unit, bool cum, bool header,
                  const hs_report_opts_t *filters, const regex_t *re, FILE *f, size_t *matched);

#endif

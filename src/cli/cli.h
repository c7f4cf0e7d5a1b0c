/*
 * The heapsift command's verbs. main.c dispatches argv[1] to one of these; each verb owns
 * its option parsing and returns the process exit status (0 ok, 1 usage, 2 bad input,
 * 3 I/O; `run` returns the profiled program's own status, 127 when it cannot be found).
 */
#ifndef HS_CLI_H
#define HS_CLI_H

#include <stdbool.h>
#include <stddef.h>

/* argv[0] is the verb name. A verb lives in src/cli/<verb>.c; main.c lists every verb. */
int hs_cmd_run(int argc, char **argv);
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
struct hs_profile;
/* recover.c: reads the spool at path into *out, symbolized (quiet: no warnings). 0, or an
 * exit status after a line on stderr. */
int hs_recover_read(const char *path, bool quiet, struct hs_profile **out);
/* run_rescue.c: after CMD has exited, the rescue spools of the run whose report is report
 * (processes that could not write their exit profile: a sandbox's, or killed) become
 * profiles where those would have gone; each is said on stderr (unless quiet) and noted in
 * the report. Returns how many. */
int hs_run_rescue(const char *report, bool quiet);
int hs_cmd_stats(int argc, char **argv);
int hs_cmd_web(int argc, char **argv);
int hs_cmd_suspects(int argc, char **argv);
int hs_cmd_check(int argc, char **argv);
int hs_cmd_lifetimes(int argc, char **argv);
int hs_cmd_attach(int argc, char **argv);
int hs_cmd_detach(int argc, char **argv);

/* run.c's options (each sets one HEAPSIFT_* variable), shared with attach.c. */
typedef struct {
    const char *opt;   /* long option */
    int short_opt;     /* 0 if none */
    const char *env;   /* variable it sets */
    const char *fixed; /* value for flag options, NULL when it takes an argument */
    const char *help;
} hs_run_opt_t;
const hs_run_opt_t *hs_run_opts(size_t *n);
/* The index in that table of what getopt_long returned for one of its options (1000 +
 * index for a long one, the letter for a short one); the table's size when none. */
size_t hs_run_opt_index(int c);
/* Sets option i's variable in this process's environment (paths made absolute). 0 or -1
 * (said). */
int hs_run_set_option(size_t i, const char *value);
/* The library: given, else next to this executable, ../lib, or the install directory. */
const char *hs_run_find_lib(const char *given, char *out, size_t cap);
/* 0, or the exit status after saying why the directory of env's path cannot be written. */
int hs_run_check_dir(const char *env, const char *what);
/* Checks the HEAPSIFT_* variables of this environment with the library: 0, 1 (bad value,
 * said by the library) or 3. */
int hs_run_probe(const char *lib);
/* Whether path is an ELF executable with no program interpreter. */
bool hs_run_is_static(const char *path);

/* Prints "heapsift: error: <formatted>" and a newline on stderr. */
void hs_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports the option getopt_long refused, as every verb does: "VERB: unknown option
 * '--x'" (c == '?') or "VERB: missing value for '--x'" (c == ':'; the optstring must
 * start with "+:" and opterr be 0). Returns 1, the usage exit status. */
int hs_cli_bad_option(const char *verb, int c, char **argv);

#endif

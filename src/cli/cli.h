/*
 * The heapsift command's verbs. main.c dispatches argv[1] to one of these; each verb owns
 * its option parsing and returns the process exit status (0 ok, 1 usage, 2 bad input,
 * 3 I/O; `run` returns the profiled program's own status, 127 when it cannot be found).
 */
#ifndef HS_CLI_H
#define HS_CLI_H

/* argv[0] is the verb name. A verb lives in src/cli/<verb>.c; main.c lists every verb. */
int hs_cmd_run(int argc, char **argv);
int hs_cmd_top(int argc, char **argv);
int hs_cmd_traces(int argc, char **argv);
int hs_cmd_peek(int argc, char **argv);
int hs_cmd_tree(int argc, char **argv);
int hs_cmd_collapsed(int argc, char **argv);
int hs_cmd_flamegraph(int argc, char **argv);
int hs_cmd_diff(int argc, char **argv);
int hs_cmd_convert(int argc, char **argv);
int hs_cmd_merge(int argc, char **argv);
int hs_cmd_symbolize(int argc, char **argv);
int hs_cmd_stats(int argc, char **argv);
int hs_cmd_web(int argc, char **argv);
int hs_cmd_suspects(int argc, char **argv);
int hs_cmd_check(int argc, char **argv);
int hs_cmd_lifetimes(int argc, char **argv);

/* Prints "heapsift: error: <formatted>" and a newline on stderr. */
void hs_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports the option getopt_long refused, as every verb does: "VERB: unknown option
 * '--x'" (c == '?') or "VERB: missing value for '--x'" (c == ':'; the optstring must
 * start with "+:" and opterr be 0). Returns 1, the usage exit status. */
int hs_cli_bad_option(const char *verb, int c, char **argv);

#endif

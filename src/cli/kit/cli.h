/*
 * What every verb of the heapsift command shares: the error line's format and the report
 * of a refused option. Each verb owns its option parsing and returns the process exit
 * status (0 ok, 1 usage, 2 bad input, 3 I/O; `run` returns the profiled program's own
 * status, 127 when it cannot be found). The verbs themselves are declared in their
 * folders' headers (verbs/verbs.h, run/run.h, web/web.h, inject/attach.h); main/main.c
 * dispatches argv[1] to one of them.
 */
#ifndef HS_CLI_H
#define HS_CLI_H

/* Prints "heapsift: error: <formatted>" and a newline on stderr. */
void hs_cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Reports the option getopt_long refused, as every verb does: "VERB: unknown option
 * '--x'" (c == '?') or "VERB: missing value for '--x'" (c == ':'; the optstring must
 * start with "+:" and opterr be 0). Returns 1, the usage exit status. */
int hs_cli_bad_option(const char *verb, int c, char **argv);

#endif

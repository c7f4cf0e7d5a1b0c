/*
 * heapsift run (run.c): starts a program under the profiler; its options, each setting
 * one HEAPSIFT_* variable, are shared with the attach verb (inject/attach.c); and the
 * rescue of spools a run's processes left (run_rescue.c).
 */
#ifndef HS_RUN_H
#define HS_RUN_H

#include <stdbool.h>
#include <stddef.h>

/* argv[0] is "run". Returns the profiled program's exit status, 127 when it cannot be
 * found, else 1 usage or 3 I/O. */
int hs_cmd_run(int argc, char **argv);
/* run_rescue.c: after CMD has exited, the rescue spools of the run whose report is report
 * (processes that could not write their exit profile: a sandbox's, or killed) become
 * profiles where those would have gone; each is said on stderr (unless quiet) and noted in
 * the report. Returns how many. */
int hs_run_rescue(const char *report, bool quiet);

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

#endif

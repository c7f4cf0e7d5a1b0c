/*
 * The heapsift command: dispatches argv[1] to a verb (one file each) and owns the error
 * format shared by all of them. Exit codes: 0 ok, 1 usage, 2 bad input, 3 I/O; `run`
 * passes the profiled program's status through.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} hs_verb_t;

static const hs_verb_t verbs[] = {
    {"run", hs_cmd_run, "run a program under the profiler and write its heap profile"},
    {"top", hs_cmd_top, "show flat and cumulative use by function, like `go tool pprof -top`"},
};

void hs_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("heapsift: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

static void usage(FILE *f)
{
    fprintf(f, "usage: heapsift <command> [options] [args]\n\n"
               "heapsift is a sampling heap profiler for native programs; it writes pprof\n"
               "heap profiles that `go tool pprof` and every pprof viewer read.\n\n"
               "commands:\n");
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        fprintf(f, "  %-10s %s\n", verbs[i].name, verbs[i].summary);
    fprintf(f, "\n`heapsift <command> --help` describes a command's options.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 1;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("heapsift %s\n", HS_VERSION);
        return 0;
    }
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        if (strcmp(argv[1], verbs[i].name) == 0)
            return verbs[i].fn(argc - 1, argv + 1);
    hs_cli_error("unknown command '%s' (see heapsift --help)", argv[1]);
    return 1;
}

/*
 * The heapsift command: dispatches argv[1] to a verb (one file each, in the folders below:
 * verbs/, run/, web/, inject/, live/); the top of src/cli, the one file that knows every verb.
 * Exit codes: 0 ok, 1 usage, 2 bad input, 3 I/O; `run` passes the profiled program's
 * status through; `check` exits 4 when a check fails.
 */
#define _GNU_SOURCE
#include "inject/attach.h"
#include "kit/cli.h"
#include "live/live.h"
#include "run/run.h"
#include "verbs/verbs.h"
#include "web/web.h"
#include "hs_version.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    int (*fn)(int, char **);
    const char *summary;
} hs_verb_t;

static const hs_verb_t verbs[] = {
    {"run", hs_cmd_run, "run a program under the profiler and write its heap profile"},
    {"top", hs_cmd_top, "flat and cumulative use by function, like `go tool pprof -top`"},
    {"traces", hs_cmd_traces, "every stack with its values, like `pprof -traces`"},
    {"peek", hs_cmd_peek, "callers and callees of matching functions, like `pprof -peek`"},
    {"list", hs_cmd_list, "source lines of matching functions with values, like `pprof -list`"},
    {"tree", hs_cmd_tree, "the call tree with values"},
    {"collapsed", hs_cmd_collapsed, "folded stacks (a;b;c N) for flamegraph.pl and speedscope"},
    {"flamegraph", hs_cmd_flamegraph, "a self-contained interactive SVG flame graph"},
    {"graph", hs_cmd_graph, "the call graph as DOT or SVG, like `go tool pprof -dot`/`-svg`"},
    {"diff", hs_cmd_diff, "what grew and shrank between two profiles, beyond noise"},
    {"convert", hs_cmd_convert, "convert between pprof, collapsed and legacy formats"},
    {"merge", hs_cmd_merge, "merge several profiles into one"},
    {"symbolize", hs_cmd_symbolize, "fill in names and lines from the binaries"},
    {"recover", hs_cmd_recover, "the profile a killed process left in its spool"},
    {"stats", hs_cmd_stats, "where the RSS went: heap, allocator, profiler, the rest"},
    {"suspects", hs_cmd_suspects, "leak suspects: stacks whose live bytes keep growing"},
    {"diagnose", hs_cmd_diagnose, "what is wrong with the memory, in one page, largest first"},
    {"check", hs_cmd_check, "CI assertions on a profile (budgets, growth)"},
    {"lifetimes", hs_cmd_lifetimes, "which sites churn short-lived memory"},
    {"web", hs_cmd_web, "a live web UI over profiles and processes"},
    {"attach", hs_cmd_attach, "profile a running process for N seconds, or until detach"},
    {"detach", hs_cmd_detach, "write an attached process's profile and leave heapsift inert"},
};

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
    if (strcmp(argv[1], "diagnose") == 0 && hs_live_is_target(argc - 1, argv + 1))
        return hs_live_diagnose(argc - 1, argv + 1); /* a PID or URL: live/, else the verb */
    for (size_t i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
        if (strcmp(argv[1], verbs[i].name) == 0)
            return verbs[i].fn(argc - 1, argv + 1);
    hs_cli_error("unknown command '%s' (see heapsift --help)", argv[1]);
    return 1;
}

/*
 * `heapsift diagnose TARGET [--json]`: the one-page answer to "what is wrong with this
 * program's memory" from a profile, several files of one process, or a directory of its
 * dumps (docs/diagnose.md). The engine is src/common/reports/diagnose*.c; this file turns
 * the target into the list of files, oldest first by the sequence number in their names
 * (the engine puts them in the profiles' own time order when every one has a time), and
 * refuses the targets it cannot read yet (a PID, an endpoint URL). Exit codes: 0, 1 usage,
 * 2 bad input (unreadable profile, empty directory, a target of another kind), 3 I/O.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "kit/viewopts.h"
#include "verbs.h"
#include "base/sort.h"
#include "reports/diagnose.h"

#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static void diag_usage(FILE *f)
{
    fprintf(f,
            "usage: heapsift diagnose [--json] TARGET...\n"
            "       heapsift diagnose [--seconds N] [--leak-check] [--keep DIR] [--json] "
            "PID|URL\n"
            "\n"
            "What is wrong with a program's memory, in one page, largest finding first.\n"
            "TARGET is a profile, several profiles of one process, or a directory of its\n"
            "dumps (HEAPSIFT_INTERVAL_SECONDS makes them; put in time order). Findings:\n"
            "  fragmentation  free memory the allocator keeps (free chunks, dirty pages)\n"
            "  growth         sites whose live bytes grow beyond sampling noise (a series)\n"
            "  leak           objects no pointer reaches (reachable=no labels, HEAPSIFT_LEAKS)\n"
            "  not_heap       resident memory outside the heap: thread stacks, file and\n"
            "                 other mappings, the profiler's own tables\n"
            "  blind_spot     allocations heapsift cannot see (HEAPSIFT's reach line)\n"
            "  top_site       the largest live sites, with their 95%% intervals\n"
            "Each names its bytes, the evidence it rests on and advice for the allocator in\n"
            "use; nothing is claimed where the evidence does not hold.\n"
            "\n"
            "A running process is a PID (read through the endpoint it serves, or\n"
            "heapsift is attached for the while) or its endpoint's URL (http://HOST:PORT):\n"
            "  --seconds N    five profiles over N seconds (N >= 1.25), so growth is judged\n"
            "  --leak-check   the last profile is a reachability scan (leak findings)\n"
            "  --keep DIR     keep the profiles taken in DIR\n"
            "\n"
            "  --json         the JSON contract of docs/diagnose.md\n"
            "\nExit status: 0 ok, 1 usage, 2 bad input or an unreachable target, 3 I/O or attach\n"
            "error.\n");
}

static int diag_cmp_name(const void *a, const void *b)
{
    return strverscmp(*(char *const *)a, *(char *const *)b);
}

/* A target heapsift diagnose reads elsewhere: a PID (digits) or an endpoint URL. */
static bool diag_live_target(const char *t)
{
    size_t i = 0;
    while (isdigit((unsigned char)t[i]))
        i++;
    return (i > 0 && t[i] == '\0') || strncmp(t, "http://", 7) == 0 ||
           strncmp(t, "https://", 8) == 0;
}

static int diag_run(const char **args, int nargs, bool json)
{
    struct stat st;
    char **dirfiles = NULL;
    long n = nargs;
    int rc = 0;
    for (int i = 0; i < nargs; i++)
        if (diag_live_target(args[i]) && stat(args[i], &st) != 0) {
            hs_cli_error("diagnose: %s: a process or endpoint is diagnosed alone "
                         "(heapsift diagnose [--seconds N] [--leak-check] PID|URL)",
                         args[i]);
            return 2;
        }
    if (nargs == 1 && stat(args[0], &st) == 0 && S_ISDIR(st.st_mode)) {
        if ((n = hs_view_profile_dir(args[0], diag_cmp_name, &dirfiles)) < 0)
            return 3;
        if (n == 0) {
            hs_cli_error("%s: no profiles in this directory", args[0]);
            free(dirfiles);
            return 2;
        }
    }
    const char *const *paths = dirfiles ? (const char *const *)dirfiles : args;
    char *many = NULL; /* several files: "FIRST and N more" */
    if (nargs > 1 && asprintf(&many, "%s and %d more", args[0], nargs - 1) < 0)
        many = NULL;
    if (hs_diagnose_files(paths, (size_t)n, many ? many : args[0], json, stdout) != 0)
        rc = 2;
    free(many);
    for (long i = 0; dirfiles && i < n; i++)
        free(dirfiles[i]);
    free(dirfiles);
    if (rc == 0 && fflush(stdout) != 0) {
        hs_cli_error("diagnose: %s", strerror(errno));
        rc = 3;
    }
    return rc;
}

int hs_cmd_diagnose(int argc, char **argv)
{
    bool json = false;
    const char **args = calloc((size_t)argc + 1, sizeof(char *));
    int nargs = 0, rc;
    if (!args) {
        hs_cli_error("diagnose: %s", strerror(ENOMEM));
        return 3;
    }
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            diag_usage(stdout);
            free(args);
            return 0;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--seconds") == 0 || strcmp(argv[i], "--leak-check") == 0 ||
                   strcmp(argv[i], "--keep") == 0) {
            hs_cli_error("diagnose: %s is for a running process (a PID or an endpoint's URL), "
                         "not for profile files",
                         argv[i]);
            free(args);
            return 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            hs_cli_error("diagnose: unknown option '%s' (see heapsift diagnose --help)", argv[i]);
            free(args);
            return 1;
        } else {
            args[nargs++] = argv[i];
        }
    }
    if (nargs == 0) {
        diag_usage(stderr);
        free(args);
        return 1;
    }
    rc = diag_run(args, nargs, json);
    free(args);
    return rc;
}

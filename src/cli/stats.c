/*
 * `heapsift stats FILE`: where the RSS went. Reads the accounting comments a heapsift
 * profile carries (written by src/preload/output/accounting.c and dump.c: "rss:", "maps:",
 * "profiler:", "allocator:", "estimate:", "exact:") and prints a reconciliation whose
 * parts add up to the RSS: the allocator's resident mappings split into the live heap
 * (the sampled estimate with its 95% interval), allocator overhead, free space kept by
 * the allocator and its metadata; then the profiler, thread stacks, code and mapped
 * files, and other anonymous memory. The meaning of each line is in docs/accounting.md.
 * Printed by src/common/report_stats.c. Exit codes: 0, 1 usage, 2 bad input (no
 * accounting in the profile), 3 I/O.
 */
#define _GNU_SOURCE
#include "cli.h"
#include "profile.h"
#include "readers.h"
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void stats_usage(FILE *f)
{
    fprintf(f, "usage: heapsift stats [--bytes] FILE\n\n"
               "Where the RSS of the profiled process went when FILE was written: the live\n"
               "heap (sampled estimate, 95%% interval), allocator overhead, free space and\n"
               "metadata, the profiler, stacks, code and other mappings, adding up to RSS.\n"
               "  --bytes   plain byte counts instead of kB/MB/GB\n");
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_stats(int argc, char **argv)
{
    bool bytes = false;
    const char *path = NULL;
    hs_profile_t *p = NULL;
    char err[512];
    int rc = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--bytes") == 0) {
            bytes = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            stats_usage(stdout);
            rc = 0;
            goto out;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            hs_cli_error("stats: unknown option '%s' (see heapsift stats --help)", argv[i]);
            goto out;
        } else if (path) {
            hs_cli_error("stats: unexpected argument '%s' (see heapsift stats --help)", argv[i]);
            goto out;
        } else {
            path = argv[i];
        }
    }
    if (!path) {
        hs_cli_error("stats: missing argument (see heapsift stats --help)");
        goto out;
    }
    int r = hs_profile_read_any(path, &p, err, sizeof(err));
    if (r != 0) {
        hs_cli_error("%s: %s", path, err);
        rc = r == -EINVAL ? 2 : 3;
        goto out;
    }
    rc = hs_report_stats(p, path, bytes, stdout);
    if (rc == -ENOENT) {
        hs_cli_error("%s: no accounting in this profile (written by heapsift 0.1 with "
                     "accounting, or by another profiler?)",
                     path);
        rc = 2;
    } else {
        rc = rc ? 3 : 0;
    }
out:
    if (p)
        hs_profile_free(p);
    return rc;
}

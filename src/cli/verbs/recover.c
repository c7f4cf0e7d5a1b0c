/*
 * `heapsift recover [-o OUT] SPOOL`: the heap profile a spool holds (HEAPSIFT_SPOOL;
 * read_spool.c, docs/postmortem.md), symbolized from the binaries its mappings name, as
 * a gzipped pprof file. Made for a supervisor's restart hook: a spool that is truncated,
 * corrupted or empty is refused with exit status 2 and a line that says what was wrong.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/fileio.h"
#include "kit/outfile.h"
#include "readers/read_spool.h"
#include "readers/readers.h"
#include "symbolize/symbolize.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void rc_usage(FILE *f)
{
    fprintf(f, "usage: heapsift recover [-o OUT] [--remove] SPOOL\n\n"
               "Turns the spool a process profiled with HEAPSIFT_SPOOL (heapsift run --spool)\n"
               "left behind when it was killed (SIGKILL, the OOM killer) into a pprof profile\n"
               "of what it held: its live samples and their stacks, named from the binaries\n"
               "its mappings name (build ids checked). A spool whose process still runs is\n"
               "read as a snapshot, and the profile says so. Every other verb reads a spool\n"
               "directly too.\n\n"
               "options:\n"
               "  -o, --output OUT   write to OUT (default: standard output, not a terminal)\n"
               "  --remove           remove SPOOL once the profile is written (not when its\n"
               "                     process still runs)\n"
               "  -q, --quiet        no summary line or warnings\n");
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input (not a spool, truncated, corrupted,\n"
               "empty), 3 I/O error.\n");
}

int hs_recover_read(const char *path, bool quiet, hs_profile_t **out)
{
    hs_buf_t file = HS_BUF_INIT;
    char err[512];
    struct stat st;
    int rc = hs_read_file(path, &file);
    if (rc != 0) {
        hs_cli_error("%s: %s", path, strerror(-rc));
        return 3;
    }
    if (file.len == 0) {
        hs_cli_error("%s: empty file: no spool header (the process ended before it made its "
                     "spool, or the file is not one)",
                     path);
        rc = 2;
    } else if (!hs_spool_detect(file.data, file.len)) {
        hs_cli_error("%s: not a spool (no HSSPOOL1 magic at its start); for a profile, use "
                     "heapsift convert or symbolize",
                     path);
        rc = 2;
    } else {
        int64_t mt =
            stat(path, &st) == 0 ? (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec : 0;
        rc = hs_spool_parse(file.data, file.len, mt, out, err, sizeof(err));
        if (rc != 0)
            hs_cli_error("%s: %s", path, err);
        else if (hs_profile_symbolize(*out, quiet) < 0) {
            hs_cli_error("%s: symbolizing: %s", path, strerror(ENOMEM));
            rc = -ENOMEM;
        }
        rc = rc == 0 ? 0 : rc == -EINVAL ? 2 : 3;
    }
    hs_buf_free(&file);
    return rc;
}

/* The summary: the first comment (recovered or snapshot) and the live totals. */
static void rc_summary(const hs_profile_t *p, const char *out)
{
    int b = hs_profile_sample_type_index(p, "inuse_space");
    int o = hs_profile_sample_type_index(p, "inuse_objects");
    long long bytes = 0, objects = 0;
    for (size_t i = 0; i < p->nsamples && b >= 0 && o >= 0; i++) {
        bytes += p->samples[i].values[b];
        objects += p->samples[i].values[o];
    }
    fprintf(stderr, "heapsift: %s; %lld bytes in %lld objects live, written to %s\n",
            p->ncomments ? hs_profile_get_str(p, p->comments[0]) : "recovered", bytes, objects,
            out ? out : "standard output");
}

int hs_cmd_recover(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"remove", no_argument, NULL, 'R'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *out = NULL;
    bool quiet = false, remove = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":o:qh", longs, NULL)) != -1) {
        if (c == 'o') {
            out = optarg;
        } else if (c == 'q') {
            quiet = true;
        } else if (c == 'R') {
            remove = true;
        } else if (c == 'h') {
            rc_usage(stdout);
            return 0;
        } else {
            return hs_cli_bad_option("recover", c, argv);
        }
    }
    if (optind != argc - 1) {
        hs_cli_error("recover: want one SPOOL (see heapsift recover --help)");
        return 1;
    }
    const char *path = argv[optind];
    hs_profile_t *p = NULL;
    int rc = hs_recover_read(path, quiet, &p);
    if (rc == 0)
        rc = hs_cli_write_pprof(p, out);
    if (rc == 0 && !quiet)
        rc_summary(p, out);
    if (rc == 0 && remove && p->ncomments &&
        strncmp(hs_profile_get_str(p, p->comments[0]), "recovered", 9) == 0 && unlink(path) != 0) {
        hs_cli_error("%s: cannot remove: %s", path, strerror(errno));
        rc = 3;
    }
    hs_profile_free(p);
    return rc;
}

/*
 * `heapsift symbolize [-o OUT] FILE`: fills in function names and file:line of the
 * locations that have none, from the binaries the mappings name (build ids checked,
 * /usr/lib/debug/.build-id searched; see hs_profile_symbolize), and writes the result as
 * a gzipped pprof file. A jemalloc or gperftools profile from this machine then reads
 * like one of heapsift's own, anywhere.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "kit/outfile.h"
#include "readers/readers.h"
#include "symbolize/symbolize.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

static void sy_usage(FILE *f)
{
    fprintf(f, "usage: heapsift symbolize [-o OUT] FILE\n\n"
               "Fills in function names and source lines of unsymbolized frames from the\n"
               "binaries named in the profile's mappings (their build ids checked, separate\n"
               "debug files found in /usr/lib/debug/.build-id), and writes a gzipped pprof\n"
               "file. FILE may be in any format heapsift reads.\n\n"
               "options:\n"
               "  -o, --output OUT   write to OUT (default: standard output, not a terminal)\n"
               "  -q, --quiet        no warnings or progress\n");
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

int hs_cmd_symbolize(int argc, char **argv)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"quiet", no_argument, NULL, 'q'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    const char *out = NULL;
    bool quiet = false;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:o:qh", longs, NULL)) != -1) {
        if (c == 'o') {
            out = optarg;
        } else if (c == 'q') {
            quiet = true;
        } else if (c == 'h') {
            sy_usage(stdout);
            return 0;
        } else {
            return hs_cli_bad_option("symbolize", c, argv);
        }
    }
    if (optind != argc - 1) {
        hs_cli_error("symbolize: want one profile FILE (see heapsift symbolize --help)");
        return 1;
    }
    const char *path = argv[optind];
    hs_profile_t *p = NULL;
    int rc = hs_cli_read_profile(path, &p);
    if (rc)
        return rc;
    int n = hs_profile_symbolize(p, quiet);
    if (n < 0) {
        hs_cli_error("%s: symbolizing: %s", path, strerror(-n));
        rc = 3;
    } else {
        rc = hs_cli_write_pprof(p, out);
    }
    hs_profile_free(p);
    return rc;
}

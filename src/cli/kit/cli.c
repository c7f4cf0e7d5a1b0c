/*
 * The error format shared by every verb of the heapsift command ("heapsift: error: ...")
 * and the report of an option getopt_long refused. Prints on stderr only; called by the
 * verbs, never by src/common.
 */
#define _GNU_SOURCE
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>

void hs_cli_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("heapsift: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

int hs_cli_bad_option(const char *verb, int c, char **argv)
{
    char shortopt[3] = {'-', (char)optopt, '\0'};
    const char *a = c == ':' || optopt == 0 ? argv[optind - 1] : shortopt;
    if (c == ':')
        hs_cli_error("%s: missing value for '%s' (see heapsift %s --help)", verb, a, verb);
    else
        hs_cli_error("%s: unknown option '%s' (see heapsift %s --help)", verb, a, verb);
    return 1;
}

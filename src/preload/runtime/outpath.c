/*
 * The output path pattern (HEAPSIFT_OUT): %p, %n, %k and %% expanded, relative patterns
 * resolved against the directory the process started in, and the suffixes that keep
 * every file apart when the pattern does not (outpath.h). Used by dump.c under its lock.
 */
#define _GNU_SOURCE
#include "core.h"
#include "outpath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char outpath_cwd[1024]; /* where the process started: relative patterns go there */

HS_CTOR(HS_CTOR_OUTPATH) static void outpath_ctor(void)
{
    if (!getcwd(outpath_cwd, sizeof(outpath_cwd)))
        outpath_cwd[0] = '\0';
}

/* A process other than the one the user started (a forked child, or an exec'd
 * descendant under `heapsift run`) gets its pid into a pattern that lacks %p. */
bool hs_outpath_needs_pid(bool forked)
{
    if (forked)
        return true;
    const char *root = getenv("HEAPSIFT_ROOT_PID");
    return root && atol(root) != (long)getpid();
}

static void outpath_append(char *out, size_t cap, size_t *n, const char *s)
{
    while (*s && *n + 1 < cap)
        out[(*n)++] = *s++;
    out[*n] = '\0';
}

/* Inserts text before the ".pb.gz" of out (or appends it). */
static void outpath_insert(char *out, size_t cap, size_t *n, const char *text)
{
    char *ext = strstr(out, ".pb.gz");
    char tail[64] = "";
    if (ext && *n - (size_t)(ext - out) < sizeof(tail)) {
        snprintf(tail, sizeof(tail), "%s", ext);
        *n = (size_t)(ext - out);
        out[*n] = '\0';
    }
    outpath_append(out, cap, n, text);
    outpath_append(out, cap, n, tail);
}

void hs_outpath_mark(char *out, size_t cap, const char *text)
{
    size_t n = strlen(out);
    outpath_insert(out, cap, &n, text);
}

/* Expands %p, %n, %k and %% of the pattern into out (any other %X is kept). A pattern without them
 * still names every file apart: ".<pid>" in a child, ".<kind>" unless the kind is heap, and
 * ".<n>" unless this is an exit dump (final). */
void hs_outpath_expand(const char *pat, const char *kind, unsigned seq, bool final, bool forked,
                       char *out, size_t cap)
{
    size_t n = 0;
    char num[40];
    out[0] = '\0';
    if (pat[0] != '/' && outpath_cwd[0]) {
        outpath_append(out, cap, &n, outpath_cwd);
        outpath_append(out, cap, &n, "/");
    }
    for (const char *c = pat; *c && n + 1 < cap; c++) {
        if (c[0] != '%' || !c[1]) {
            out[n++] = *c;
            out[n] = '\0';
            continue;
        }
        c++;
        if (*c == 'p')
            snprintf(num, sizeof(num), "%ld", (long)getpid());
        else if (*c == 'n')
            snprintf(num, sizeof(num), "%u", seq);
        else if (*c == 'k')
            snprintf(num, sizeof(num), "%s", kind);
        else if (*c == '%')
            snprintf(num, sizeof(num), "%%");
        else /* unknown: kept as written (options.c said so at start) */
            snprintf(num, sizeof(num), "%%%c", *c);
        outpath_append(out, cap, &n, num);
    }
    num[0] = '\0';
    if (!strstr(pat, "%p") && hs_outpath_needs_pid(forked))
        snprintf(num, sizeof(num), ".%ld", (long)getpid());
    if (!strstr(pat, "%k") && strcmp(kind, "heap") != 0)
        snprintf(num + strlen(num), sizeof(num) - strlen(num), ".%s", kind);
    if (!strstr(pat, "%n") && !final)
        snprintf(num + strlen(num), sizeof(num) - strlen(num), ".%u", seq);
    if (num[0])
        outpath_insert(out, cap, &n, num);
}

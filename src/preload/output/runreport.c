/*
 * The run report: under `heapsift run`, each profile a process of the tree writes is noted
 * in the file HEAPSIFT_RUN_REPORT names (run.c creates it), one line
 * "INUSE_BYTES<TAB>PATH", then the profile's "reach: " comments each after a tab (what
 * bypasses heapsift, why a profile is empty), appended in one write through fdio.h, so that
 * run can end with a summary of every process's profiles and say what they miss. Called by
 * dump.c after a profile is written.
 */
#define _GNU_SOURCE
#include "runreport.h"
#include "base/fdio.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The profile's "reach: " comments (what bypasses heapsift, an empty profile's why), each
 * after a tab, at line[n]; the new length. Tabs and newlines inside become spaces. */
static size_t runreport_reach(const hs_profile_t *p, char *line, size_t n, size_t cap)
{
    for (size_t i = 0; i < p->ncomments && n + 2 < cap; i++) {
        const char *c = hs_profile_get_str(p, p->comments[i]);
        if (!c || strncmp(c, "reach: ", 7) != 0)
            continue;
        line[n++] = '\t';
        for (; *c && n + 2 < cap; c++)
            line[n++] = *c == '\t' || *c == '\n' ? ' ' : *c;
    }
    line[n++] = '\n';
    return n;
}

void hs_runreport_note(const char *path, const hs_profile_t *p)
{
    static char file[1024];
    static int read_env;
    if (!read_env) {
        const char *v = getenv("HEAPSIFT_RUN_REPORT");
        snprintf(file, sizeof(file), "%s", v && v[0] == '/' ? v : "");
        read_env = 1;
    }
    if (!file[0])
        return;
    int64_t inuse = 0;
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->ntypes >= 4)
            inuse += p->samples[i].values[3];
    char line[4096];
    int k = snprintf(line, sizeof(line), "%lld\t%s", (long long)inuse, path);
    if (k <= 0 || (size_t)k >= sizeof(line) - 2)
        return;
    size_t n = runreport_reach(p, line, (size_t)k, sizeof(line));
    int fd = hs_fd_open(file, O_WRONLY | O_APPEND, 0);
    if (fd >= 0 && hs_fd_write(fd, line, n) < 0) {
        /* the summary misses this one: nothing else depends on it */
    }
    if (fd >= 0)
        hs_fd_close(fd);
}

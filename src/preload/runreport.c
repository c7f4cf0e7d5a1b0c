/*
 * The run report: under `heapsift run`, each profile a process of the tree writes is noted
 * in the file HEAPSIFT_RUN_REPORT names (run.c creates it), one line
 * "INUSE_BYTES<TAB>PATH" appended in one write through fdio.h, so that run can end with a
 * summary of every process's profiles. Called by dump.c after a profile is written.
 */
#define _GNU_SOURCE
#include "runreport.h"
#include "fdio.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>

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
    char line[1200];
    int n = snprintf(line, sizeof(line), "%lld\t%s\n", (long long)inuse, path);
    int fd = hs_fd_open(file, O_WRONLY | O_APPEND, 0);
    if (fd >= 0 && n > 0 && (size_t)n < sizeof(line) && hs_fd_write(fd, line, (size_t)n) < 0) {
        /* the summary misses this one: nothing else depends on it */
    }
    if (fd >= 0)
        hs_fd_close(fd);
}

/*
 * heapsift run's rescue (run.c): under `run`, every process of the tree keeps a rescue spool
 * beside the run's report (the library's spool.c), mapped in its constructor, before any
 * sandbox can start, and removed once its exit profile is written. A spool still there
 * when CMD has exited is a process that could not write its profile: one that exited
 * under a seccomp filter installed after it started (a browser's content process), or one
 * that was killed. Each becomes the profile that process would have written, at the path
 * it would have used (recorded in the spool), and run says so in its report. A spool whose
 * process still runs (a daemon that outlived CMD) is left to it.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "run.h"
#include "verbs/verbs.h"
#include "base/fileio.h"
#include "kit/outfile.h"
#include "model/profile.h"
#include "model/spool_fmt.h"
#include "readers/read_spool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The live bytes of p (inuse_space summed). */
static long long rescue_inuse(const hs_profile_t *p)
{
    int b = hs_profile_sample_type_index(p, "inuse_space");
    long long bytes = 0;
    for (size_t i = 0; i < p->nsamples && b >= 0; i++)
        bytes += p->samples[i].values[b];
    return bytes;
}

/* The program's name: the last component of argv[0], or of its first word where the
 * program wrote its title over its arguments as one string (Chromium's children). */
static void rescue_name(const hs_spool_header_t *h, char *out, size_t cap)
{
    size_t n = h->cmdline_len < HS_SPOOL_CMDLINE ? (size_t)h->cmdline_len : 0;
    const char *a = n ? h->cmdline : "?";
    size_t len = strnlen(a, n ? n : 1);
    if (len + 1 >= n) /* one string: a title */
        len = strcspn(a, " ");
    const char *slash = memrchr(a, '/', len);
    const char *name = slash ? slash + 1 : a;
    len -= (size_t)(name - a);
    snprintf(out, cap, "%.*s", (int)(len < 200 ? len : 200), name);
}

static void rescue_note(const char *report, long long inuse, const char *out)
{
    FILE *f = fopen(report, "a");
    if (!f)
        return; /* the summary misses it; the line above said where it went */
    fprintf(f, "%lld\t%s\n", inuse, out);
    fclose(f);
}

/* Says that the profile a spool at path was to give is lost, and why. Said even when quiet:
 * data lost is always said. */
static void rescue_lost(const char *path, const char *why)
{
    const char *slash = strrchr(path, '/');
    fprintf(stderr, "heapsift: a profile is lost: %s (%s)\n", why, slash ? slash + 1 : path);
}

/* Recovers the spool at path: true when a profile was written from it. */
static bool rescue_one(const char *path, const char *report, bool quiet)
{
    hs_spool_header_t h;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    bool whole = fd >= 0 && read(fd, &h, sizeof(h)) == (ssize_t)sizeof(h);
    if (fd >= 0)
        close(fd);
    if (!whole || memcmp(h.magic, HS_SPOOL_MAGIC, 8) != 0) {
        if (whole && strstr(path, ".spare") && h.spare) /* taken: its child died filling it */
            rescue_lost(path, "a process took this spare spool and ended before it had filled "
                              "it in");
        if (strstr(path, ".spare")) /* a spare no child took, or took and died filling */
            unlink(path);
        return false; /* else not made yet (renamed into place once its header is written) */
    }
    h.out_path[sizeof(h.out_path) - 1] = '\0';
    /* A pid of another PID namespace cannot be looked up from here: its process may still
     * run, its end not marked yet (Chromium's forked zygote, in its own namespace, ends
     * after the browser that run waits for). Such a copy is recovered, not taken for one
     * whose child went on to exec an unprofiled program: that would lose it, unsaid. */
    bool unknown = !h.filtered_ns && !h.exit_ns && hs_spool_pid_foreign(&h);
    if (h.filtered_ns < 0 || (h.forked == HS_SPOOL_FORKED_COPY && h.filtered_ns == 0 && !unknown &&
                              !hs_spool_alive(&h))) {
        /* no sample: no profile, as without a sandbox; or a forked child that went on to
         * exec a program heapsift does not profile (or was killed: not told apart) */
        unlink(path);
        return false;
    }
    if (!h.filtered_ns && !h.exit_ns && hs_spool_alive(&h))
        return false; /* still running */
    char out[HS_SPOOL_OUT_PATH + 64], name[256];
    if (h.out_path[0])
        snprintf(out, sizeof(out), "%s", h.out_path);
    else
        snprintf(out, sizeof(out), "heapsift.%llu.pb.gz", (unsigned long long)h.pid);
    rescue_name(&h, name, sizeof(name));
    hs_profile_t *p = NULL;
    int rc = hs_recover_read(path, true, &p);
    if (rc == 0)
        rc = hs_cli_write_pprof(p, out);
    if (rc != 0) { /* the spool stays, for heapsift recover */
        char why[sizeof(out) + 96];
        snprintf(why, sizeof(why),
                 "its spool could not be turned into %s (said above); it is kept for heapsift "
                 "recover",
                 out);
        rescue_lost(path, why);
    }
    if (rc == 0) {
        if (!quiet)
            fprintf(stderr,
                    "heapsift: process %llu%s (%s) %s; its live heap, recovered from its spool, "
                    "went to %s\n",
                    (unsigned long long)h.pid,
                    hs_spool_pid_foreign(&h) ? " of another PID namespace" : "", name,
                    unknown ? "had not marked its end when CMD ended (it may still run: its pid "
                              "cannot be looked up from here)"
                    : h.filtered_ns && h.sandbox_assumed
                        ? "exited where heapsift could not tell whether a sandbox refuses the "
                          "calls that write a profile, so it wrote none"
                    : h.filtered_ns ? "ran under a seccomp filter installed after it started (a "
                                      "sandbox), which let it write no profile"
                                    : "ended without writing its profile (killed, or it "
                                      "crashed)",
                    out);
        rescue_note(report, rescue_inuse(p), out);
        unlink(path);
    }
    hs_profile_free(p);
    return rc == 0;
}

int hs_run_rescue(const char *report, bool quiet)
{
    char dir[PATH_MAX], prefix[NAME_MAX + 2];
    const char *slash = strrchr(report, '/');
    if (!slash || (size_t)(slash - report) >= sizeof(dir))
        return 0;
    snprintf(dir, sizeof(dir), "%.*s", (int)(slash - report), report);
    snprintf(prefix, sizeof(prefix), "%s.", slash + 1);
    DIR *d = opendir(dir[0] ? dir : "/");
    int n = 0;
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 || len < 6 ||
            strcmp(e->d_name + len - 6, ".spool") != 0)
            continue;
        char path[PATH_MAX + NAME_MAX + 2];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        n += rescue_one(path, report, quiet);
    }
    if (d)
        closedir(d);
    return n;
}

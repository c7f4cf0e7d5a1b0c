/*
 * Leak report at exit: HEAPSIFT_LEAKS=1 prints, when the process exits, the allocation
 * sites whose sampled objects are still live, with their estimated bytes and objects and
 * their symbolized stacks (leakreport.c formats it from the exit profile, so the frames
 * are the profile's, symbolized with lines whatever HEAPSIFT_SYMBOLIZE says: dump.c).
 * HEAPSIFT_SUPPRESSIONS names a file in LeakSanitizer's format; heapsift's built-in
 * suppressions (suppress.c) always apply. Before the exit dump, the exiting thread runs
 * the reachability scan (reachscan.c), which splits each stack's live samples into
 * reachable=yes and reachable=no in the exit profile, so the report says which sites no
 * pointer reaches. HEAPSIFT_LEAKS=error also ends the process with status 23 when
 * unsuppressed unreachable leaks remain (any leaks with HEAPSIFT_LEAKS_REACHABLE=1, or
 * when the scan could not run).
 * The file is read once at start (its relative path is relative to the starting working
 * directory); the report runs in the exit dump, under the reentrancy guard, off every
 * allocation path, and writes to stderr with write(2), never stdio.
 */
#define _GNU_SOURCE
#include "leaks.h"
#include "base/fdio.h"
#include "runtime/iothread.h"

#include "runtime/hold.h"
#include "runtime/core.h"
#include "record/sampler.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "record/recorder.h"
#include "reports/leakreport.h"
#include "reachscan.h"
#include "reports/suppress.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HS_LEAKS_STATUS 23      /* LeakSanitizer's exit status, so CI scripts carry over */
#define HS_SUPP_MAX (16u << 20) /* a suppressions file bigger than this is refused */

static hs_supp_t leaks_supp;
static char leaks_path[4096];
static char leaks_error[160]; /* why the user's file is not applied; "" = it is */
static bool leaks_loaded, leaks_found;
static hs_reachscan_t leaks_rs;
static bool leaks_scanned; /* leaks_rs holds the exit scan */
/* The scan dumps label their samples with: the exit scan, or a leak check's while it
 * dumps (the dump lock); NULL: none. */
static const hs_reachscan_t *leaks_cur;
static char leaks_note[480];                 /* the profile comment on leaks_cur */
static char leaks_mode_note[320];            /* hs_leaks_mode_comment's */
static int leaks_scan_rc;                    /* its error, 0 if none */
static hs_buf_t leaks_capture = HS_BUF_INIT; /* a detach's report, for the command */
static bool leaks_capturing;

static void leaks_mode(const hs_reachscan_t *r, char *out, size_t cap);

static void leaks_write(const char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = hs_stderr_write(p, n, true);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return; /* stderr closed or broken: nobody to tell */
        p += w;
        n -= (size_t)w;
    }
}

bool hs_leaks_on(void)
{
    return hs_opt.leaks && hs_opt.leaks[0] != '0';
}

/* Reads the whole file (a pipe too: `<(...)` works) into a malloc'd buffer. 0 or -errno. */
static int leaks_read(const char *path, char **text, size_t *len)
{
    int rc = 0, fd = hs_open_high(path, O_RDONLY, 0);
    char *buf = NULL;
    size_t n = 0, cap = 0;
    if (fd < 0)
        return -errno;
    for (;;) {
        if (n == cap) {
            size_t ncap = cap ? 2 * cap : 4096;
            char *nb = ncap <= HS_SUPP_MAX ? realloc(buf, ncap) : NULL;
            if (!nb) {
                rc = ncap <= HS_SUPP_MAX ? -ENOMEM : -EFBIG;
                break;
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = hs_fd_read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            rc = r < 0 ? -errno : 0;
            break;
        }
        n += (size_t)r;
    }
    hs_fd_close(fd);
    if (rc != 0) {
        free(buf);
        return rc;
    }
    *text = buf;
    *len = n;
    return 0;
}

/* The user's file: an unreadable one is one error line now and a note in the report;
 * the report then applies the built-in suppressions only. */
static void leaks_load_file(void)
{
    char *text = NULL;
    size_t len = 0;
    int rc = -ENAMETOOLONG;
    if (strlen(hs_opt.suppressions) < sizeof(leaks_path)) {
        snprintf(leaks_path, sizeof(leaks_path), "%s", hs_opt.suppressions);
        rc = leaks_read(leaks_path, &text, &len);
    }
    if (rc == 0)
        rc = hs_supp_parse(&leaks_supp, text, len, leaks_path);
    free(text);
    if (rc != 0) {
        snprintf(leaks_error, sizeof(leaks_error), "HEAPSIFT_SUPPRESSIONS=%s: %s",
                 hs_opt.suppressions, strerror(-rc));
        hs_log("%s; the leak report will apply the built-in suppressions only", leaks_error);
        return;
    }
    if (leaks_supp.unknown)
        hs_log("HEAPSIFT_SUPPRESSIONS=%s:%u: suppression type '%s' ignored (only leak: applies; "
               "%u such line%s)",
               leaks_path, leaks_supp.unknown_line, leaks_supp.unknown_type, leaks_supp.unknown,
               leaks_supp.unknown == 1 ? "" : "s");
}

static void leaks_load(void)
{
    if (hs_supp_parse(&leaks_supp, hs_supp_builtin, strlen(hs_supp_builtin), "built-in") != 0)
        hs_log("no memory for the built-in leak suppressions");
    if (hs_opt.suppressions)
        leaks_load_file();
    leaks_loaded = true;
}

/* Before main: the working directory is still the one relative paths mean. */
HS_CTOR(HS_CTOR_LEAKS) static void leaks_ctor(void)
{
    hs_init();
    if (!hs_leaks_on())
        return;
    if (hs_opt.rate == 0)
        hs_log("HEAPSIFT_LEAKS=%s: no leak report, HEAPSIFT_RATE=0 turns sampling off",
               hs_opt.leaks);
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    leaks_load();
    hs_iothread_keep_stderr();
    hs_guard_exit(t);
}

/* What the scan could not read (a mapping gone or changed under it), if anything: a
 * figure of its own, so a short read is never silent. */
static void leaks_unreadable(const hs_reachscan_t *r, char *out, size_t len)
{
    out[0] = 0;
    if (r->skipped_bytes)
        snprintf(out, len, ", %.1f MiB unreadable (gone or changed),",
                 (double)r->skipped_bytes / (1 << 20));
}

/* Makes r the scan dumps label with, and its comment. */
static void leaks_set(const hs_reachscan_t *r)
{
    char threads[240], lost[64];
    hs_leaks_threads(r, threads, sizeof(threads));
    leaks_unreadable(r, lost, sizeof(lost));
    snprintf(leaks_note, sizeof(leaks_note),
             "reachability scan: %zu of %zu sampled blocks reached, %.1f MiB read (%.1f MiB "
             "untouched, not read)%s in %.1f ms (%.1f ms of CPU); %s",
             r->reached, r->n, (double)(r->root_bytes + r->block_bytes) / (1 << 20),
             (double)r->untouched_bytes / (1 << 20), lost, (double)r->ns / 1e6,
             (double)r->cpu_ns / 1e6, threads);
    leaks_cur = r;
}

/* The scan kept for the exit dump (at_exit) or a detach's report. */
static void leaks_scan(bool at_exit)
{
    if (!hs_leaks_on() || hs_opt.rate == 0 ||
        __atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON || leaks_scanned)
        return;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    leaks_scan_rc = hs_reachscan_run(&leaks_rs, at_exit);
    leaks_scanned = leaks_scan_rc == 0;
    if (leaks_scanned)
        leaks_set(&leaks_rs);
    if (leaks_scan_rc != 0)
        hs_log("reachability scan failed: %s; the leak report does not tell reachable from "
               "unreachable",
               strerror(-leaks_scan_rc));
    hs_guard_exit(t);
}

void hs_leaks_scan(void)
{
    leaks_scan(true);
}

bool hs_leaks_unreached(double *objects, double *bytes, size_t nstacks)
{
    if (!leaks_cur)
        return false;
    hs_reachscan_unreached(leaks_cur, objects, bytes, nstacks);
    return true;
}

const char *hs_leaks_comment(void)
{
    return leaks_cur ? leaks_note : NULL;
}

int hs_leaks_check_begin(hs_reachscan_t *r)
{
    if (hs_opt.rate == 0 || __atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) != HS_STATE_ON)
        return -ENOTSUP;
    int rc = hs_reachscan_run(r, false);
    if (rc != 0)
        return rc;
    leaks_set(r);
    return 0;
}

void hs_leaks_check_end(hs_reachscan_t *r)
{
    leaks_cur = leaks_scanned ? &leaks_rs : NULL;
    if (leaks_cur)
        leaks_set(leaks_cur);
    hs_reachscan_free(r);
}

/* The scan's cost, after the report: what a reader needs to judge its pause. */
static int leaks_scan_line(hs_buf_t *out)
{
    const hs_reachscan_t *r = &leaks_rs;
    char threads[240], mode[320], lost[64];
    hs_leaks_threads(r, threads, sizeof(threads));
    leaks_mode(r, mode, sizeof(mode));
    leaks_unreadable(r, lost, sizeof(lost));
    double mib = (double)(r->root_bytes + r->block_bytes) / (1 << 20);
    double ms = (double)r->ns / 1e6;
    return hs_buf_printf(out,
                         "heapsift: reachability scan: %zu of %zu sampled blocks reached; "
                         "%.1f MiB read (%u mappings, %.1f MiB of reached blocks; %.1f MiB "
                         "untouched, not read)%s in %.1f ms (%.1f ms of CPU), %.2f GB/s\n"
                         "heapsift: reachability scan: %s\nheapsift: %s\n",
                         r->reached, r->n, mib, r->mappings, (double)r->block_bytes / (1 << 20),
                         (double)r->untouched_bytes / (1 << 20), lost, ms, (double)r->cpu_ns / 1e6,
                         ms > 0 ? (double)(r->root_bytes + r->block_bytes) / (ms * 1e6) : 0.0,
                         threads, mode);
}

/* How the heap was scanned: a fork's snapshot, or stopped throughout and why. */
static void leaks_mode(const hs_reachscan_t *r, char *out, size_t cap)
{
    if (r->snapshot)
        snprintf(out, cap,
                 "leak check: snapshot (fork), paused %.1f ms (fork %.1f ms): the labels are "
                 "the heap as it was at the snapshot",
                 (double)r->pause_ns / 1e6, (double)r->fork_ns / 1e6);
    else
        snprintf(out, cap, "leak check: stop-the-world, paused %.1f ms (no snapshot: %s)",
                 (double)r->pause_ns / 1e6, r->snap_why[0] ? r->snap_why : "none taken");
}

const char *hs_leaks_mode_comment(void)
{
    if (!leaks_cur)
        return NULL;
    leaks_mode(leaks_cur, leaks_mode_note, sizeof(leaks_mode_note));
    return leaks_mode_note;
}

void hs_leaks_threads(const hs_reachscan_t *r, char *out, size_t cap)
{
    if (r->stop_rc != 0) {
        snprintf(out, cap, "the other threads were not stopped (%s)", strerror(-r->stop_rc));
        return;
    }
    snprintf(out, cap,
             "%u other threads stopped in %.1f ms, paused %.1f ms; %u left running (the "
             "signal blocked: heapsift's own, or the program's), %u did not answer",
             r->threads_stopped, (double)r->stop_ns / 1e6, (double)r->pause_ns / 1e6,
             r->threads_blocked, r->threads_unanswered);
}

void hs_leaks_report(const hs_profile_t *p)
{
    hs_buf_t out = HS_BUF_INIT;
    hs_leak_result_t res;
    if (!hs_leaks_on())
        return;
    if (!leaks_loaded)
        leaks_load();
    hs_leak_opts_t o = {
        .rate = hs_ci_rate(),
        .max_sites = hs_opt.leaks_max,
        .program = program_invocation_name,
        .pid = (long)getpid(),
        .supp_error = leaks_error[0] ? leaks_error : NULL,
        .when = leaks_capturing ? "detach" : NULL,
        .since = hs_attach_comment(), /* attached: only blocks since then are known */
    };
    int rc = hs_leak_report(p, &leaks_supp, &o, &out, &res);
    if (rc == 0 && res.reach)
        rc = leaks_scan_line(&out);
    if (rc == 0 && leaks_capturing) {
        rc = hs_buf_append(&leaks_capture, out.data, out.len);
    } else if (rc == 0) {
        leaks_write((const char *)out.data, out.len);
        /* Without the labels (no scan), every site counts: a failed scan hides nothing. A
         * detach's report (captured) never sets it: it ends no process with status 23. */
        leaks_found = res.reach && !hs_opt.leaks_reachable ? res.unreach_sites > 0 : res.sites > 0;
    } else {
        hs_log("leak report failed: %s", strerror(-rc));
    }
    hs_buf_free(&out);
}

void hs_leaks_capture_begin(void)
{
    hs_buf_free(&leaks_capture);
    leaks_capturing = true;
}

const char *hs_leaks_capture_end(size_t *len)
{
    leaks_capturing = false;
    *len = leaks_capture.len;
    return (const char *)leaks_capture.data;
}

void hs_leaks_scan_forget(void)
{
    if (leaks_cur == &leaks_rs)
        leaks_cur = NULL;
    if (leaks_scanned)
        hs_reachscan_free(&leaks_rs);
    leaks_scanned = false;
}

void hs_leaks_scan_fresh(void)
{
    hs_leaks_scan_forget();
    leaks_scan(false); /* the program goes on after the detach: a snapshot */
}

void hs_leaks_exit(void)
{
    if (!leaks_found || !hs_opt.leaks || strcmp(hs_opt.leaks, "error") != 0)
        return;
    fflush(NULL); /* what exit would still have done for the program's streams */
    _exit(HS_LEAKS_STATUS);
}

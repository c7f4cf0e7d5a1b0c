/*
 * `heapsift attach [options] [--seconds N] PID` and `heapsift detach PID`: profile a
 * process that is already running. This file owns the verbs and what they ask of the
 * target (the library's side is its own attach.c; the attach thread that does it is
 * attach_thread.c's, running code in the target inject_thread.c's; docs/attach.md tells
 * the whole story):
 *   - checks before anything is stopped (the process, its libc, its mount namespace);
 *   - attach: libheapsift.so dlopened by the attach thread through a symlink in a fresh
 *     /tmp/heapsift-attach-XXXXXX (the library's constructors see that path and start
 *     nothing), then heapsift_attach_init with the options file written next to it;
 *   - finish (detach, end of --seconds): heapsift_attach_finish on an attach thread.
 * No program thread is held stopped for more than a stub's set-up; SIGINT and SIGTERM end
 * the command's waits at once (a signal that ends the --seconds wait still detaches).
 */
#define _GNU_SOURCE
#include "attach_check.h"
#include "attach_files.h"
#include "attach_thread.h"
#include "model/attach_box.h"
#include "kit/cli.h"
#include "attach.h"
#include "run/run.h"
#include "ptrace_inject.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define AT_REPORT_MAX (64u << 20) /* a leak report read back at detach */

static volatile sig_atomic_t at_interrupted;

static void at_on_signal(int sig)
{
    (void)sig;
    at_interrupted = 1;
}

/* ---- checks before anything is stopped ------------------------------------------------ */

static int at_parse_pid(const char *verb, const char *arg, pid_t *pid)
{
    char *end;
    long v = strtol(arg, &end, 10);
    if (*arg == '\0' || *end || v <= 0 || v > INT_MAX) {
        hs_cli_error("%s: '%s' is not a process id", verb, arg);
        return HS_AT_USAGE;
    }
    *pid = (pid_t)v;
    char path[64];
    snprintf(path, sizeof(path), "/proc/%d", (int)v); /* a zombie has no exe */
    struct stat st;
    if (stat(path, &st) != 0 && errno == ENOENT) {
        hs_cli_error("%s: no process %ld", verb, v);
        return HS_AT_TARGET;
    }
    if (*pid == getpid()) {
        hs_cli_error("%s: %ld is this command", verb, v);
        return HS_AT_TARGET;
    }
    return HS_AT_OK;
}

static int at_check_target(pid_t pid)
{
    char exe[64], p[PATH_MAX];
    uintptr_t base;
    snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
    if (hs_run_is_static(exe) || !hs_inject_map_find(pid, "libc.so", &base, p, sizeof(p))) {
        hs_cli_error("attach: process %d is statically linked or has no glibc (no libc.so "
                     "mapped): a library cannot be loaded into it",
                     (int)pid);
        return HS_AT_TARGET;
    }
    return HS_AT_OK;
}

/* The seccomp filter of pid named when it may explain a failure: why is the failure's
 * text (errno strings of EPERM and ENOSYS, what a filter returns, make it certain). */
static void at_seccomp_note(pid_t pid, int sigsys, const char *why, char *note, size_t cap)
{
    note[0] = '\0';
    if (hs_attach_seccomp(pid) != 2)
        return;
    bool sure = sigsys || (why && (strstr(why, strerror(EPERM)) || strstr(why, strerror(ENOSYS))));
    snprintf(note, cap, " (process %d runs under a seccomp filter, which %s a system call of it)",
             (int)pid, sure ? "refused" : "may have refused");
}

/* ---- attach and finish ---------------------------------------------------------------- */

typedef struct {
    const char *link;    /* the library as the target dlopens it (the per-attach symlink) */
    const char *optfile; /* the options file */
    char msg[1024];      /* the library's line for the user */
} at_init_t;

/* The library loaded and initialised by the attach thread (attach_thread.c); no program
 * thread stopped for more than a stub's set-up. */
static int at_attach(pid_t pid, at_init_t *in)
{
    static hs_attach_job_t job;
    memset(&job, 0, sizeof(job));
    job.op = HS_BOX_INIT;
    job.link = in->link;
    job.optfile = in->optfile;
    job.verb = "attach";
    job.stop = &at_interrupted;
    int rc = hs_attach_thread_run(pid, &job);
    if (rc != HS_AT_OK)
        return rc;
    if (job.rc == -ENOENT && !job.msg[0])
        snprintf(job.msg, sizeof(job.msg), "no reason given");
    if (job.rc != 0) {
        char note[160];
        at_seccomp_note(pid, job.sigsys, job.msg, note, sizeof(note));
        hs_cli_error("attach: process %d: %s%s%s", (int)pid,
                     job.rc == -ENOENT ? "dlopen of the library failed: " : "",
                     job.msg[0] ? job.msg : strerror(-job.rc), note);
        return job.rc == -EALREADY || job.rc == -EBUSY ? HS_AT_TARGET : HS_AT_FAIL;
    }
    snprintf(in->msg, sizeof(in->msg), "%s", job.msg);
    char *warn = strchr(in->msg, '\n'); /* the library's second line: a warning */
    if (warn)
        *warn++ = '\0';
    fprintf(stderr,
            "heapsift: attached to process %d (one thread at a time stopped, for %.1f ms at "
            "most; %u stopped to find one outside the allocator)%s%s\n",
            (int)pid, (double)job.paused_us / 1000.0, job.tries, in->msg[0] ? "; " : "", in->msg);
    if (warn)
        fprintf(stderr, "heapsift: warning: %s\n", warn);
    return HS_AT_OK;
}

/* The profile's path as the target wrote it, and where it is seen from here when the
 * target sees another filesystem. */
static void at_print_wrote(pid_t pid, const char *path)
{
    char there[PATH_MAX + 64];
    struct stat a, b;
    snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, path);
    if (path[0] == '/' && stat(there, &b) == 0 &&
        (stat(path, &a) != 0 || a.st_dev != b.st_dev || a.st_ino != b.st_ino))
        printf("heapsift: wrote %s (in process %d's filesystem)\n", there, (int)pid);
    else
        printf("heapsift: wrote %s\n", path);
}

/* The leak report heapsift_attach_finish kept (--leaks), read from the target and printed
 * on stderr as `run` prints it on the program's. */
static void at_print_leaks(pid_t pid, uint64_t addr, uint64_t len)
{
    if (!addr || !len)
        return;
    if (len > AT_REPORT_MAX) {
        hs_cli_error("detach: the leak report in process %d is too long (%llu bytes)", (int)pid,
                     (unsigned long long)len);
        return;
    }
    char *text = malloc(len);
    if (text && hs_inject_mem(pid, (uintptr_t)addr, text, len, false) == 0)
        fwrite(text, 1, len, stderr);
    else
        hs_cli_error("detach: cannot read the leak report in process %d", (int)pid);
    free(text);
}

/* What a finish that ran says: the profile written and the leak report, or why not. */
static int at_finished(pid_t pid, const char *verb, const hs_attach_job_t *job)
{
    if (job->rc != 0 || !job->out[0]) {
        hs_cli_error("%s: process %d: the profile could not be written (%s); heapsift is "
                     "inert in it now",
                     verb, (int)pid, strerror(-job->rc));
        return HS_AT_FAIL;
    }
    at_print_wrote(pid, job->out);
    at_print_leaks(pid, job->report[0], job->report[1]);
    fprintf(stderr, "heapsift: detached from process %d; heapsift is inert in it\n", (int)pid);
    return HS_AT_OK;
}

/* heapsift_attach_finish on the attach thread (the program runs on: removing a patch is
 * safe under running threads, and the dump needs heapsift's own threads), in each heapsift
 * library the process maps until one says it was attached. There is one, but in a process
 * that two different heapsift installs attached before attach refused that; a library
 * whose file was replaced or removed since is read through /proc/PID/map_files. */
static int at_finish(pid_t pid, const char *verb)
{
    static hs_attach_job_t job;
    hs_inject_map_t m;
    unsigned libs = 0;
    for (unsigned nth = 0; hs_inject_map_nth(pid, "libheapsift", nth, &m); nth++) {
        uintptr_t fn;
        if (!hs_inject_map_sym(pid, &m, "heapsift_attach_thread", &fn))
            continue;
        libs++;
        memset(&job, 0, sizeof(job));
        job.op = HS_BOX_FINISH;
        job.verb = verb;
        job.stop = &at_interrupted;
        job.entry = fn;
        int rc = hs_attach_thread_run(pid, &job);
        if (rc != HS_AT_OK)
            return rc;
        if (job.rc != -ENOENT)
            return at_finished(pid, verb, &job);
    }
    if (libs == 0)
        hs_cli_error("%s: process %d is not attached (no libheapsift.so loaded by heapsift "
                     "attach)",
                     verb, (int)pid);
    else
        hs_cli_error("%s: process %d is not attached (heapsift detach ran already?)", verb,
                     (int)pid);
    return HS_AT_TARGET;
}

/* ---- the verbs ------------------------------------------------------------------------ */

static void at_usage(FILE *f)
{
    size_t n;
    const hs_run_opt_t *o = hs_run_opts(&n);
    fprintf(f, "usage: heapsift attach [options] [--seconds N] PID\n"
               "       heapsift detach PID\n\n"
               "attach loads libheapsift.so into the running process PID (ptrace, x86-64,\n"
               "glibc) and starts sampling there; allocations made before it are not seen.\n"
               "With --seconds it writes the profile after N seconds and detaches; without,\n"
               "profiling goes on (with --http it serves) until `heapsift detach PID`, which\n"
               "writes the profile to the -o pattern and leaves heapsift inert in the process.\n"
               "The options are heapsift run's (-o defaults to heapsift.%%p.pb.gz here):\n\n");
    for (size_t i = 0; i < n; i++) {
        char left[48];
        const char *arg = o[i].fixed ? "" : " VALUE";
        if (strcmp(o[i].env, "HEAPSIFT_CHILDREN") == 0)
            continue; /* nothing is exec'd by attach */
        if (o[i].short_opt)
            snprintf(left, sizeof(left), "-%c, --%s%s", o[i].short_opt, o[i].opt, arg);
        else
            snprintf(left, sizeof(left), "    --%s%s", o[i].opt, arg);
        fprintf(f, "  %-28s %s\n", left, o[i].help);
    }
    fprintf(f, "  %-28s %s\n  %-28s %s\n  %-28s %s\n", "    --seconds N",
            "profile for N seconds, then write and detach", "    --lib PATH",
            "the libheapsift.so to load", "-h, --help", "show this help");
    fprintf(f, "\nExit status: 0 attached (or detached); 1 usage or a bad option value; 2 the\n"
               "target cannot be attached (no such process, a zombie, statically linked or\n"
               "no glibc, seccomp strict mode, another filesystem the library cannot be\n"
               "copied into, profiled already, attached already, another heapsift library\n"
               "loaded, not attached for detach), or it ended during the attach; 3 ptrace\n"
               "refused (another tracer, another user, Yama's ptrace_scope, not dumpable),\n"
               "a seccomp filter refused a system call of the injection, or the injection\n"
               "failed. Each case has its own message. The target is left running in every\n"
               "case.\n");
}

/* Parses attach's options into the environment; the index of PID, or -1 help, -2 bad. */
static int at_parse(int argc, char **argv, const char **lib, double *seconds)
{
    size_t n;
    const hs_run_opt_t *o = hs_run_opts(&n);
    struct option *longs = calloc(n + 4, sizeof(*longs));
    char shorts[32] = "+:h";
    size_t ns = 3;
    int first = -2;
    if (!longs)
        return -2;
    for (size_t i = 0; i < n; i++) {
        longs[i] = (struct option){o[i].opt, o[i].fixed ? no_argument : required_argument, NULL,
                                   1000 + (int)i};
        if (o[i].short_opt && ns + 2 < sizeof(shorts)) {
            shorts[ns++] = (char)o[i].short_opt;
            if (!o[i].fixed)
                shorts[ns++] = ':';
        }
    }
    longs[n] = (struct option){"lib", required_argument, NULL, 999};
    longs[n + 1] = (struct option){"seconds", required_argument, NULL, 998};
    longs[n + 2] = (struct option){"help", no_argument, NULL, 'h'};
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        char *end;
        size_t i = n;
        if (c == 'h') {
            first = -1;
            goto out;
        }
        if (c == 999) {
            *lib = optarg;
            continue;
        }
        if (c == 998) {
            *seconds = strtod(optarg, &end);
            if (*optarg == '\0' || *end || !(*seconds > 0) || *seconds > 1e7) {
                hs_cli_error("attach: --seconds %s: expected a positive number of seconds", optarg);
                goto out;
            }
            continue;
        }
        i = hs_run_opt_index(c);
        if (i == n) {
            hs_cli_bad_option("attach", c, argv);
            goto out;
        }
        if (hs_run_set_option(i, optarg) != 0)
            goto out;
    }
    first = optind;
out:
    free(longs);
    return first;
}

static void at_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = at_on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* The options' checks before the target is touched: the library reads them (probe). When
 * the target sees another filesystem (!shared), paths are the target's: the default -o is
 * its /tmp, and the directories are not checked here. */
static int at_check_options(const char *lib, bool shared)
{
    char cwd[PATH_MAX], out[PATH_MAX + 32];
    if (!getenv("HEAPSIFT_OUT") && !shared)
        setenv("HEAPSIFT_OUT", "/tmp/heapsift.%p.pb.gz", 1);
    if (!getenv("HEAPSIFT_OUT") && getcwd(cwd, sizeof(cwd))) {
        snprintf(out, sizeof(out), "%s/heapsift.%%p.pb.gz", cwd);
        setenv("HEAPSIFT_OUT", out, 1);
    }
    int rc = shared ? hs_run_check_dir("HEAPSIFT_OUT", "profiles") : 0;
    if (rc == 0 && shared)
        rc = hs_run_check_dir("HEAPSIFT_HTTP_PORTFILE", "the port file");
    if (rc == 0) {
        setenv("LD_PRELOAD", lib, 1); /* for the probe's shell only */
        rc = hs_run_probe(lib);
        unsetenv("LD_PRELOAD");
    }
    return rc;
}

int hs_cmd_attach(int argc, char **argv)
{
    const char *given = NULL;
    double seconds = 0;
    char libbuf[PATH_MAX];
    static hs_attach_files_t files; /* large: not on the stack */
    pid_t pid;
    /* First: a shell's background job starts with SIGINT ignored, and a signal before the
       handler would be lost (the attach then went on to the end). */
    at_catch_signals();
    if (!getenv("HEAPSIFT_VERBOSE"))
        setenv("HEAPSIFT_VERBOSE", "0", 1); /* the target's stderr is not ours: said here */
    int first = at_parse(argc, argv, &given, &seconds);
    if (first == -1) {
        at_usage(stdout);
        return HS_AT_OK;
    }
    if (first == -2)
        return HS_AT_USAGE;
    if (first != argc - 1) {
        hs_cli_error("attach: %s (see heapsift attach --help)",
                     first >= argc ? "no process id given" : "one process id expected");
        return HS_AT_USAGE;
    }
    int rc = at_parse_pid("attach", argv[first], &pid);
    if (rc == HS_AT_OK)
        rc = hs_attach_check_access(pid, "attach");
    if (rc != HS_AT_OK)
        return rc;
    const char *lib = hs_run_find_lib(given, libbuf, sizeof(libbuf));
    if (access(lib, R_OK) != 0) {
        hs_cli_error("attach: %s: %s (give the library with --lib)", lib, strerror(errno));
        return HS_AT_FAIL;
    }
    rc = at_check_target(pid);
    bool shared = hs_attach_files_shared(pid, lib);
    if (rc == 0)
        rc = hs_attach_files_loaded(pid, lib, shared);
    if (rc == 0)
        rc = at_check_options(lib, shared);
    at_init_t in;
    memset(&in, 0, sizeof(in));
    if (rc == 0)
        rc = hs_attach_files_make(pid, lib, shared, &files);
    in.link = files.lib;
    in.optfile = files.opt;
    if (rc == 0)
        rc = at_attach(pid, &in);
    char depsdir[sizeof(files.dir) + 16];
    snprintf(depsdir, sizeof(depsdir), "%s/heapsift-deps", files.dir);
    hs_attach_files_remove(&files);
    if (rc == HS_AT_OK && files.deps[0])
        fprintf(stderr,
                "heapsift: process %d lacks libraries heapsift needs (%s): copies of this "
                "machine's are at %s there, which stay\n",
                (int)pid, files.deps, depsdir);
    if (rc == HS_AT_OK && !shared)
        fprintf(stderr,
                "heapsift: process %d sees another filesystem (a mount namespace or a chroot): "
                "the library it loaded is a copy at %s there (here /proc/%d/root%s), which "
                "stays; -o names a path there\n",
                (int)pid, in.link, (int)pid, in.link);
    if (rc != HS_AT_OK || seconds <= 0) {
        if (rc == HS_AT_OK)
            fprintf(stderr,
                    "heapsift: profiling process %d; `heapsift detach %d` writes the "
                    "profile and ends it\n",
                    (int)pid, (int)pid);
        return rc;
    }
    int64_t end = hs_inject_now_ms() + (int64_t)(seconds * 1000);
    while (!at_interrupted && hs_inject_now_ms() < end) {
        int64_t left = end - hs_inject_now_ms();
        struct timespec d = {0, 0};
        d.tv_nsec = (left > 200 ? 200 : left) * 1000000;
        nanosleep(&d, NULL);
        if (kill(pid, 0) != 0 && errno == ESRCH) {
            hs_cli_error("attach: process %d exited before the %g seconds ended (its exit "
                         "profile was written to the -o pattern)",
                         (int)pid, seconds);
            return HS_AT_TARGET;
        }
    }
    at_interrupted = 0; /* the signal ended the wait: the finish runs (a second one ends it) */
    return at_finish(pid, "attach");
}

int hs_cmd_detach(int argc, char **argv)
{
    static const struct option longs[] = {{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
    pid_t pid;
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:h", longs, NULL)) != -1) {
        if (c != 'h')
            return hs_cli_bad_option("detach", c, argv);
        at_usage(stdout);
        return HS_AT_OK;
    }
    if (optind != argc - 1) {
        hs_cli_error("detach: one process id expected (see heapsift detach --help)");
        return HS_AT_USAGE;
    }
    int rc = at_parse_pid("detach", argv[optind], &pid);
    if (rc == HS_AT_OK)
        rc = hs_attach_check_access(pid, "detach");
    if (rc != HS_AT_OK)
        return rc;
    at_catch_signals();
    return at_finish(pid, "detach");
}

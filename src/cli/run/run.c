/*
 * `heapsift run [options] [--] CMD [ARGS...]`: starts CMD with libheapsift.so preloaded.
 * Every option mirrors one HEAPSIFT_* variable (the library reads and validates them);
 * the program's exit status is passed through (128 + N when killed by signal N, 127 when
 * CMD cannot be found, 126 when it cannot be executed), the signals a supervisor sends
 * (TERM, HUP, USR1, USR2, ALRM, WINCH) are passed on to it, relative paths given as
 * options are made absolute, and the library says on stderr where each profile went.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "run.h"
#include "base/fileio.h"

#include <elf.h>
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef hs_run_opt_t run_opt_t;

static const run_opt_t run_opts[] = {
    {"out", 'o', "HEAPSIFT_OUT", NULL, "output path pattern (%p pid, %n dump number, %k kind)"},
    {"rate", 'r', "HEAPSIFT_RATE", NULL, "mean bytes between samples (1 = all, 0 = off)"},
    {"seed", 0, "HEAPSIFT_SEED", NULL, "seed for reproducible sampling"},
    {"depth", 0, "HEAPSIFT_DEPTH", NULL, "frames per stack, 1 to 256"},
    {"max-stacks", 0, "HEAPSIFT_MAX_STACKS", NULL, "bound on distinct stacks"},
    {"unwind", 0, "HEAPSIFT_UNWIND", NULL, "unwinder: dwarf, libgcc or fp"},
    {"symbolize", 0, "HEAPSIFT_SYMBOLIZE", NULL, "names and lines: lines, full, names or none"},
    {"hooks", 0, "HEAPSIFT_HOOKS", NULL, "hook allocators the program brings: auto, got or off"},
    {"no-children", 0, "HEAPSIFT_CHILDREN", "0", "do not profile programs CMD executes"},
    {"children", 0, "HEAPSIFT_CHILDREN", "1", "profile programs CMD executes (default)"},
    {"quiet", 'q', "HEAPSIFT_VERBOSE", "0", "do not say where profiles went"},
    {"verbose", 0, "HEAPSIFT_VERBOSE", "1", "say where profiles went (default)"},
    {"signal", 0, "HEAPSIFT_SIGNAL", NULL, "dump when this signal arrives (e.g. USR2)"},
    {"interval-bytes", 0, "HEAPSIFT_INTERVAL_BYTES", NULL, "dump every N bytes allocated"},
    {"interval-seconds", 0, "HEAPSIFT_INTERVAL_SECONDS", NULL, "dump every T seconds"},
    {"peak", 0, "HEAPSIFT_PEAK", "1", "keep the live set at the highest live heap"},
    {"no-dump-on-term", 0, "HEAPSIFT_DUMP_ON_TERM", "0",
     "no exit profile when CMD dies of SIGINT, SIGTERM or SIGHUP"},
    {"peak-growth", 0, "HEAPSIFT_PEAK_GROWTH", NULL, "dump at new peaks this much higher"},
    {"peak-min-seconds", 0, "HEAPSIFT_PEAK_MIN_SECONDS", NULL, "at most one peak dump per T s"},
    {"oom-fraction", 0, "HEAPSIFT_OOM_FRACTION", NULL, "dump near the memory limit (0.9)"},
    {"keep", 0, "HEAPSIFT_KEEP", NULL, "keep the newest N files of each kind"},
    {"leaks", 0, "HEAPSIFT_LEAKS", NULL, "leak report at exit: 0, 1 or error (status 23)"},
    {"suppressions", 0, "HEAPSIFT_SUPPRESSIONS", NULL, "LSan-format leak suppressions file"},
    {"leaks-max", 0, "HEAPSIFT_LEAKS_MAX", NULL, "sites the leak report lists (0 = all)"},
    {"leaks-reachable", 0, "HEAPSIFT_LEAKS_REACHABLE", "1",
     "with --leaks error, reachable sites fail the run too"},
    {"leaks-stop-world", 0, "HEAPSIFT_LEAKS_SNAPSHOT", "0",
     "leak scans stop the threads throughout (no fork snapshot)"},
    {"http", 0, "HEAPSIFT_HTTP", NULL, "serve /debug/pprof/ on HOST:PORT (:0 any port)"},
    {"http-portfile", 0, "HEAPSIFT_HTTP_PORTFILE", NULL, "write the endpoint's port here (%p)"},
    {"http-token", 0, "HEAPSIFT_HTTP_TOKEN", NULL, "token the control POSTs require"},
    {"metrics-sites", 0, "HEAPSIFT_METRICS_SITES", NULL, "top sites /metrics lists (10)"},
    {"spool", 0, "HEAPSIFT_SPOOL", NULL, "keep the live set in this file (%p) for recover"},
    {"spool-size", 0, "HEAPSIFT_SPOOL_SIZE", NULL, "bound on the spool file (default 16M)"},
    {"keep-spool", 0, "HEAPSIFT_KEEP_SPOOL", "1", "keep the spool at a normal exit"},
    {"spool-spares", 0, "HEAPSIFT_SPOOL_SPARES", NULL,
     "spare spools a process makes for its raw clones (default 8 for a PID namespace's init)"},
};
#define RUN_NOPTS (sizeof(run_opts) / sizeof(run_opts[0]))

static void run_usage(FILE *f)
{
    fprintf(f, "usage: heapsift run [options] [--] CMD [ARGS...]\n\n"
               "Runs CMD with libheapsift.so preloaded; it writes a gzipped pprof heap\n"
               "profile when CMD exits (default heapsift.<pid>.pb.gz in the working\n"
               "directory). Each option sets the HEAPSIFT_* variable named after it.\n\n");
    for (size_t i = 0; i < RUN_NOPTS; i++) {
        char left[48];
        const char *arg = run_opts[i].fixed ? "" : " VALUE";
        if (run_opts[i].short_opt)
            snprintf(left, sizeof(left), "-%c, --%s%s", run_opts[i].short_opt, run_opts[i].opt,
                     arg);
        else
            snprintf(left, sizeof(left), "    --%s%s", run_opts[i].opt, arg);
        fprintf(f, "  %-28s %s [%s]\n", left, run_opts[i].help, run_opts[i].env);
    }
    fprintf(f, "  %-28s %s\n  %-28s %s\n", "    --lib PATH", "the libheapsift.so to preload",
            "-h, --help", "show this help");
    fprintf(f, "\nExit status: CMD's own (128+N when a signal N ended it; 127 not found, 126 not\n"
               "executable); before CMD starts: 1 usage or a bad option value, 3 an output\n"
               "directory that cannot be written or a library that cannot be preloaded.\n");
}

static bool run_exists(const char *dir, const char *rel, char *out, size_t cap)
{
    snprintf(out, cap, "%s/%s", dir, rel);
    return access(out, R_OK) == 0;
}

/* The library: --lib, else next to this executable, else ../lib, else the install dir. */
static const char *run_find_lib(const char *given, char *out, size_t cap)
{
    if (given)
        return given;
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n > 0) {
        exe[n] = '\0';
        char *dir = dirname(exe);
        if (run_exists(dir, "libheapsift.so", out, cap) ||
            run_exists(dir, "../lib/libheapsift.so", out, cap) ||
            run_exists(dir, "../lib/x86_64-linux-gnu/libheapsift.so", out, cap))
            return out;
    }
    if (run_exists(HS_LIBDIR, "libheapsift.so", out, cap))
        return out;
    return "libheapsift.so";
}

static void run_set_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(lib) + (old ? strlen(old) : 0) + 2;
    char *v = malloc(len);
    if (!v)
        return;
    snprintf(v, len, "%s%s%s", lib, old && *old ? ":" : "", old ? old : "");
    setenv("LD_PRELOAD", v, 1);
    free(v);
}

/* Sets env to value; a relative path among the path options is made absolute here, so
 * that a program started in another directory (a child that changed directory before
 * exec) writes and reads where the command line meant. 0, or -1 (reported). */
static int run_set_path(const char *env, const char *value)
{
    static const char *const paths[] = {"HEAPSIFT_OUT", "HEAPSIFT_HTTP_PORTFILE",
                                        "HEAPSIFT_SUPPRESSIONS", "HEAPSIFT_SPOOL"};
    bool path = false;
    for (size_t k = 0; k < sizeof(paths) / sizeof(paths[0]); k++)
        path = path || strcmp(env, paths[k]) == 0;
    char cwd[PATH_MAX], *abs = NULL;
    if (path && value[0] != '/' && value[0] != '\0') {
        if (!getcwd(cwd, sizeof(cwd)) || asprintf(&abs, "%s/%s", cwd, value) < 0) {
            hs_cli_error("run: cannot make %s absolute: %s", value, strerror(errno));
            return -1;
        }
    }
    setenv(env, abs ? abs : value, 1);
    free(abs);
    return 0;
}

/* Parses options into the environment. Returns the index of CMD, or -1 (help) or -2
 * (a bad option, reported). */
size_t hs_run_opt_index(int c)
{
    if (c >= 1000)
        return (size_t)(c - 1000) < RUN_NOPTS ? (size_t)(c - 1000) : RUN_NOPTS;
    for (size_t k = 0; k < RUN_NOPTS; k++)
        if (run_opts[k].short_opt == c)
            return k;
    return RUN_NOPTS;
}

static int run_parse(int argc, char **argv, const char **lib)
{
    struct option longs[RUN_NOPTS + 3];
    char shorts[32] = "+:h";
    size_t ns = 3;
    for (size_t i = 0; i < RUN_NOPTS; i++) {
        longs[i] =
            (struct option){run_opts[i].opt, run_opts[i].fixed ? no_argument : required_argument,
                            NULL, 1000 + (int)i};
        if (run_opts[i].short_opt) {
            shorts[ns++] = (char)run_opts[i].short_opt;
            if (!run_opts[i].fixed)
                shorts[ns++] = ':';
        }
    }
    shorts[ns] = '\0';
    longs[RUN_NOPTS] = (struct option){"lib", required_argument, NULL, 999};
    longs[RUN_NOPTS + 1] = (struct option){"help", no_argument, NULL, 'h'};
    longs[RUN_NOPTS + 2] = (struct option){NULL, 0, NULL, 0};
    setenv("HEAPSIFT_VERBOSE", "1", 1);
    optind = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        if (c == 'h')
            return -1;
        if (c == 999) {
            *lib = optarg;
            continue;
        }
        size_t i = hs_run_opt_index(c);
        if (i == RUN_NOPTS) {
            hs_cli_bad_option("run", c, argv);
            return -2;
        }
        if (run_opts[i].fixed)
            setenv(run_opts[i].env, run_opts[i].fixed, 1);
        else if (run_set_path(run_opts[i].env, optarg) != 0)
            return -2;
    }
    return optind;
}

static void run_exec_child(char **cmd)
{
    char pid[32];
    snprintf(pid, sizeof(pid), "%ld", (long)getpid());
    setenv("HEAPSIFT_ROOT_PID", pid, 1);
    signal(SIGINT, SIG_DFL);
    signal(SIGQUIT, SIG_DFL);
    execvp(cmd[0], cmd);
    int err = errno;
    if (err == ENOENT)
        fprintf(stderr, "heapsift: %s: command not found\n", cmd[0]);
    else
        fprintf(stderr, "heapsift: %s: %s\n", cmd[0], strerror(err));
    _exit(err == ENOENT ? 127 : 126);
}

/* The child, for the signals passed on to it. */
static volatile pid_t run_child;

static void run_forward(int sig)
{
    if (run_child > 0)
        kill(run_child, sig);
}

/* A supervisor stopping a service signals the process it started (`docker stop`, systemd,
 * a shell's kill): passed on to CMD, which decides, so that it ends (and writes its exit
 * profile) instead of being orphaned. HEAPSIFT_SIGNAL's dump signal reaches it the same
 * way. Set after the fork: the child never has these handlers. */
static void run_forward_signals(pid_t child)
{
    static const int sigs[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2, SIGALRM, SIGWINCH};
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = run_forward;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    run_child = child;
    for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
        sigaction(sigs[i], &sa, NULL);
}

static bool run_signalled; /* the program died of a signal: the summary says what was left */

static int run_wait(pid_t child, const char *name)
{
    int status;
    while (waitpid(child, &status, 0) < 0) {
        if (errno != EINTR) {
            hs_cli_error("waitpid: %s", strerror(errno));
            return 3;
        }
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) {
        run_signalled = true;
        /* whether it wrote its exit profile is the summary's to say (a terminating
           signal's handler writes one): "no profile at exit" was said of written ones */
        fprintf(stderr, "heapsift: %s killed by signal %d (%s)\n", name, WTERMSIG(status),
                strsignal(WTERMSIG(status)));
        return 128 + WTERMSIG(status);
    }
    return 1;
}

/* The directory of path (a pattern: checked only when it holds no %), as it will be used. */
static int run_check_dir(const char *env, const char *what)
{
    const char *path = getenv(env);
    char dir[PATH_MAX];
    int e = path && *path ? hs_pattern_dir_check(path, dir, sizeof(dir)) : 0;
    if (e <= 0)
        return 0;
    hs_cli_error("run: cannot write %s in %s (%s): %s", what, dir, env, strerror(e));
    return 3;
}

/* The file execvp would run for cmd (PATH searched when it has no slash), in out. */
static bool run_resolve(const char *cmd, char *out, size_t cap)
{
    if (strchr(cmd, '/')) {
        snprintf(out, cap, "%s", cmd);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    for (const char *p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
        size_t n = strcspn(p, ":");
        snprintf(out, cap, "%.*s/%s", (int)(n ? n : 1), n ? p : ".", cmd);
        if (access(out, X_OK) == 0)
            return true;
        p += n + (p[n] == ':');
    }
    return false;
}

/* Whether path is an ELF executable without a program interpreter (fully static, static
 * PIE included): the dynamic loader, which reads LD_PRELOAD, never runs for it. */
static bool run_is_static(const char *path)
{
    Elf64_Ehdr eh;
    bool stat_exe = false;
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    if (fread(&eh, sizeof(eh), 1, f) == 1 && memcmp(eh.e_ident, ELFMAG, SELFMAG) == 0 &&
        eh.e_ident[EI_CLASS] == ELFCLASS64 && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN) &&
        eh.e_phentsize == sizeof(Elf64_Phdr)) {
        bool interp = false;
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (fseek(f, (long)(eh.e_phoff + i * sizeof(ph)), SEEK_SET) != 0 ||
                fread(&ph, sizeof(ph), 1, f) != 1)
                break;
            interp |= ph.p_type == PT_INTERP;
        }
        /* static PIE: ET_DYN with PT_DYNAMIC (it relocates itself), no interpreter */
        stat_exe = !interp && eh.e_entry != 0;
    }
    fclose(f);
    return stat_exe;
}

/* Runs `sh -c 'exit 4'` with the library preloaded and HEAPSIFT_PROBE set: the library
 * reads the options as the program's copy will, says what is wrong on one line, and exits
 * in its constructor (0 or 1); the shell's 4 means the dynamic loader could not preload
 * it. Not this executable: a heapsift built with ASan (make test-sanitize) cannot run
 * with another library ahead of its runtime. */
static int run_probe(const char *lib)
{
    pid_t pid = fork();
    if (pid < 0) {
        hs_cli_error("fork: %s", strerror(errno));
        return 3;
    }
    if (pid == 0) {
        char *args[] = {"sh", "-c", "exit 4", NULL};
        setenv("HEAPSIFT_PROBE", "1", 1);
        setenv("HEAPSIFT_OUT", "/dev/null", 1); /* were it a library without the probe */
        unsetenv("HEAPSIFT_HTTP");
        execv("/bin/sh", args);
        _exit(5);
    }
    int st;
    while (waitpid(pid, &st, 0) < 0)
        if (errno != EINTR)
            return 3;
    int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 5;
    if (rc == 0 || rc == 1)
        return rc;
    if (rc == 4)
        hs_cli_error("run: %s could not be preloaded (not found by the dynamic loader, or not "
                     "a library for this machine); give its path with --lib",
                     lib);
    else
        hs_cli_error("run: could not check the options with %s (status %d)", lib, rc);
    return 3;
}

/* The report file every process of the tree appends its written profiles to (dump.c):
 * created empty here, given by HEAPSIFT_RUN_REPORT. NULL when it cannot be made (the run
 * goes on without the summary). */
static char *run_report_open(void)
{
    const char *dir = getenv("TMPDIR");
    char *path = NULL;
    if (asprintf(&path, "%s/heapsift-run.XXXXXX", dir && *dir ? dir : "/tmp") < 0)
        return NULL;
    int fd = mkstemp(path);
    if (fd < 0) {
        free(path);
        return NULL;
    }
    close(fd);
    setenv("HEAPSIFT_RUN_REPORT", path, 1);
    return path;
}

/* The reach notes of the tree's profiles (runreport.c's fields after the path), each
 * once, with the first profile that has it and how many have it. */
#define RUN_NOTES 16
typedef struct {
    char text[1024], path[1100], first[1024]; /* first: the first note as written */
    int count;
} run_note_t;

static void run_note_add(run_note_t *notes, int *nn, const char *text, const char *path)
{
    char same[200];
    const char *orig = text;
    const char *rate = strstr(text, " reached heapsift, none was sampled at rate ");
    if (strncmp(text, "reach: empty profile: ", 22) == 0 && rate) { /* one note, not one a count */
        snprintf(same, sizeof(same),
                 "reach: empty profile: allocation calls reached heapsift, none was sampled at "
                 "rate %s",
                 rate + strlen(" reached heapsift, none was sampled at rate "));
        text = same;
    }
    for (int i = 0; i < *nn; i++)
        if (strcmp(notes[i].text, text) == 0) {
            notes[i].count++;
            return;
        }
    if (*nn == RUN_NOTES)
        return;
    snprintf(notes[*nn].text, sizeof(notes[0].text), "%s", text);
    snprintf(notes[*nn].first, sizeof(notes[0].first), "%s", orig);
    snprintf(notes[*nn].path, sizeof(notes[0].path), "%s", path);
    notes[(*nn)++].count = 1;
}

/* What the profiles miss: each reach note once, naming a profile that carries it. Said even
 * with --quiet (which silences where profiles went): the library leaves them to this
 * summary under heapsift run, and an empty profile must not pass unnoticed. */
static void run_notes_print(const run_note_t *notes, int nn)
{
    for (int i = 0; i < nn; i++) {
        if (notes[i].count > 1)
            fprintf(stderr, "heapsift: %s (%s and %d other profile%s)\n", notes[i].text,
                    notes[i].path, notes[i].count - 1, notes[i].count == 2 ? "" : "s");
        else
            fprintf(stderr, "heapsift: %s (%s)\n", notes[i].first, notes[i].path);
    }
}

/* How many profiles the tree wrote (each path once, still there), and which holds the most
 * in use (all: false under --quiet, not said); then what reach found in them. */
static void run_summary(const char *report, bool all)
{
    FILE *f = fopen(report, "r");
    char line[4200], best[1100] = "", seen[64][1100];
    static run_note_t notes[RUN_NOTES];
    long long most = -1, v;
    int n = 0, more = 0, nn = 0;
    while (f && fgets(line, sizeof(line), f)) {
        char *tab = strchr(line, '\t');
        if (!tab || sscanf(line, "%lld", &v) != 1)
            continue;
        line[strcspn(line, "\n")] = '\0';
        char *path = tab + 1, *note = strchr(path, '\t');
        if (note)
            *note++ = '\0';
        if (access(path, F_OK) != 0)
            continue; /* removed since (HEAPSIFT_KEEP), or a temporary name */
        bool dup = false;
        for (int i = 0; i < n && i < 64 && !dup; i++)
            dup = strcmp(seen[i], path) == 0;
        if (!dup && n < 64)
            snprintf(seen[n], sizeof(seen[n]), "%s", path);
        n += !dup && n < 64;
        more += !dup && n >= 64;
        for (char *t = note; !dup && t && *t; t = note) {
            note = strchr(t, '\t');
            if (note)
                *note++ = '\0';
            run_note_add(notes, &nn, t, path);
        }
        if (v > most) {
            most = v;
            snprintf(best, sizeof(best), "%s", path);
        }
    }
    if (f)
        fclose(f);
    if (n + more == 0) {
        if (all && run_signalled)
            fprintf(stderr, "heapsift: no profile was written\n");
        return;
    }
    char mb[32];
    snprintf(mb, sizeof(mb), "%.1f MB", (double)most / 1e6);
    if (all)
        fprintf(stderr, "heapsift: %d profile%s written; the most in use: %s (%s)\n", n + more,
                n + more == 1 ? "" : "s", best, mb);
    run_notes_print(notes, nn);
}

int hs_cmd_run(int argc, char **argv)
{
    const char *given = NULL;
    char libbuf[PATH_MAX];
    int first = run_parse(argc, argv, &given);
    if (first == -1) {
        run_usage(stdout);
        return 0;
    }
    if (first == -2)
        return 1;
    if (first >= argc) {
        hs_cli_error("run: no command given");
        run_usage(stderr);
        return 1;
    }
    const char *lib = run_find_lib(given, libbuf, sizeof(libbuf));
    if (strchr(lib, '/') && access(lib, R_OK) != 0) {
        hs_cli_error("%s: %s", lib, strerror(errno));
        return 3;
    }
    run_set_preload(lib);
    int rc = run_check_dir("HEAPSIFT_OUT", "profiles");
    if (rc == 0)
        rc = run_check_dir("HEAPSIFT_HTTP_PORTFILE", "the port file");
    if (rc == 0)
        rc = run_probe(lib);
    char exe[PATH_MAX];
    if (rc == 0 && run_resolve(argv[first], exe, sizeof(exe)) && run_is_static(exe)) {
        hs_cli_error("run: %s is statically linked: the dynamic loader, which preloads "
                     "libheapsift.so, never runs for it, so nothing could be profiled; "
                     "link it dynamically",
                     exe);
        rc = 3;
    }
    if (rc != 0)
        return rc;
    char *report = run_report_open();
    /* Like a shell waiting for a foreground job: the terminal's signals go to CMD. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    pid_t child = fork();
    if (child < 0) {
        hs_cli_error("fork: %s", strerror(errno));
        return 3;
    }
    if (child == 0)
        run_exec_child(argv + first);
    run_forward_signals(child);
    rc = run_wait(child, argv[first]);
    if (report) {
        const char *verbose = getenv("HEAPSIFT_VERBOSE");
        bool quiet = verbose && strcmp(verbose, "0") == 0;
        hs_run_rescue(report, quiet); /* processes that could not write their profile */
        run_summary(report, !quiet);
        unlink(report);
        free(report);
    }
    return rc;
}

/* ---- shared with attach.c: the same options, library lookup and checks ------------- */

const hs_run_opt_t *hs_run_opts(size_t *n)
{
    *n = RUN_NOPTS;
    return run_opts;
}

int hs_run_set_option(size_t i, const char *value)
{
    if (run_opts[i].fixed)
        return setenv(run_opts[i].env, run_opts[i].fixed, 1);
    return run_set_path(run_opts[i].env, value);
}

const char *hs_run_find_lib(const char *given, char *out, size_t cap)
{
    return run_find_lib(given, out, cap);
}

int hs_run_check_dir(const char *env, const char *what)
{
    return run_check_dir(env, what);
}

int hs_run_probe(const char *lib)
{
    return run_probe(lib);
}

bool hs_run_is_static(const char *path)
{
    return run_is_static(path);
}

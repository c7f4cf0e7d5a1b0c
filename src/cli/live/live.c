/*
 * `heapsift diagnose PID|URL [--seconds N] [--leak-check] [--keep DIR] [--json]`: the
 * diagnosis of a running process (docs/diagnose.md, "Live targets"). Takes one profile
 * from the endpoint, or with --seconds N five of them a quarter of N apart (a series whose
 * growth the engine judges; fewer below N = 5 s, as they are 1.25 s apart at least), the last one a
 * leak check (reachable=yes|no labels) with
 * --leak-check; writes them into a temporary directory (or DIR, kept), runs the engine
 * on them, removes the directory. A PID's endpoint is found or attached by live_pid.c.
 * Exit codes: 0, 1 usage, 2 bad input or an unreachable target, 3 I/O or attach failure.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "live.h"
#include "reports/diagnose.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LIVE_STEPS 4 /* --seconds N: a profile every N/4 s, five in all */
/* The endpoint reuses a profile built less than HS_HTTP_CACHE_MS (1 s) ago: two profiles
 * of a series are at least this far apart, so none is a copy of the one before. */
#define LIVE_MIN_STEP 1.25

typedef struct {
    const char *target, *keep;
    double seconds;
    bool leak, json;
    long pid;
    char base[512], token[160], dir[4096];
    char *paths[LIVE_STEPS + 1];
    size_t n;
} live_t;

static bool live_is_pid(const char *t)
{
    size_t i = 0;
    while (isdigit((unsigned char)t[i]))
        i++;
    return i > 0 && t[i] == '\0';
}

static bool live_is_url(const char *t)
{
    return strncmp(t, "http://", 7) == 0 || strncmp(t, "https://", 8) == 0;
}

bool hs_live_is_target(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--seconds") == 0 || strcmp(argv[i], "--keep") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] == '-')
            continue;
        struct stat st;
        return (live_is_pid(argv[i]) && stat(argv[i], &st) != 0) || live_is_url(argv[i]);
    }
    return false;
}

static void live_usage(FILE *f)
{
    fprintf(f, "usage: heapsift diagnose [--seconds N] [--leak-check] [--keep DIR] [--json] "
               "PID|URL\n"
               "\n"
               "The diagnosis of a running process (see heapsift diagnose --help for the\n"
               "findings). URL is its heapsift endpoint (http://HOST:PORT); a PID is read\n"
               "through the endpoint it serves, or heapsift is attached for the while.\n"
               "\n"
               "  --seconds N    five profiles over N seconds (N >= 1.25; fewer below 5),\n"
               "                 so growth is judged\n"
               "  --leak-check   the last profile is a reachability scan (leak findings)\n"
               "  --keep DIR     keep the profiles taken in DIR\n"
               "  --json         the JSON contract of docs/diagnose.md\n"
               "\nExit status: 0 ok, 1 usage, 2 bad input or target, 3 I/O or attach error.\n");
}

/* 0, 1 usage (printed), or -1 help printed. */
static int live_args(live_t *L, int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            live_usage(stdout);
            return -1;
        } else if (strcmp(a, "--json") == 0) {
            L->json = true;
        } else if (strcmp(a, "--leak-check") == 0) {
            L->leak = true;
        } else if (strcmp(a, "--seconds") == 0 && i + 1 < argc) {
            char *end;
            L->seconds = strtod(argv[++i], &end);
            if (*end || !(L->seconds >= LIVE_MIN_STEP && L->seconds <= 86400)) {
                hs_cli_error("diagnose: --seconds wants a number of seconds from %.2f (the "
                             "endpoint reuses a profile for 1 s), not '%s'",
                             LIVE_MIN_STEP, argv[i]);
                return 1;
            }
        } else if (strcmp(a, "--keep") == 0 && i + 1 < argc) {
            L->keep = argv[++i];
        } else if (a[0] == '-') {
            hs_cli_error(
                "diagnose: unknown option or missing value '%s' (see heapsift diagnose --help)", a);
            return 1;
        } else if (L->target) {
            hs_cli_error("diagnose: one live target at a time ('%s' and '%s')", L->target, a);
            return 1;
        } else {
            L->target = a;
        }
    }
    if (!L->target) {
        live_usage(stderr);
        return 1;
    }
    return 0;
}

/* The endpoint's base (scheme, host, port) of a URL target. */
static void live_base(live_t *L)
{
    snprintf(L->base, sizeof(L->base), "%s", L->target);
    char *d = strstr(L->base + 8, "/debug/");
    if (d)
        *d = '\0';
    size_t k = strlen(L->base);
    while (k > 8 && L->base[k - 1] == '/')
        L->base[--k] = '\0';
}

static int live_dir(live_t *L)
{
    if (L->keep) {
        if (mkdir(L->keep, 0700) != 0 && errno != EEXIST) {
            hs_cli_error("diagnose: %s: %s", L->keep, strerror(errno));
            return -1;
        }
        snprintf(L->dir, sizeof(L->dir), "%s", L->keep);
        return 0;
    }
    const char *tmp = getenv("TMPDIR");
    snprintf(L->dir, sizeof(L->dir), "%s/heapsift-diagnose.XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(L->dir)) {
        hs_cli_error("diagnose: %s: %s", L->dir, strerror(errno));
        return -1;
    }
    return 0;
}

static int live_save(const char *path, const hs_buf_t *b)
{
    FILE *f = fopen(path, "we");
    if (!f)
        return -1;
    size_t w = fwrite(b->data, 1, b->len, f);
    return (fclose(f) == 0 && w == b->len) ? 0 : -1;
}

/* Takes profile i (the last a leak check with --leak-check) into the directory. */
static int live_take(live_t *L, size_t i, bool last, hs_buf_t *b)
{
    char url[640], err[512];
    bool leak = last && L->leak;
    snprintf(url, sizeof(url), "%s%s", L->base,
             leak ? "/debug/heapsift/leakcheck" : "/debug/pprof/heap");
    if (hs_live_fetch(url, leak, L->token, b, err, sizeof(err)) != 0) {
        hs_cli_error("diagnose: %s", err);
        return 2;
    }
    if (asprintf(&L->paths[i], "%s/profile.%zu.pb.gz", L->dir, i) < 0) {
        L->paths[i] = NULL;
        return 3;
    }
    L->n = i + 1;
    if (live_save(L->paths[i], b) != 0) {
        hs_cli_error("diagnose: %s: %s", L->paths[i], strerror(errno));
        return 3;
    }
    return 0;
}

static void live_sleep_until(const struct timespec *t0, double at)
{
    struct timespec now;
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        double left =
            at - ((double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9);
        if (left <= 0)
            return;
        struct timespec d = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        nanosleep(&d, NULL);
    }
}

static int live_series(live_t *L)
{
    hs_buf_t b = HS_BUF_INIT;
    size_t steps = (size_t)(L->seconds / LIVE_MIN_STEP);
    steps = steps > LIVE_STEPS ? LIVE_STEPS : steps;
    size_t n = L->seconds > 0 ? steps + 1 : 1;
    struct timespec t0;
    int rc = 0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (size_t i = 0; i < n && rc == 0; i++) {
        live_sleep_until(&t0, L->seconds * (double)i / (double)(n > 1 ? n - 1 : 1));
        rc = live_take(L, i, i + 1 == n, &b);
    }
    hs_buf_free(&b);
    return rc;
}

/* The endpoint of a PID: its own, or one attached now (*attached). */
static int live_pid(live_t *L, bool *attached)
{
    char path[64];
    struct stat st;
    L->pid = strtol(L->target, NULL, 10);
    snprintf(path, sizeof(path), "/proc/%ld", L->pid);
    if (stat(path, &st) != 0) {
        hs_cli_error("diagnose: %s: no such process", L->target);
        return 2;
    }
    if (hs_live_pid_endpoint(L->pid, L->base, sizeof(L->base), L->token, sizeof(L->token)) == 0)
        return 0;
    unsigned char r[16];
    if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
        return 3;
    for (size_t i = 0; i < sizeof(r); i++)
        snprintf(L->token + 2 * i, 3, "%02x", r[i]);
    int rc = hs_live_pid_attach(L->pid, L->dir, L->token, L->base, sizeof(L->base));
    *attached = rc == 0;
    return rc;
}

static void live_cleanup(live_t *L)
{
    char p[4200];
    for (size_t i = 0; i < L->n; i++) {
        if (!L->keep)
            unlink(L->paths[i]);
        free(L->paths[i]);
    }
    /* the attach's port file always goes; its window profile stays with --keep */
    snprintf(p, sizeof(p), "%s/attach.port", L->dir);
    unlink(p);
    if (L->keep)
        return;
    const char *extra[] = {"attach-window.pb.gz"};
    for (size_t i = 0; i < 1; i++) {
        snprintf(p, sizeof(p), "%s/%s", L->dir, extra[i]);
        unlink(p);
    }
    rmdir(L->dir);
}

int hs_live_diagnose(int argc, char **argv)
{
    live_t L = {0};
    bool attached = false;
    int rc = live_args(&L, argc, argv);
    if (rc != 0)
        return rc < 0 ? 0 : rc;
    if (live_dir(&L) != 0)
        return 3;
    if (live_is_pid(L.target))
        rc = live_pid(&L, &attached);
    else
        live_base(&L);
    if (rc == 0)
        rc = live_series(&L);
    if (attached && hs_live_pid_detach(L.pid) != 0 && rc == 0)
        rc = 3;
    if (rc == 0 &&
        hs_diagnose_files((const char *const *)L.paths, L.n, L.target, L.json, stdout) != 0)
        rc = 2;
    if (rc == 0 && fflush(stdout) != 0)
        rc = 3;
    live_cleanup(&L);
    return rc;
}

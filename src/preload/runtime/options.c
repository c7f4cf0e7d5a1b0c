/*
 * Options: every HEAPSIFT_* variable, read once from the environment at initialisation
 * through one table (name, default, parser, bounds). getenv only (or, for a library
 * injected by `heapsift attach`, the same names looked up in its options file: attach.c);
 * no allocation. A bad
 * value is reported in one line naming the variable and the value, and the caller turns
 * profiling off: the program then runs unprofiled rather than dying.
 */
#define _GNU_SOURCE
#include "debugcheck.h"
#include "log.h"
#include "options.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

hs_options_t hs_opt;

static const char *options_getenv(const char *name)
{
    return getenv(name);
}

/* Where hs_options_load reads values: the environment, or attach's options file. */
static const char *(*options_source)(const char *name) = options_getenv;

void hs_options_set_source(const char *(*lookup)(const char *name))
{
    options_source = lookup ? lookup : options_getenv;
}

typedef enum {
    HS_OPT_STR,
    HS_OPT_BYTES,
    HS_OPT_UINT,
    HS_OPT_BOOL,
    HS_OPT_SIGNAL,   /* a signal name (USR2, SIGUSR2, RTMIN+1) or number -> uint32 */
    HS_OPT_SECONDS,  /* seconds, decimals allowed, or N ms -> uint64 milliseconds */
    HS_OPT_PERCENT,  /* a percentage (10 or 10%) -> uint32 per-mille */
    HS_OPT_FRACTION, /* a fraction (0.9 or 90%) -> uint32 per-mille */
    HS_OPT_ENUM,     /* one of the words in `words` -> the table's own string */
} hs_opt_kind_t;

typedef struct {
    const char *name;
    hs_opt_kind_t kind;
    const char *def;
    uint64_t min, max;
    void *dst;
    size_t width;             /* sizeof *dst: numbers are stored as uint32_t or uint64_t */
    const char *expect;       /* what a good value looks like, for the error line */
    const char *const *words; /* HS_OPT_ENUM: the accepted values, NULL-terminated */
} hs_opt_def_t;

/* The destination field of hs_opt and its width, for the table below. */
#define OPT_DST(field) &hs_opt.field, sizeof(hs_opt.field)

static const char *const hs_unwinders[] = {"dwarf", "libgcc", "fp", NULL};
static const char *const hs_symbolize_modes[] = {"lines", "full", "names", "none", NULL};
static const char *const hs_hooks_modes[] = {"auto", "got", "off", NULL};
static const char *const hs_leaks_modes[] = {"0", "1", "error", NULL};

/* Parses a decimal with an optional K/M/G/T (powers of 1024) suffix. */
static bool options_parse_uint(const char *s, bool suffixes, uint64_t *out)
{
    if (!*s || *s == '-' || *s == '+' || *s == ' ')
        return false;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s)
        return false;
    unsigned shift = 0;
    if (suffixes && *end) {
        const char *units = "KMGT";
        const char *u = strchr(units, *end & ~0x20);
        if (!u)
            return false;
        shift = 10u * (unsigned)(u - units + 1);
        end++;
        if ((*end & ~0x20) == 'I')
            end++;
        if ((*end & ~0x20) == 'B')
            end++;
        if (v > (~0ull >> shift))
            return false;
    }
    if (*end)
        return false;
    *out = (uint64_t)v << shift;
    return true;
}

/* Parses "D[.DDD]" into thousandths (further decimals are ignored); *end gets the rest. */
static bool options_parse_milli(const char *s, uint64_t *out, const char **end)
{
    uint64_t v = 0, scale = 1000;
    bool digits = false;
    for (; *s >= '0' && *s <= '9'; s++, digits = true) {
        if (v > UINT64_MAX / 10000)
            return false;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    v *= 1000;
    if (*s == '.')
        for (s++; *s >= '0' && *s <= '9'; s++, digits = true)
            if ((scale /= 10) > 0)
                v += (uint64_t)(*s - '0') * scale;
    *out = v;
    *end = s;
    return digits;
}

/* Seconds ("60", "0.25", "250ms") -> milliseconds; percent ("10", "10%") or fraction
 * ("0.9", "90%") -> per-mille. */
static bool options_parse_scaled(const char *s, hs_opt_kind_t kind, uint64_t *out)
{
    const char *end;
    uint64_t m;
    if (!options_parse_milli(s, &m, &end))
        return false;
    if (kind == HS_OPT_SECONDS) {
        if (strcmp(end, "ms") == 0)
            m /= 1000;
        else if (*end && strcmp(end, "s") != 0)
            return false;
    } else if (*end == '%' && !end[1]) {
        m /= 100; /* percent -> per-mille */
    } else if (*end) {
        return false;
    } else if (kind == HS_OPT_PERCENT) {
        m /= 100;
    }
    *out = m;
    return true;
}

static const struct {
    const char *name;
    int num;
} hs_signals[] = {
    {"HUP", SIGHUP},       {"INT", SIGINT},     {"QUIT", SIGQUIT}, {"USR1", SIGUSR1},
    {"USR2", SIGUSR2},     {"PIPE", SIGPIPE},   {"ALRM", SIGALRM}, {"TERM", SIGTERM},
    {"CHLD", SIGCHLD},     {"CONT", SIGCONT},   {"TSTP", SIGTSTP}, {"TTIN", SIGTTIN},
    {"TTOU", SIGTTOU},     {"URG", SIGURG},     {"XCPU", SIGXCPU}, {"XFSZ", SIGXFSZ},
    {"PROF", SIGPROF},     {"WINCH", SIGWINCH}, {"IO", SIGIO},     {"PWR", SIGPWR},
    {"VTALRM", SIGVTALRM},
};

/* A signal the profiler may catch: not KILL/STOP (impossible) nor one the kernel raises
 * for a faulting instruction (a handler that returns would re-run the fault forever). */
static bool options_parse_signal(const char *s, uint64_t *out)
{
    uint64_t n = 0;
    if (strncasecmp(s, "SIG", 3) == 0)
        s += 3;
    if (options_parse_uint(s, false, &n)) {
        /* a number */
    } else if (strncasecmp(s, "RTMIN", 5) == 0) {
        uint64_t k = 0;
        if (s[5] && (s[5] != '+' || !options_parse_uint(s + 6, false, &k)))
            return false;
        n = (uint64_t)SIGRTMIN + k;
    } else {
        for (size_t i = 0; i < sizeof(hs_signals) / sizeof(hs_signals[0]); i++)
            if (strcasecmp(s, hs_signals[i].name) == 0)
                n = (uint64_t)hs_signals[i].num;
    }
    if (n == 0 || n > (uint64_t)SIGRTMAX || n == SIGKILL || n == SIGSTOP || n == SIGSEGV ||
        n == SIGBUS || n == SIGILL || n == SIGFPE || n == SIGTRAP || n == SIGABRT || n == SIGSYS)
        return false;
    *out = n;
    return true;
}

static bool options_parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on", NULL};
    static const char *const no[] = {"0", "no", "false", "off", NULL};
    for (int i = 0; yes[i]; i++)
        if (strcasecmp(s, yes[i]) == 0)
            return *out = true, true;
    for (int i = 0; no[i]; i++)
        if (strcasecmp(s, no[i]) == 0)
            return *out = false, true;
    return false;
}

/* The table's copy of v if it is one of words (so no pointer into the environment is
 * kept), else NULL. */
static const char *options_word(const char *const *words, const char *v)
{
    for (int i = 0; words[i]; i++)
        if (strcmp(v, words[i]) == 0)
            return words[i];
    return NULL;
}

static int options_apply(const hs_opt_def_t *d, const char *v)
{
    uint64_t u = 0;
    switch (d->kind) {
    case HS_OPT_ENUM:
        *(const char **)d->dst = options_word(d->words, v);
        return *(const char **)d->dst ? 0 : -EINVAL;
    case HS_OPT_STR:
        if (!*v)
            return -EINVAL;
        *(const char **)d->dst = v;
        return 0;
    case HS_OPT_BOOL:
        return options_parse_bool(v, (bool *)d->dst) ? 0 : -EINVAL;
    case HS_OPT_BYTES:
    case HS_OPT_UINT:
    case HS_OPT_SIGNAL:
    case HS_OPT_SECONDS:
    case HS_OPT_PERCENT:
    case HS_OPT_FRACTION:
        if (d->kind == HS_OPT_SIGNAL) {
            if (strcmp(v, "0") != 0 && !options_parse_signal(v, &u))
                return -EINVAL;
        } else if (d->kind == HS_OPT_BYTES || d->kind == HS_OPT_UINT) {
            if (!options_parse_uint(v, d->kind == HS_OPT_BYTES, &u))
                return -EINVAL;
        } else if (!options_parse_scaled(v, d->kind, &u)) {
            return -EINVAL;
        }
        if (u < d->min || u > d->max)
            return -EINVAL;
        hs_assert(d->width == sizeof(uint64_t) || d->max <= UINT32_MAX);
        if (d->width == sizeof(uint32_t))
            *(uint32_t *)d->dst = (uint32_t)u;
        else
            *(uint64_t *)d->dst = u;
        return 0;
    }
    return -EINVAL;
}

/* The strings point into the environment, which a program may rewrite (setproctitle
 * overwrites environ's strings in place): keep our own copies. */
static int options_own_strings(void)
{
    static char out[4096];
    size_t n = strlen(hs_opt.out);
    if (n >= sizeof(out)) {
        hs_log("HEAPSIFT_OUT: longer than %zu bytes; profiling disabled", sizeof(out) - 1);
        return -EINVAL;
    }
    memcpy(out, hs_opt.out, n + 1);
    hs_opt.out = out;
    for (const char *c = out; (c = strchr(c, '%')) != NULL && c[1]; c += 2)
        if (!strchr("pnk%", c[1])) {
            hs_log("HEAPSIFT_OUT=%s: %%%c is not an escape (%%p pid, %%n dump number, %%k kind, "
                   "%%%% a percent sign): kept as written",
                   out, c[1]);
            break;
        }
    return 0;
}

int hs_options_load(void)
{
    const hs_opt_def_t defs[] = {
        {"HEAPSIFT_OUT", HS_OPT_STR, "heapsift.%p.pb.gz", 0, 0, OPT_DST(out), "a path pattern",
         NULL},
        {"HEAPSIFT_RATE", HS_OPT_BYTES, "524288", 0, 1ull << 40, OPT_DST(rate),
         "bytes between samples, e.g. 524288 or 512K; 1 = all, 0 = off", NULL},
        {"HEAPSIFT_SEED", HS_OPT_UINT, "0", 0, UINT64_MAX, OPT_DST(seed), "an integer", NULL},
        {"HEAPSIFT_DEPTH", HS_OPT_UINT, "64", 1, 256, OPT_DST(depth), "frames, 1 to 256", NULL},
        {"HEAPSIFT_MAX_STACKS", HS_OPT_UINT, "65536", 16, 1u << 24, OPT_DST(max_stacks),
         "a number of stacks, 16 to 16777216", NULL},
        {"HEAPSIFT_UNWIND", HS_OPT_ENUM, "dwarf", 0, 0, OPT_DST(unwind), "dwarf, libgcc or fp",
         hs_unwinders},
        {"HEAPSIFT_SYMBOLIZE", HS_OPT_ENUM, "lines", 0, 0, OPT_DST(symbolize),
         "lines, full, names or none", hs_symbolize_modes},
        {"HEAPSIFT_HOOKS", HS_OPT_ENUM, "auto", 0, 0, OPT_DST(hooks), "auto, got or off",
         hs_hooks_modes},
        {"HEAPSIFT_CHILDREN", HS_OPT_BOOL, "1", 0, 0, OPT_DST(children), "0 or 1", NULL},
        {"HEAPSIFT_VERBOSE", HS_OPT_BOOL, "0", 0, 0, OPT_DST(verbose), "0 or 1", NULL},
        {"HEAPSIFT_SIGNAL", HS_OPT_SIGNAL, "0", 0, UINT32_MAX, OPT_DST(signal),
         "a signal name or number, e.g. USR2 or 12; not KILL, STOP or a fault signal", NULL},
        {"HEAPSIFT_INTERVAL_BYTES", HS_OPT_BYTES, "0", 0, UINT64_MAX, OPT_DST(interval_bytes),
         "bytes allocated between dumps, e.g. 4G; 0 = off", NULL},
        {"HEAPSIFT_INTERVAL_SECONDS", HS_OPT_SECONDS, "0", 0, UINT64_MAX / 2, OPT_DST(interval_ms),
         "seconds between dumps, e.g. 60, 0.5 or 250ms; 0 = off", NULL},
        {"HEAPSIFT_PEAK", HS_OPT_BOOL, "0", 0, 0, OPT_DST(peak), "0 or 1", NULL},
        {"HEAPSIFT_DUMP_ON_TERM", HS_OPT_BOOL, "1", 0, 0, OPT_DST(dump_on_term), "0 or 1", NULL},
        {"HEAPSIFT_PEAK_GROWTH", HS_OPT_PERCENT, "0", 0, 1000000, OPT_DST(peak_growth),
         "a growth in percent, e.g. 10%; 0 = no dumps at new peaks", NULL},
        {"HEAPSIFT_PEAK_MIN_SECONDS", HS_OPT_SECONDS, "10", 0, UINT64_MAX / 2, OPT_DST(peak_min_ms),
         "seconds between peak dumps, e.g. 10", NULL},
        {"HEAPSIFT_OOM_FRACTION", HS_OPT_FRACTION, "0", 0, 1000, OPT_DST(oom_fraction),
         "a fraction of the memory limit, e.g. 0.9 or 90%; 0 = off", NULL},
        {"HEAPSIFT_KEEP", HS_OPT_UINT, "0", 0, 1u << 20, OPT_DST(keep),
         "a number of files per kind; 0 = keep all", NULL},
        {"HEAPSIFT_LEAKS", HS_OPT_ENUM, "0", 0, 0, OPT_DST(leaks), "0, 1 or error", hs_leaks_modes},
        {"HEAPSIFT_SUPPRESSIONS", HS_OPT_STR, NULL, 0, 0, OPT_DST(suppressions),
         "a path to a suppressions file", NULL},
        {"HEAPSIFT_LEAKS_MAX", HS_OPT_UINT, "20", 0, 1u << 24, OPT_DST(leaks_max),
         "a number of sites; 0 = all", NULL},
        {"HEAPSIFT_LEAKS_REACHABLE", HS_OPT_BOOL, "0", 0, 0, OPT_DST(leaks_reachable), "0 or 1",
         NULL},
        {"HEAPSIFT_LEAKS_SNAPSHOT", HS_OPT_BOOL, "1", 0, 0, OPT_DST(leaks_snapshot), "0 or 1",
         NULL},
        {"HEAPSIFT_HTTP", HS_OPT_STR, NULL, 0, 0, OPT_DST(http), "HOST:PORT, e.g. 127.0.0.1:6060",
         NULL},
        {"HEAPSIFT_HTTP_PORTFILE", HS_OPT_STR, NULL, 0, 0, OPT_DST(http_portfile), "a path", NULL},
        {"HEAPSIFT_HTTP_TOKEN", HS_OPT_STR, NULL, 0, 0, OPT_DST(http_token), "a token", NULL},
        {"HEAPSIFT_METRICS_SITES", HS_OPT_UINT, "10", 0, 1000, OPT_DST(metrics_sites),
         "a number of sites, 0 to 1000; 0 = none", NULL},
        {"HEAPSIFT_SPOOL", HS_OPT_STR, NULL, 0, 0, OPT_DST(spool), "a path pattern (%p: the pid)",
         NULL},
        {"HEAPSIFT_SPOOL_SIZE", HS_OPT_BYTES, "16M", 1u << 20, 1ull << 36, OPT_DST(spool_size),
         "bytes, 1M to 64G, e.g. 16M", NULL},
        {"HEAPSIFT_KEEP_SPOOL", HS_OPT_BOOL, "0", 0, 0, OPT_DST(keep_spool), "0 or 1", NULL},
        {"HEAPSIFT_SPOOL_SPARES", HS_OPT_UINT, "0", 0, 64, OPT_DST(spool_spares),
         "a number of spares, 0 to 64; 0 = 8 for a PID namespace's init under heapsift run", NULL},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
        if (defs[i].def) /* NULL: unset by default */
            options_apply(&defs[i], defs[i].def);
        const char *v = options_source(defs[i].name);
        if (!v)
            continue;
        int bad = options_apply(&defs[i], v);
        if (bad) {
            hs_log("%s=%s: invalid value (expected %s); profiling disabled", defs[i].name, v,
                   defs[i].expect);
            rc = -EINVAL;
        }
    }
    if (hs_opt.peak_growth)
        hs_opt.peak = true; /* dumps at new peaks need the kept peak */
    return options_own_strings() == 0 ? rc : -EINVAL;
}

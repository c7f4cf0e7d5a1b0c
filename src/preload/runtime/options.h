/*
 * The options (options.c): every HEAPSIFT_* variable, read once from the environment by
 * hs_options_load at initialisation into hs_opt, which is then only read (but for the
 * rate, which heapsift_set_rate changes atomically).
 */
#ifndef HS_OPTIONS_H
#define HS_OPTIONS_H

#include "core.h"

#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const char *out; /* output path pattern */
    uint64_t rate;   /* mean bytes between samples; 0 off, 1 every allocation */
    uint64_t seed;   /* 0 = random */
    uint32_t depth;  /* frames per stack, 1..256 */
    uint32_t max_stacks;
    const char *unwind;    /* unwinder variant name */
    const char *symbolize; /* lines, full (+ separate debug files), names, none */
    const char *hooks;     /* "auto" or "off": in-place hooks on bypassing allocators */
    bool children;         /* exec'd children stay profiled */
    bool verbose;          /* say where each profile went */
    /* Triggers (triggers.c); 0 = off. */
    uint32_t signal;         /* dump on this signal */
    uint64_t interval_bytes; /* dump every this many bytes allocated */
    uint64_t interval_ms;    /* dump every this many milliseconds */
    bool peak;               /* keep the live set at the highest live heap */
    bool dump_on_term;       /* write the exit profile on SIGINT/TERM/HUP (termsig.c) */
    uint32_t peak_growth;    /* dump at new peaks this many per-mille above the last */
    uint64_t peak_min_ms;    /* at most one peak dump per this many milliseconds */
    uint32_t oom_fraction;   /* dump at this many per-mille of the memory limit */
    uint32_t keep;           /* keep the newest N files of each kind */
    /* Leak report at exit (leaks.c). */
    const char *leaks;        /* "0", "1" or "error" (exit status 23 when leaks remain) */
    const char *suppressions; /* LSan-format suppressions file; NULL = none */
    uint32_t leaks_max;       /* sites listed; 0 = all */
    bool leaks_reachable;     /* error counts reachable sites too, not only unreachable */
    bool leaks_snapshot;      /* scan a fork's copy, threads paused only for the fork */
    /* The HTTP endpoint (http.c); NULL = unset. */
    const char *http;          /* HOST:PORT to serve on */
    const char *http_portfile; /* file that gets the port */
    const char *http_token;    /* token the control paths require */
    uint32_t metrics_sites;    /* top sites /metrics lists (http_metrics.c) */
    /* The post-mortem spool (spool.c); NULL = none. */
    const char *spool;     /* path pattern (%p) */
    uint64_t spool_size;   /* bytes of the file */
    bool keep_spool;       /* keep it at a normal exit */
    uint32_t spool_spares; /* spares for raw clones' children (spool_child.c); 0 = default */
} hs_options_t;

extern hs_options_t hs_opt HS_HIDDEN;

/* Reads every HEAPSIFT_* variable. Returns 0, or -EINVAL after logging one line naming
 * the bad variable and value (the caller then turns profiling off). */
int hs_options_load(void);

/* Makes hs_options_load look values up with lookup (NULL: getenv again). attach.c's
 * options file uses it: the same names, values and checks as the environment. */
void hs_options_set_source(const char *(*lookup)(const char *name));

#endif

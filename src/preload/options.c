/*
 * Options: every HEAPSIFT_* variable, read once from the environment at initialisation
 * through one table (name, default, parser, bounds). getenv only; no allocation. A bad
 * value is reported in one line naming the variable and the value, and the caller turns
 * profiling off: the program then runs unprofiled rather than dying.
 */
#define _GNU_SOURCE
#include "core.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

hs_options_t hs_opt;

typedef enum { HS_OPT_STR, HS_OPT_BYTES, HS_OPT_UINT, HS_OPT_BOOL } hs_opt_kind_t;

typedef struct {
    const char *name;
    hs_opt_kind_t kind;
    const char *def;
    uint64_t min, max;
    void *dst;
    const char *expect; /* what a good value looks like, for the error line */
} hs_opt_def_t;

static const char *const hs_unwinders[] = {"libunwind", "libgcc", "fp", NULL};

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

static int options_apply(const hs_opt_def_t *d, const char *v)
{
    uint64_t u = 0;
    switch (d->kind) {
    case HS_OPT_STR:
        if (!*v)
            return -EINVAL;
        *(const char **)d->dst = v;
        return 0;
    case HS_OPT_BOOL:
        return options_parse_bool(v, (bool *)d->dst) ? 0 : -EINVAL;
    case HS_OPT_BYTES:
    case HS_OPT_UINT:
        if (!options_parse_uint(v, d->kind == HS_OPT_BYTES, &u) || u < d->min || u > d->max)
            return -EINVAL;
        if (d->max <= UINT32_MAX)
            *(uint32_t *)d->dst = (uint32_t)u;
        else
            *(uint64_t *)d->dst = u;
        return 0;
    }
    return -EINVAL;
}

static bool options_unwind_ok(const char *v)
{
    for (int i = 0; hs_unwinders[i]; i++)
        if (strcmp(v, hs_unwinders[i]) == 0)
            return true;
    return false;
}

int hs_options_load(void)
{
    const hs_opt_def_t defs[] = {
        {"HEAPSIFT_OUT", HS_OPT_STR, "heapsift.%p.pb.gz", 0, 0, &hs_opt.out, "a path pattern"},
        {"HEAPSIFT_RATE", HS_OPT_BYTES, "524288", 0, 1ull << 40, &hs_opt.rate,
         "bytes between samples, e.g. 524288 or 512K; 1 = all, 0 = off"},
        {"HEAPSIFT_SEED", HS_OPT_UINT, "0", 0, UINT64_MAX, &hs_opt.seed, "an integer"},
        {"HEAPSIFT_DEPTH", HS_OPT_UINT, "64", 1, 256, &hs_opt.depth, "frames, 1 to 256"},
        {"HEAPSIFT_MAX_STACKS", HS_OPT_UINT, "65536", 16, 1u << 24, &hs_opt.max_stacks,
         "a number of stacks, 16 to 16777216"},
        {"HEAPSIFT_UNWIND", HS_OPT_STR, "libunwind", 0, 0, &hs_opt.unwind,
         "libunwind, libgcc or fp"},
        {"HEAPSIFT_CHILDREN", HS_OPT_BOOL, "1", 0, 0, &hs_opt.children, "0 or 1"},
        {"HEAPSIFT_VERBOSE", HS_OPT_BOOL, "0", 0, 0, &hs_opt.verbose, "0 or 1"},
    };
    int rc = 0;
    for (size_t i = 0; i < sizeof(defs) / sizeof(defs[0]); i++) {
        options_apply(&defs[i], defs[i].def);
        const char *v = getenv(defs[i].name);
        if (!v)
            continue;
        int bad = options_apply(&defs[i], v);
        if (!bad && defs[i].dst == &hs_opt.unwind && !options_unwind_ok(v))
            bad = -EINVAL;
        if (bad) {
            hs_log("%s=%s: invalid value (expected %s); profiling disabled", defs[i].name, v,
                   defs[i].expect);
            rc = -EINVAL;
        }
    }
    return rc;
}

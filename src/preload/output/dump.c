/*
 * Dumps: snapshot the tables, build a pprof heap profile (Go's four sample types, in
 * Go's order), symbolize it in the process (names an earlier dump found come from the
 * symbol cache, symcache.c), gzip it and write it atomically. Runs on the thread that
 * asked (the exit destructor or heapsift_dump) under the reentrancy guard, so everything
 * it allocates comes from the real allocator and is freed before it returns, but for
 * what the symbol cache keeps. The tables are only locked while they are copied, never
 * while encoding.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "runtime/core.h"
#include "base/fdio.h"
#include "accounting.h"
#include "dump.h"
#include "dump_int.h"
#include "model/dropframes.h"
#include "runtime/fdtable.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "runtime/outpath.h"
#include "record/peak.h"
#include "record/recorder.h"
#include "record/sampler.h"
#include "runtime/threads.h"
#include "record/fork.h"
#include "hs_version.h"
#include "record/labels.h"
#include "leaks/leaks.h"
#include "record/lifetimes.h"
#include "record/livetab.h"
#include "base/maps.h"
#include "record/modules.h"
#include "model/pprof.h"
#include "model/profile.h"
#include "reach/reach.h"
#include "runtime/hold.h"
#include "runreport.h"
#include "reports/report.h"
#include "record/stacktab.h"
#include "symbolize/symbolize.h"
#include "symcache.h"
#include "record/trackers.h"
#include "unwind/unwind.h"

#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned dump_seq;
static bool dump_interrupted; /* the dump under way has HS_DUMP_INTERRUPTED (dump lock held) */
static int64_t dump_start_ns;

/* One stack of the snapshot, with its four values. */
typedef struct {
    hs_stack_t st;
    double v[4]; /* alloc_objects, alloc_space, inuse_objects, inuse_space */
    double u[2]; /* of the inuse ones, the unreachable objects and bytes (leaks.c's scan) */
} dump_stack_t;

/* dump_ctx_t, the context the profile is built in: dump_int.h */

static int64_t dump_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* A forked child (record/fork.c, once its tables are usable): a fresh dump lock, its own
 * numbering and start time; hs_forked() says it is a child, whose files get its pid. */
static void dump_fork_child(void)
{
    pthread_mutex_init(&dump_lock, NULL);
    dump_seq = 0;
    dump_start_ns = dump_now_ns();
}

HS_CTOR(HS_CTOR_OUTPUT) static void dump_ctor(void)
{
    dump_start_ns = dump_now_ns();
    hs_fork_register(HS_FORK_RESTART, NULL, NULL, dump_fork_child);
}

/* Who is told of each pattern-named file written (HEAPSIFT_KEEP: triggers.c). */
static void (*dump_on_written_fn)(const char *kind, const char *path);

void hs_dump_on_written(void (*fn)(const char *kind, const char *path))
{
    dump_on_written_fn = fn;
}

/* What a dump describes besides its stacks: the live totals and the exact counters, as
 * of now or of the kept peak. */
typedef struct {
    hs_live_totals_t totals;
    hs_counters_t counters;
    int64_t time_ns; /* 0: now */
    hs_acct_t acct;
    hs_life_t *life;     /* per stack: freed objects and bytes by lifetime; NULL for the peak */
    hs_maps_text_t maps; /* read first, for the accounting and the mappings both */
    unsigned long long dl_gen; /* dump_dl_gen when maps was read */
    bool reach;                /* s[].u holds the exit scan's unreachable part */
} dump_meta_t;

static int dump_dl_gen_of(struct dl_phdr_info *info, size_t size, void *data)
{
    if (size < offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
        return -1;
    *(unsigned long long *)data = info->dlpi_adds ^ ((unsigned long long)info->dlpi_subs << 32);
    return 1;
}

/* The loader's counts of objects loaded and unloaded (0 if it keeps none): while they
 * stay the same, no library was mapped or unmapped in between. */
static unsigned long long dump_dl_gen(void)
{
    unsigned long long g = 0;
    return hs_reach_dl_iterate(dump_dl_gen_of, &g) == 1 ? g : 0; /* fork-safe (reach.h) */
}

/* Copies the tables: per-stack cumulative counts and the aggregated live set. */
static dump_stack_t *dump_snapshot(uint32_t *count, dump_meta_t *m)
{
    uint32_t n = hs_stacktab_count();
    dump_stack_t *s = calloc(n ? n : 1, sizeof(*s));
    double *obj = calloc(n ? n : 1, sizeof(double));
    double *bytes = calloc(n ? n : 1, sizeof(double));
    if (!s || !obj || !bytes) {
        free(s);
        s = NULL;
        goto out;
    }
    /* Lifetimes first: every free they count was of an allocation the stack table, read
     * after them, already counts. */
    m->life = calloc(n ? n : 1, sizeof(hs_life_t));
    if (m->life)
        hs_lifetimes_read(m->life, n);
    hs_livetab_aggregate(obj, bytes, n, &m->totals);
    hs_counters_read(&m->counters);
    double *uobj = calloc(n ? n : 1, sizeof(double));
    double *ubytes = calloc(n ? n : 1, sizeof(double));
    m->reach = uobj && ubytes && hs_leaks_unreached(uobj, ubytes, n);
    for (uint32_t i = 0; i < n; i++) {
        if (!hs_stacktab_get((int32_t)i, &s[i].st))
            continue;
        s[i].v[0] = s[i].st.alloc_objects;
        s[i].v[1] = s[i].st.alloc_bytes;
        s[i].v[2] = obj[i];
        s[i].v[3] = bytes[i];
        if (m->reach) { /* a block freed since the scan is not live: at most the live part */
            s[i].u[0] = uobj[i] < obj[i] ? uobj[i] : obj[i];
            s[i].u[1] = ubytes[i] < bytes[i] ? ubytes[i] : bytes[i];
        }
    }
    *count = n;
    free(uobj);
    free(ubytes);
out:
    free(obj);
    free(bytes);
    return s;
}

/* The kept peak as a snapshot (no peak kept yet: an empty one). */
static dump_stack_t *dump_snapshot_peak(uint32_t *count, dump_meta_t *m)
{
    hs_peak_t pk;
    if (!hs_peak_copy(&pk)) {
        *count = 0;
        hs_counters_read(&m->counters);
        return calloc(1, sizeof(dump_stack_t));
    }
    dump_stack_t *s = calloc(pk.n ? pk.n : 1, sizeof(*s));
    for (uint32_t i = 0; s && i < pk.n; i++) {
        if (!hs_stacktab_get((int32_t)i, &s[i].st))
            continue;
        memcpy(s[i].v, pk.v[i], sizeof(s[i].v));
    }
    *count = pk.n;
    m->totals.samples = pk.samples;
    m->totals.objects = pk.objects;
    m->totals.bytes = pk.bytes;
    m->counters = pk.counters;
    m->time_ns = pk.time_ns;
    free(pk.v);
    return s;
}
/* The sampling variance of the live bytes estimate. Per stack, taking its objects to share
 * one size s = bytes/objects with weight w(s), the variance estimate of docs/sampling.md
 * sums to bytes * s * (w - 1). Exact when each stack allocates one size; after
 * heapsift_set_rate, w is taken at the highest rate used, which can only widen it. */
static double dump_live_var(const dump_stack_t *s, uint32_t n)
{
    double var = 0;
    uint64_t rate = hs_ci_rate();
    for (uint32_t i = 0; i < n && rate > 1; i++) {
        if (s[i].v[2] <= 0 || s[i].v[3] <= 0)
            continue;
        double size = s[i].v[3] / s[i].v[2];
        double w = hs_sampler_weight((uint64_t)(size + 0.5), rate);
        var += s[i].v[3] * size * (w - 1);
    }
    return var;
}

/* The live set's estimate with its 95% interval (hs_report_interval): lo95 and hi95, and
 * ci95 the longer side, so that live_bytes +- ci95 holds the interval. */
static void dump_estimate(hs_profile_t *p, const dump_meta_t *m, double var)
{
    char line[200];
    double lo, hi;
    hs_report_interval(m->totals.bytes, var, &lo, &hi);
    snprintf(line, sizeof(line),
             "estimate: live_bytes=%.0f live_objects=%.0f ci95_bytes=%.0f lo95_bytes=%.0f "
             "hi95_bytes=%.0f",
             m->totals.bytes, m->totals.objects, hi - m->totals.bytes, lo, hi);
    hs_profile_add_comment(p, line);
}

/* A profile without a sample (after its samples are added) says why, so that it is never empty in
 * silence: no allocation call reached heapsift at all (the reach line, when there is one, says what
 * bypasses it), or some did and none was sampled. "reach: " leads it, so that heapsift top, stats
 * and run's summary show it beside the reach line. */
static void dump_empty(hs_profile_t *p, const dump_meta_t *m)
{
    char line[300];
    const hs_counters_t *k = &m->counters;
    for (size_t i = 0; i < p->nsamples; i++)
        for (size_t t = 0; t < p->ntypes; t++)
            if (p->samples[i].values[t] != 0)
                return;
    if (k->allocs == 0)
        snprintf(line, sizeof(line),
                 "reach: empty profile: no allocation call reached heapsift in this process%s",
                 hs_reach_comment() ? " (the reach line says what bypasses it)" : "");
    else
        snprintf(line, sizeof(line),
                 "reach: empty profile: %llu allocation calls (%llu bytes) reached heapsift, "
                 "none was sampled at rate %llu",
                 (unsigned long long)k->allocs, (unsigned long long)k->bytes,
                 (unsigned long long)__atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED));
    hs_profile_add_comment(p, line);
}

static int dump_header(hs_profile_t *p, const dump_meta_t *m, const char *kind, double var)
{
    static const char *const types[4][2] = {{"alloc_objects", "count"},
                                            {"alloc_space", "bytes"},
                                            {"inuse_objects", "count"},
                                            {"inuse_space", "bytes"}};
    char line[200];
    uint64_t rate = __atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        if (hs_profile_add_sample_type(p, types[i][0], types[i][1]) != 0)
            return -ENOMEM;
    p->default_sample_type = hs_profile_str(p, "inuse_space");
    if ((p->drop_frames = hs_profile_str(p, hs_dropframes_rule)) < 0) /* allocator frames */
        return -ENOMEM;
    p->period_type.type = hs_profile_str(p, "space");
    p->period_type.unit = hs_profile_str(p, "bytes");
    p->period = (int64_t)rate;
    p->time_nanos = m->time_ns ? m->time_ns : dump_now_ns();
    p->duration_nanos = p->time_nanos - dump_start_ns;
    snprintf(line, sizeof(line), "heapsift " HS_VERSION " rate=%llu unwind=%s depth=%u kind=%s",
             (unsigned long long)rate, hs_opt.unwind, hs_opt.depth, kind);
    hs_profile_add_comment(p, line);
    char proc[320];
    hs_acct_process(proc, sizeof(proc));
    hs_profile_add_comment(p, proc);
    const hs_counters_t *k = &m->counters;
    snprintf(line, sizeof(line), "exact: allocs=%llu frees=%llu bytes=%llu threads=%llu",
             (unsigned long long)k->allocs, (unsigned long long)k->frees,
             (unsigned long long)k->bytes, (unsigned long long)k->threads);
    if (hs_profile_add_comment(p, line) != 0)
        return -ENOMEM;
    snprintf(line, sizeof(line), "live samples=%llu stacks=%u dropped_stack_samples=%llu",
             (unsigned long long)m->totals.samples, hs_stacktab_count(),
             (unsigned long long)hs_stacktab_dropped());
    hs_profile_add_comment(p, line);
    dump_estimate(p, m, var);
    if (hs_reach_comment()) /* calls heapsift cannot see: never an empty profile in silence */
        hs_profile_add_comment(p, hs_reach_comment());
    if (m->reach && hs_leaks_comment()) { /* the reachable= labels' scan */
        hs_profile_add_comment(p, hs_leaks_comment());
        hs_profile_add_comment(p, hs_leaks_mode_comment());
    }
    if (hs_attach_comment()) /* where heapsift's knowledge starts (heapsift attach) */
        hs_profile_add_comment(p, hs_attach_comment());
    char acct[8][200];
    int na = hs_acct_format(&m->acct, acct, 8);
    for (int i = 0; i < na; i++)
        hs_profile_add_comment(p, acct[i]);
    char trk[HS_TRACKERS_MAX][200];
    int nt = hs_trackers_format(trk, HS_TRACKERS_MAX);
    for (int i = 0; i < nt; i++)
        hs_profile_add_comment(p, trk[i]);
    return 0;
}

/* The label set's pairs as string labels of the profile's last sample. */
static int dump_labels(hs_profile_t *p, uint32_t labels)
{
    const char *keys[HS_LABELS_MAX_PAIRS], *values[HS_LABELS_MAX_PAIRS];
    size_t n = labels ? hs_labels_get(labels, keys, values, HS_LABELS_MAX_PAIRS) : 0;
    for (size_t i = 0; i < n; i++)
        if (hs_profile_add_label(p, p->nsamples - 1, keys[i], values[i], 0, NULL) != 0)
            return -ENOMEM;
    return 0;
}

/* Integers parts[0..n) >= 0 adding up to total, in proportion to x (which sums to about
 * total): floors first, then one more to the largest remainders. Exact integers x summing
 * to total come back unchanged. */
static void dump_apportion(const double *x, int n, int64_t total, int64_t *parts)
{
    double sum = 0, rem[HS_LIFE_BUCKETS + 1];
    int64_t given = 0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    double ratio = sum > 0 ? (double)total / sum : 0;
    for (int i = 0; i < n; i++) {
        double q = x[i] * ratio;
        parts[i] = (int64_t)floor(q);
        rem[i] = q - (double)parts[i];
        given += parts[i];
    }
    while (given < total) {
        int best = -1;
        for (int i = 0; i < n; i++)
            if (rem[i] >= 0 && (best < 0 || rem[i] > rem[best]))
                best = i;
        if (best < 0)
            break;
        parts[best]++;
        rem[best] = -1;
        given++;
    }
}

/* The alloc values of one stack split into the part still live (parts[0]) and the part
 * freed in each lifetime bucket (parts[1 + b]), each column adding up to the unsplit
 * rounded value, so every total of the profile is what it was without the split. */
static void dump_split(const double v[4], const hs_life_t life, int64_t parts[][2])
{
    for (int k = 0; k < 2; k++) {
        double x[HS_LIFE_BUCKETS + 1], freed = 0;
        int64_t col[HS_LIFE_BUCKETS + 1];
        for (int b = 0; b < HS_LIFE_BUCKETS; b++)
            freed += x[1 + b] = life[b][k] > 0 ? life[b][k] : 0; /* < 0: a reset since a base */
        x[0] = v[k] > freed ? v[k] - freed : 0;
        dump_apportion(x, HS_LIFE_BUCKETS + 1, (int64_t)(v[k] + 0.5), col);
        for (int i = 0; i <= HS_LIFE_BUCKETS; i++)
            parts[i][k] = col[i];
    }
}

/* One sample per stack for its live part, and one per lifetime bucket its freed objects
 * fell in (inuse 0, label lifetime = the bucket's upper bound in nanoseconds); each
 * carries the stack's labels. */
/* The live sample of a stack split by the exit scan: the reachable part (the rest of the
 * stack's alloc values with it) and the unreachable part, each labelled. */
static int dump_reach_samples(dump_ctx_t *c, const uint64_t *locs, uint32_t d, const int64_t val[4],
                              const double u[2], uint32_t labels)
{
    int64_t no[4] = {0, 0, llround(u[0]), llround(u[1])}, yes[4];
    no[2] = no[2] < val[2] ? no[2] : val[2];
    no[3] = no[3] < val[3] ? no[3] : val[3];
    no[0] = no[2] < val[0] ? no[2] : val[0];
    no[1] = no[3] < val[1] ? no[3] : val[1];
    for (int k = 0; k < 4; k++)
        yes[k] = val[k] - no[k];
    const int64_t *part[2] = {yes, no};
    for (int i = 0; i < 2; i++) {
        if (!part[i][0] && !part[i][1] && !part[i][2] && !part[i][3])
            continue;
        if (hs_profile_add_sample(c->prof, locs, d, part[i]) != 0 ||
            dump_labels(c->prof, labels) != 0 ||
            hs_profile_add_label(c->prof, c->prof->nsamples - 1, "reachable", i ? "no" : "yes", 0,
                                 NULL) != 0)
            return -ENOMEM;
    }
    return 0;
}

static int dump_stack_samples(dump_ctx_t *c, const uint64_t *locs, uint32_t d, const double v[4],
                              const double u[2], const hs_life_t *life, uint32_t labels)
{
    int64_t parts[HS_LIFE_BUCKETS + 1][2] = {{0}};
    if (life) {
        dump_split(v, *life, parts);
    } else {
        parts[0][0] = (int64_t)llround(v[0]);
        parts[0][1] = (int64_t)llround(v[1]);
    }
    for (int i = 0; i <= HS_LIFE_BUCKETS; i++) {
        int64_t val[4] = {parts[i][0], parts[i][1], 0, 0};
        if (i == 0) {
            val[2] = (int64_t)llround(v[2]);
            val[3] = (int64_t)llround(v[3]);
        }
        if (!val[0] && !val[1] && !val[2] && !val[3])
            continue;
        if (i == 0 && c->reach && (val[2] || val[3])) {
            if (dump_reach_samples(c, locs, d, val, u, labels) != 0)
                return -ENOMEM;
            continue;
        }
        if (hs_profile_add_sample(c->prof, locs, d, val) != 0 || dump_labels(c->prof, labels) != 0)
            return -ENOMEM;
        if (i > 0 && hs_profile_add_label(c->prof, c->prof->nsamples - 1, "lifetime", NULL,
                                          hs_life_bound[i - 1], "nanoseconds") != 0)
            return -ENOMEM;
    }
    return 0;
}

/* Whether stack s gives the profile any sample (dump_samples' test). */
static bool dump_stack_used(const dump_stack_t *s)
{
    bool any = false;
    for (int k = 0; k < 4; k++)
        any |= llround(s->v[k]) != 0; /* deltas are negative too */
    return any && s->st.pcs;
}

static int dump_samples(dump_ctx_t *c, const dump_stack_t *s, uint32_t n, hs_life_t *life)
{
    uint64_t locs[HS_MAX_DEPTH];
    for (uint32_t i = 0; i < n; i++) {
        if (!dump_stack_used(&s[i]))
            continue;
        uint32_t d = s[i].st.depth < HS_MAX_DEPTH ? s[i].st.depth : HS_MAX_DEPTH;
        for (uint32_t k = 0; k < d; k++) {
            uintptr_t pc = s[i].st.pcs[k];
            locs[k] = hs_dumploc_location(c, pc, hs_modules_unloaded(pc, (int32_t)i));
        }
        if (dump_stack_samples(c, locs, d, s[i].v, s[i].u, life ? &life[i] : NULL,
                               s[i].st.labels) != 0)
            return -ENOMEM;
    }
    return 0;
}

/* c->hint: the return addresses - 1 of the stacks that give samples, when there are at
 * most DUMP_HINT_MAX (a short process's few): the symbolizer then names them from a
 * big executable's symbols in one pass instead of sorting them all (hs_symbolizer_hint).
 * No memory: no hint, the same names. */
#define DUMP_HINT_MAX 4096
static void dump_hint(dump_ctx_t *c, const dump_stack_t *s, uint32_t n, size_t pcs)
{
    if (pcs > DUMP_HINT_MAX || pcs == 0 || (c->hint = malloc(pcs * sizeof(*c->hint))) == NULL)
        return;
    for (uint32_t i = 0; i < n; i++) {
        uint32_t d = s[i].st.depth < HS_MAX_DEPTH ? s[i].st.depth : HS_MAX_DEPTH;
        for (uint32_t k = 0; dump_stack_used(&s[i]) && k < d; k++)
            if (s[i].st.pcs[k] != 0 && s[i].st.pcs[k] != hs_overflow_pc)
                c->hint[c->nhint++] = s[i].st.pcs[k] - 1;
    }
}

static size_t dump_pow2(size_t n)
{
    size_t c = 64;
    while (c < n)
        c <<= 1;
    return c;
}

/* Builds the whole profile from a snapshot. Returns 0 or -errno. */
static int dump_build(dump_ctx_t *c, const dump_stack_t *s, uint32_t n, const dump_meta_t *m,
                      const char *kind)
{
    size_t pcs = 0;
    for (uint32_t i = 0; i < n; i++)
        pcs += s[i].st.depth;
    c->loc_cap = dump_pow2(2 * pcs + 16);
    c->loc_pc = calloc(c->loc_cap, sizeof(uint64_t));
    c->loc_id = calloc(c->loc_cap, sizeof(uint64_t));
    c->loc_mod = calloc(c->loc_cap, sizeof(int32_t));
    c->prof = hs_profile_new();
    if (!c->loc_pc || !c->loc_id || !c->loc_mod || !c->prof)
        return -ENOMEM;
    /* The text read before the snapshot serves unless a library came or went since:
     * the samples of a library loaded in between would find no mapping in it. */
    bool same = m->maps.text && m->dl_gen != 0 && dump_dl_gen() == m->dl_gen;
    if ((same ? hs_maps_parse_self(m->maps.text, m->maps.len, &c->maps)
              : hs_maps_read_lazy(0, &c->maps)) == 0)
        c->map_ids = calloc(c->maps.n ? c->maps.n : 1, sizeof(uint64_t));
    if (!c->map_ids)
        c->maps.n = 0;
    c->sym_state = strcmp(hs_dumploc_sym_mode_now(), "none") == 0 ? DUMP_SYM_OFF : DUMP_SYM_LAZY;
    c->reach = m->reach;
    dump_hint(c, s, n, pcs);
    hs_modules_refresh(); /* which libraries of the recorded stacks are gone */
    hs_dumploc_main_mapping(c);
    int rc = dump_header(c->prof, m, kind, dump_live_var(s, n));
    if (rc == 0)
        rc = dump_samples(c, s, n, m->life);
    if (rc == 0)
        dump_empty(c->prof, m);
    return rc;
}

static void dump_ctx_free(dump_ctx_t *c)
{
    if (c->sym)
        hs_symbolizer_free(c->sym);
    for (int g = 0; g < HS_DUMP_UNLOADED; g++)
        if (c->usym[g])
            hs_symbolizer_free(c->usym[g]);
    free(c->loc_mod);
    hs_maps_free(&c->maps);
    free(c->map_ids);
    free(c->loc_pc);
    free(c->loc_id);
    free(c->hint);
    if (c->prof)
        hs_profile_free(c->prof);
}

/* The per-stack values a delta profile is taken against (hs_dump_base_take). */
struct hs_dump_base {
    double (*v)[4];
    hs_life_t *life; /* lifetimes as of the base, so a delta's lifetimes are deltas too */
    uint32_t n;
    int64_t time_ns;
};

/* Subtracts base from the snapshot, stack by stack (ids are never reused). */
static void dump_subtract(dump_stack_t *s, uint32_t n, hs_life_t *life, const hs_dump_base_t *base)
{
    for (uint32_t i = 0; i < n && i < base->n; i++) {
        for (int k = 0; k < 4; k++)
            s[i].v[k] -= base->v[i][k];
        for (int b = 0; life && base->life && b < HS_LIFE_BUCKETS; b++)
            for (int k = 0; k < 2; k++)
                life[i][b][k] -= base->life[i][b][k];
    }
}

/* Builds the profile of this kind into c (the caller frees it with dump_ctx_free); with
 * base, the difference from it (a delta). /proc/self/maps and the accounting are read
 * first, so the dump's own allocations are not in it; the mappings come from the same
 * read. */
static int dump_make(dump_ctx_t *c, const char *kind, const hs_dump_base_t *base, uint64_t *samples,
                     uint32_t *stacks)
{
    dump_meta_t m;
    uint32_t n = 0;
    memset(&m, 0, sizeof(m));
    memset(c, 0, sizeof(*c));
    m.dl_gen = dump_dl_gen();
    if (hs_maps_text_read(&m.maps) == 0) /* its pages: the text and its NUL */
        hs_acct_read_maps_ex(&m.acct, m.maps.text, m.maps.len, (m.maps.len + 4096) & ~4095ull,
                             !dump_interrupted);
    else
        hs_acct_read_maps_ex(&m.acct, NULL, 0, 0, !dump_interrupted);
    bool peak = strcmp(kind, "peak") == 0;
    if (peak)
        hs_peak_now(); /* the thread may not have caught up with the last one */
    dump_stack_t *s = peak ? dump_snapshot_peak(&n, &m) : dump_snapshot(&n, &m);
    if (s && base)
        dump_subtract(s, n, m.life, base);
    int rc = s ? dump_build(c, s, n, &m, kind) : -ENOMEM;
    free(s);
    free(m.life);
    hs_maps_text_free(&m.maps);
    *samples = m.totals.samples;
    *stacks = n;
    return rc;
}

static uint64_t dump_written, dump_failed;
static uint64_t dump_written_kind[HS_DUMP_KINDS]; /* by hs_dump_kind_name's index */
static bool dump_failing, dump_closed;

const char *hs_dump_kind_name(int k)
{
    return k == 1 ? "peak" : "heap";
}

static void dump_count_kind(const char *kind)
{
    int k = strcmp(kind, "peak") == 0;
    __atomic_add_fetch(&dump_written_kind[k], 1, __ATOMIC_RELAXED);
}

/* A failure is reported once, until a dump succeeds again (the exit profile's always: no
 * dump comes after it). */
static void dump_report(int rc, const char *path, uint64_t samples, uint32_t stacks, bool final)
{
    if (rc != 0) {
        __atomic_add_fetch(&dump_failed, 1, __ATOMIC_RELAXED);
        if (final)
            hs_log("cannot write profile %s: %s", path, strerror(-rc));
        else if (!dump_failing)
            hs_log("cannot write profile %s: %s (reported once; retried at the next dump)", path,
                   strerror(-rc));
        dump_failing = true;
        return;
    }
    __atomic_add_fetch(&dump_written, 1, __ATOMIC_RELAXED);
    if (dump_failing)
        hs_log("profiles are written again (%s)", path);
    else if (hs_opt.verbose)
        hs_log("wrote %s (%llu live samples, %u stacks)", path, (unsigned long long)samples,
               stacks);
    dump_failing = false;
}

/* The leak report, from the exit profile c. Its frames need names and files for the
 * suppressions (built-in ones included) to match and for the report to be read: when
 * HEAPSIFT_SYMBOLIZE asked for less, the report is made from a second profile of the same
 * live set, symbolized with lines. */
static void dump_leaks(dump_ctx_t *c, const char *kind)
{
    const char *mode = hs_opt.symbolize;
    if (!hs_leaks_on())
        return;
    if (strcmp(mode, "none") != 0 && strcmp(mode, "names") != 0) {
        hs_leaks_report(c->prof);
        return;
    }
    dump_ctx_t l;
    uint64_t samples = 0;
    uint32_t stacks = 0;
    hs_dumploc_sym_mode = "lines";
    int rc = dump_make(&l, kind, NULL, &samples, &stacks);
    hs_dumploc_sym_mode = NULL;
    hs_leaks_report(rc == 0 ? l.prof : c->prof);
    dump_ctx_free(&l);
}

bool hs_dump_is_root(void)
{
    return !hs_outpath_needs_pid(hs_forked());
}

static char dump_last[4096]; /* the last file written (dump lock) */

void hs_dump_last_path(char *out, size_t cap)
{
    hs_lock(&dump_lock, HS_RANK_DUMP);
    snprintf(out, cap, "%s", dump_last);
    hs_unlock(&dump_lock, HS_RANK_DUMP);
}

static int dump_locked(const char *path, const char *kind, unsigned flags)
{
    char buf[4096];
    uint64_t samples = 0;
    uint32_t stacks = 0;
    dump_ctx_t c;
    bool named = !path;
    if (named) {
        hs_outpath_expand(hs_opt.out, kind, dump_seq++, flags & HS_DUMP_FINAL, hs_forked(), buf,
                          sizeof(buf));
        path = buf;
    }
    dump_interrupted = flags & HS_DUMP_INTERRUPTED;
    int rc = dump_make(&c, kind, NULL, &samples, &stacks);
    dump_interrupted = false;
    bool made = rc == 0;
    if (rc == 0)
        rc = hs_pprof_write_file(c.prof, path);
    dump_report(rc, path, samples, stacks, flags & HS_DUMP_FINAL);
    if (rc == 0)
        dump_count_kind(kind);
    /* The leak report reads the exit profile, written or not. */
    if (made && (flags & HS_DUMP_FINAL) && strcmp(kind, "heap") == 0)
        dump_leaks(&c, kind);
    if (rc == 0 && named && dump_on_written_fn)
        dump_on_written_fn(kind, path);
    if (rc == 0)
        snprintf(dump_last, sizeof(dump_last), "%s", path);
    if (rc == 0)
        hs_runreport_note(path, c.prof);
    dump_ctx_free(&c);
    return rc;
}

typedef struct {
    const char *path, *kind;
    unsigned flags;
    int rc;
} dump_job_t;

static void dump_job(void *p)
{
    dump_job_t *j = p;
    j->rc = dump_locked(j->path, j->kind, j->flags);
}

int hs_dump_ex(const char *path, const char *kind, unsigned flags)
{
    hs_tls_t *t = &hs_tls;
    int rc = -ECANCELED, cancel;
    /* A dump is no cancellation point: cancelled inside, it would keep the lock. */
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_guard_enter(t);
    hs_lock(&dump_lock, HS_RANK_DUMP);
    if (!(dump_closed && (flags & HS_DUMP_TRIGGER))) {
        /* In a table of heapsift's own: libdwfl opens the binaries itself (fdtable.c). */
        dump_job_t j = {path, kind, flags, -ECANCELED};
        hs_fdtable_run(dump_job, &j);
        rc = j.rc;
    }
    if (flags & HS_DUMP_CLOSE)
        dump_closed = true;
    hs_unlock(&dump_lock, HS_RANK_DUMP);
    hs_guard_exit(t);
    pthread_setcancelstate(cancel, NULL);
    return rc;
}

int hs_dump(const char *path, const char *kind)
{
    return hs_dump_ex(path, kind, 0);
}

typedef struct {
    int format, rc;
    hs_buf_t raw, gz;
} dump_fd_job_t;

/* The profile's bytes, made in a table of heapsift's own (fdtable.c). */
static void dump_fd_job(void *p)
{
    dump_fd_job_t *j = p;
    uint64_t samples;
    uint32_t stacks;
    dump_ctx_t c;
    j->rc = dump_make(&c, "heap", NULL, &samples, &stacks);
    if (j->rc == 0)
        j->rc = hs_pprof_encode(c.prof, &j->raw);
    if (j->rc == 0 && j->format == 0)
        j->rc = hs_gzip(j->raw.data, j->raw.len, HS_GZIP_PROCESS_LEVEL, &j->gz);
    dump_ctx_free(&c);
}

/* Written by the caller: fd is the program's, in the program's table, hence write(2)
 * rather than fdio.h's hs_fd_write. */
int hs_dump_fd(int fd, int format)
{
    hs_tls_t *t = &hs_tls;
    int cancel;
    if (format != 0 && format != 1)
        return -EINVAL;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_guard_enter(t);
    hs_lock(&dump_lock, HS_RANK_DUMP);
    dump_fd_job_t j;
    memset(&j, 0, sizeof(j));
    j.format = format;
    hs_fdtable_run(dump_fd_job, &j);
    int rc = j.rc;
    if (rc == 0)
        rc = format == 0 ? hs_write_all(fd, j.gz.data, j.gz.len, write)
                         : hs_write_all(fd, j.raw.data, j.raw.len, write);
    hs_buf_free(&j.raw);
    hs_buf_free(&j.gz);
    hs_unlock(&dump_lock, HS_RANK_DUMP);
    hs_guard_exit(t);
    pthread_setcancelstate(cancel, NULL);
    return rc;
}

void hs_dump_counts(uint64_t *written, uint64_t *failed)
{
    *written = __atomic_load_n(&dump_written, __ATOMIC_RELAXED);
    *failed = __atomic_load_n(&dump_failed, __ATOMIC_RELAXED);
}

void hs_dump_counts_by_kind(uint64_t written[HS_DUMP_KINDS])
{
    for (int k = 0; k < HS_DUMP_KINDS; k++)
        written[k] = __atomic_load_n(&dump_written_kind[k], __ATOMIC_RELAXED);
}

/* The unreached bytes of the last leak check (dump lock; read racily as one double). */
static double dump_leak_bytes;
static bool dump_leak_done;

bool hs_dump_last_leakcheck(double *bytes)
{
    if (!__atomic_load_n(&dump_leak_done, __ATOMIC_ACQUIRE))
        return false;
    __atomic_load(&dump_leak_bytes, bytes, __ATOMIC_RELAXED);
    return true;
}

/* The scan's unreached bytes, summed over the stacks, kept for /metrics. */
static void dump_leak_note(void)
{
    uint32_t n = hs_stacktab_count();
    double *obj = calloc(n ? n : 1, sizeof(double));
    double *bytes = calloc(n ? n : 1, sizeof(double));
    if (obj && bytes && hs_leaks_unreached(obj, bytes, n)) {
        double sum = 0;
        for (uint32_t i = 0; i < n; i++)
            sum += bytes[i];
        __atomic_store(&dump_leak_bytes, &sum, __ATOMIC_RELAXED);
        __atomic_store_n(&dump_leak_done, true, __ATOMIC_RELEASE);
    }
    free(obj);
    free(bytes);
}

/* ---- leak checks: a reachability scan, then a labelled profile ----------------------- */

typedef struct {
    const char *path;
    hs_profile_t **out;
    int rc;
} dump_lc_job_t;

/* On one of heapsift's own threads (fdtable.c's, or the HTTP thread itself): the scan
 * stops every thread of the program, the one that asked included. */
static void dump_lc_job(void *p)
{
    dump_lc_job_t *j = p;
    hs_reachscan_t r;
    j->rc = hs_leaks_check_begin(&r);
    if (j->rc != 0)
        return;
    dump_leak_note();
    if (j->out) {
        uint64_t samples;
        uint32_t stacks;
        dump_ctx_t c;
        j->rc = dump_make(&c, "heap", NULL, &samples, &stacks);
        if (j->rc == 0) {
            *j->out = c.prof;
            c.prof = NULL;
        }
        dump_ctx_free(&c);
    } else {
        j->rc = dump_locked(j->path, "heap", 0);
    }
    hs_leaks_check_end(&r);
}

int hs_dump_leakcheck(const char *path, hs_profile_t **out)
{
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_guard_enter(&hs_tls);
    hs_lock(&dump_lock, HS_RANK_DUMP);
    dump_lc_job_t j = {path, out, -ECANCELED};
    hs_fdtable_run(dump_lc_job, &j);
    hs_unlock(&dump_lock, HS_RANK_DUMP);
    hs_guard_exit(&hs_tls);
    pthread_setcancelstate(cancel, NULL);
    return j.rc;
}

/* ---- in-memory profiles for the HTTP endpoint (http*.c) ------------------------------ */

int hs_dump_base_take(hs_dump_base_t **out)
{
    dump_meta_t m;
    uint32_t n = 0;
    memset(&m, 0, sizeof(m));
    hs_dump_base_t *b = calloc(1, sizeof(*b));
    dump_stack_t *s = b ? dump_snapshot(&n, &m) : NULL;
    if (s)
        b->v = calloc(n ? n : 1, sizeof(*b->v));
    if (!s || !b->v) {
        free(s);
        free(m.life);
        hs_dump_base_free(b);
        return -ENOMEM;
    }
    for (uint32_t i = 0; i < n; i++)
        memcpy(b->v[i], s[i].v, sizeof(b->v[i]));
    b->n = n;
    b->life = m.life;
    b->time_ns = dump_now_ns();
    free(s);
    *out = b;
    return 0;
}

void hs_dump_base_free(hs_dump_base_t *b)
{
    if (b) {
        free(b->v);
        free(b->life);
    }
    free(b);
}

int hs_dump_profile(const char *kind, const hs_dump_base_t *base, hs_profile_t **out)
{
    uint64_t samples;
    uint32_t stacks;
    dump_ctx_t c;
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_guard_enter(&hs_tls);
    hs_lock(&dump_lock, HS_RANK_DUMP);
    int rc = dump_make(&c, base ? "delta" : kind, base, &samples, &stacks);
    if (rc == 0) {
        *out = c.prof;
        c.prof = NULL;
        if (base)
            (*out)->duration_nanos = (*out)->time_nanos - base->time_ns;
    }
    dump_ctx_free(&c);
    hs_unlock(&dump_lock, HS_RANK_DUMP);
    hs_guard_exit(&hs_tls);
    pthread_setcancelstate(cancel, NULL);
    return rc;
}

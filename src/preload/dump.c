/*
 * Dumps: snapshot the tables, build a pprof heap profile (Go's four sample types, in
 * Go's order), symbolize it in the process, gzip it and write it atomically. Runs on the
 * thread that asked (the exit destructor or heapsift_dump) under the reentrancy guard,
 * so everything it allocates comes from the real allocator and is freed before it
 * returns. The tables are only locked while they are copied, never while encoding.
 */
#define _GNU_SOURCE
#include "core.h"
#include "livetab.h"
#include "maps.h"
#include "pprof.h"
#include "profile.h"
#include "stacktab.h"
#include "symbolize.h"
#include "unwind.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern const uintptr_t hs_overflow_pc;

static pthread_mutex_t dump_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned dump_seq;
static bool dump_forked; /* a forked child: never write the parent's file */
static char dump_cwd[1024];
static int64_t dump_start_ns;

/* One stack of the snapshot, with its four values. */
typedef struct {
    hs_stack_t st;
    double v[4]; /* alloc_objects, alloc_space, inuse_objects, inuse_space */
} dump_stack_t;

typedef struct {
    hs_profile_t *prof;
    hs_maps_t maps;
    uint64_t *map_ids;         /* mapping id per maps entry, 0 = not added yet */
    hs_symbolizer_t *sym;      /* NULL when symbolization failed */
    uint64_t *loc_pc, *loc_id; /* open-addressing pc -> location id */
    size_t loc_cap;
} dump_ctx_t;

static int64_t dump_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((constructor)) static void dump_ctor(void)
{
    if (!getcwd(dump_cwd, sizeof(dump_cwd)))
        dump_cwd[0] = '\0';
    dump_start_ns = dump_now_ns();
}

void hs_dump_after_fork(void)
{
    pthread_mutex_init(&dump_lock, NULL);
    dump_forked = true;
    dump_seq = 0;
    dump_start_ns = dump_now_ns();
}

/* A process other than the one the user started (a forked child, or an exec'd
 * descendant under `heapsift run`) gets its pid into a pattern that lacks %p. */
static bool dump_needs_pid(void)
{
    if (dump_forked)
        return true;
    const char *root = getenv("HEAPSIFT_ROOT_PID");
    return root && atol(root) != (long)getpid();
}

static void dump_append(char *out, size_t cap, size_t *n, const char *s)
{
    while (*s && *n + 1 < cap)
        out[(*n)++] = *s++;
    out[*n] = '\0';
}

/* Expands %p, %n, %k and %% of the pattern into out. */
static void dump_expand(const char *pat, const char *kind, unsigned seq, char *out, size_t cap)
{
    size_t n = 0;
    char num[32];
    bool has_pid = strstr(pat, "%p") != NULL;
    out[0] = '\0';
    if (pat[0] != '/' && dump_cwd[0]) {
        dump_append(out, cap, &n, dump_cwd);
        dump_append(out, cap, &n, "/");
    }
    for (const char *c = pat; *c && n + 1 < cap; c++) {
        if (c[0] != '%' || !c[1]) {
            out[n++] = *c;
            out[n] = '\0';
            continue;
        }
        c++;
        if (*c == 'p')
            snprintf(num, sizeof(num), "%ld", (long)getpid());
        else if (*c == 'n')
            snprintf(num, sizeof(num), "%u", seq);
        else if (*c == 'k')
            snprintf(num, sizeof(num), "%s", kind);
        else
            snprintf(num, sizeof(num), "%c", *c);
        dump_append(out, cap, &n, num);
    }
    if (!has_pid && dump_needs_pid()) {
        /* name.pb.gz -> name.<pid>.pb.gz */
        char *ext = strstr(out, ".pb.gz");
        char tail[64] = "";
        if (ext && n - (size_t)(ext - out) < sizeof(tail)) {
            snprintf(tail, sizeof(tail), "%s", ext);
            n = (size_t)(ext - out);
            out[n] = '\0';
        }
        snprintf(num, sizeof(num), ".%ld", (long)getpid());
        dump_append(out, cap, &n, num);
        dump_append(out, cap, &n, tail);
    }
}

/* Copies the tables: per-stack cumulative counts and the aggregated live set. */
static dump_stack_t *dump_snapshot(uint32_t *count, hs_live_totals_t *totals)
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
    hs_livetab_aggregate(obj, bytes, n, totals);
    for (uint32_t i = 0; i < n; i++) {
        if (!hs_stacktab_get((int32_t)i, &s[i].st))
            continue;
        s[i].v[0] = s[i].st.alloc_objects;
        s[i].v[1] = s[i].st.alloc_bytes;
        s[i].v[2] = obj[i];
        s[i].v[3] = bytes[i];
    }
    *count = n;
out:
    free(obj);
    free(bytes);
    return s;
}

/* The mapping id for addr, adding the mapping on first use; 0 when addr is unmapped. */
static uint64_t dump_mapping(dump_ctx_t *c, uint64_t addr)
{
    const hs_map_t *m = hs_maps_find(&c->maps, addr);
    if (!m)
        return 0;
    size_t i = (size_t)(m - c->maps.maps);
    if (c->map_ids[i])
        return c->map_ids[i];
    hs_mapping_t pm = {
        .memory_start = m->start,
        .memory_limit = m->limit,
        .file_offset = m->offset,
        .filename = hs_profile_str(c->prof, m->path),
        .build_id = hs_profile_str(c->prof, m->build_id),
        .has_functions = c->sym != NULL,
        .has_filenames = c->sym != NULL,
        .has_line_numbers = c->sym != NULL,
        .has_inline_frames = c->sym != NULL,
    };
    c->map_ids[i] = hs_profile_add_mapping(c->prof, &pm);
    return c->map_ids[i];
}

/* Builds the location of return address pc: address pc - 1 (inside the call), with
 * one line per (inlined) frame. */
static uint64_t dump_new_location(dump_ctx_t *c, uint64_t pc)
{
    hs_symbol_t syms[16];
    hs_line_t lines[16];
    size_t n = 0;
    if (pc == hs_overflow_pc) {
        lines[0].function_id = hs_profile_add_function(c->prof, "[heapsift: stack table full]",
                                                       "[heapsift: stack table full]", "", 0);
        lines[0].line = 0;
        return hs_profile_add_location(c->prof, 0, 0, lines, 1);
    }
    uint64_t addr = pc - 1;
    if (c->sym)
        n = hs_symbolize(c->sym, addr, syms, 16);
    for (size_t i = 0; i < n; i++) {
        const char *name = syms[i].name ? syms[i].name : syms[i].system_name;
        const char *sys = syms[i].system_name ? syms[i].system_name : name;
        lines[i].function_id =
            hs_profile_add_function(c->prof, name ? name : "", sys ? sys : "",
                                    syms[i].file ? syms[i].file : "", syms[i].start_line);
        lines[i].line = syms[i].line;
    }
    return hs_profile_add_location(c->prof, dump_mapping(c, addr), addr, lines, n);
}

static uint64_t dump_location(dump_ctx_t *c, uint64_t pc)
{
    uint64_t key = pc ? pc : ~0ull; /* 0 marks an empty slot */
    size_t mask = c->loc_cap - 1;
    size_t i = (size_t)((pc * 0x9E3779B97F4A7C15ull) >> 20) & mask;
    while (c->loc_pc[i] && c->loc_pc[i] != key)
        i = (i + 1) & mask;
    if (!c->loc_pc[i]) {
        c->loc_pc[i] = key;
        c->loc_id[i] = dump_new_location(c, pc);
    }
    return c->loc_id[i];
}

static int dump_header(hs_profile_t *p, const hs_live_totals_t *totals)
{
    static const char *const types[4][2] = {{"alloc_objects", "count"},
                                            {"alloc_space", "bytes"},
                                            {"inuse_objects", "count"},
                                            {"inuse_space", "bytes"}};
    char line[160];
    for (int i = 0; i < 4; i++)
        if (hs_profile_add_sample_type(p, types[i][0], types[i][1]) != 0)
            return -ENOMEM;
    p->default_sample_type = hs_profile_str(p, "inuse_space");
    p->period_type.type = hs_profile_str(p, "space");
    p->period_type.unit = hs_profile_str(p, "bytes");
    p->period = (int64_t)hs_opt.rate;
    p->time_nanos = dump_now_ns();
    p->duration_nanos = p->time_nanos - dump_start_ns;
    snprintf(line, sizeof(line), "heapsift 0.1.0 rate=%llu unwind=%s depth=%u",
             (unsigned long long)hs_opt.rate, hs_opt.unwind, hs_opt.depth);
    hs_profile_add_comment(p, line);
    hs_counters_t k;
    hs_counters_read(&k);
    snprintf(line, sizeof(line), "exact: allocs=%llu frees=%llu bytes=%llu threads=%llu",
             (unsigned long long)k.allocs, (unsigned long long)k.frees, (unsigned long long)k.bytes,
             (unsigned long long)k.threads);
    if (hs_profile_add_comment(p, line) != 0)
        return -ENOMEM;
    snprintf(line, sizeof(line), "live samples=%llu stacks=%u dropped_stack_samples=%llu",
             (unsigned long long)totals->samples, hs_stacktab_count(),
             (unsigned long long)hs_stacktab_dropped());
    return hs_profile_add_comment(p, line);
}

static int dump_samples(dump_ctx_t *c, const dump_stack_t *s, uint32_t n)
{
    uint64_t locs[HS_MAX_DEPTH];
    for (uint32_t i = 0; i < n; i++) {
        int64_t v[4];
        bool any = false;
        for (int k = 0; k < 4; k++) {
            v[k] = (int64_t)(s[i].v[k] + 0.5);
            any |= v[k] != 0;
        }
        if (!any || !s[i].st.pcs)
            continue;
        uint32_t d = s[i].st.depth < HS_MAX_DEPTH ? s[i].st.depth : HS_MAX_DEPTH;
        for (uint32_t k = 0; k < d; k++)
            locs[k] = dump_location(c, s[i].st.pcs[k]);
        if (hs_profile_add_sample(c->prof, locs, d, v) != 0)
            return -ENOMEM;
    }
    return 0;
}

static size_t dump_pow2(size_t n)
{
    size_t c = 64;
    while (c < n)
        c <<= 1;
    return c;
}

/* Builds the whole profile from a snapshot. Returns 0 or -errno. */
static int dump_build(dump_ctx_t *c, const dump_stack_t *s, uint32_t n,
                      const hs_live_totals_t *totals)
{
    size_t pcs = 0;
    for (uint32_t i = 0; i < n; i++)
        pcs += s[i].st.depth;
    c->loc_cap = dump_pow2(2 * pcs + 16);
    c->loc_pc = calloc(c->loc_cap, sizeof(uint64_t));
    c->loc_id = calloc(c->loc_cap, sizeof(uint64_t));
    c->prof = hs_profile_new();
    if (!c->loc_pc || !c->loc_id || !c->prof)
        return -ENOMEM;
    if (hs_maps_read(0, &c->maps) == 0)
        c->map_ids = calloc(c->maps.n ? c->maps.n : 1, sizeof(uint64_t));
    if (!c->map_ids)
        c->maps.n = 0;
    c->sym = hs_symbolizer_new_pid(0);
    int rc = dump_header(c->prof, totals);
    if (rc == 0)
        rc = dump_samples(c, s, n);
    return rc;
}

static void dump_ctx_free(dump_ctx_t *c)
{
    if (c->sym)
        hs_symbolizer_free(c->sym);
    hs_maps_free(&c->maps);
    free(c->map_ids);
    free(c->loc_pc);
    free(c->loc_id);
    if (c->prof)
        hs_profile_free(c->prof);
}

static int dump_locked(const char *path, const char *kind)
{
    char buf[4096];
    uint32_t n = 0;
    hs_live_totals_t totals = {0, 0, 0};
    dump_ctx_t c;
    memset(&c, 0, sizeof(c));
    if (!path) {
        dump_expand(hs_opt.out, kind, dump_seq++, buf, sizeof(buf));
        path = buf;
    }
    dump_stack_t *s = dump_snapshot(&n, &totals);
    int rc = s ? dump_build(&c, s, n, &totals) : -ENOMEM;
    if (rc == 0)
        rc = hs_pprof_write_file(c.prof, path);
    if (rc != 0)
        hs_log("cannot write profile %s: %s", path, strerror(-rc));
    else if (hs_opt.verbose)
        hs_log("wrote %s (%llu live samples, %u stacks)", path, (unsigned long long)totals.samples,
               n);
    dump_ctx_free(&c);
    free(s);
    return rc;
}

int hs_dump(const char *path, const char *kind)
{
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    pthread_mutex_lock(&dump_lock);
    int rc = dump_locked(path, kind);
    pthread_mutex_unlock(&dump_lock);
    hs_guard_exit(t);
    return rc;
}

/*
 * The spool reader (read_spool.h): a spool file (spool_fmt.h) as a heap profile, its
 * frames unnamed: the views, `heapsift web` and `heapsift recover` name them from the
 * files its mappings name (hs_profile_symbolize, build ids checked). A record whose commit word is
 * 0 was being written or was freed and is skipped; one whose word does not match its fields is
 * damage, and the whole file is refused with what was wrong and where, unless the process still
 * runs (then a record may be mid-write as it is read: it is skipped and counted). Used by readers.c
 * for every reader verb, and by `heapsift recover`.
 */
#define _GNU_SOURCE
#include "read_spool.h"
#include "model/dropframes.h"
#include "model/spool_fmt.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define RS_MAX_STACK_ID (1 << 24) /* HEAPSIFT_MAX_STACKS' bound */

typedef struct {
    const uint8_t *d;
    size_t len;
    hs_spool_header_t h;
    bool alive;
    const hs_spool_stack_t **stacks; /* by stack id, NULL when absent */
    uint32_t nstacks;
    double (*sums)[2]; /* objects and bytes by stack id, plus one for "no stack" */
    uint64_t samples, skipped;
    uint64_t (*pcmap)[2]; /* open addressing: return address -> location id */
    size_t pccap, npc;
    hs_profile_t *p;
    char *err;
    size_t errlen;
} rs_ctx_t;

static int rs_fail(rs_ctx_t *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rs_fail(rs_ctx_t *c, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->err, c->errlen, fmt, ap);
    va_end(ap);
    return -EINVAL;
}

bool hs_spool_detect(const uint8_t *d, size_t len)
{
    return len >= 8 && memcmp(d, HS_SPOOL_MAGIC, 8) == 0;
}

/* The inode of the reader's PID namespace; 0 when it cannot be read. */
static uint64_t rs_pid_ns(void)
{
    char link[64];
    ssize_t n = readlink("/proc/self/ns/pid", link, sizeof(link) - 1);
    if (n <= 0)
        return 0;
    link[n] = '\0';
    const char *p = strchr(link, '[');
    return p ? strtoull(p + 1, NULL, 10) : 0;
}

bool hs_spool_pid_foreign(const hs_spool_header_t *h)
{
    return h->pid_ns == HS_SPOOL_PIDNS_OTHER || (h->pid_ns && h->pid_ns != rs_pid_ns());
}

bool hs_spool_alive(const hs_spool_header_t *h)
{
    char path[64];
    if (h->pid == 0 || h->pid > INT32_MAX)
        return false;
    if (hs_spool_pid_foreign(h))
        return false; /* another namespace's pid: cannot be looked up from here */
    snprintf(path, sizeof(path), "/proc/%" PRIu64 "/stat", h->pid);
    FILE *f = fopen(path, "r");
    char buf[1024];
    size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
    if (!f)
        return false;
    fclose(f);
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');
    unsigned long long ticks = 0;
    if (p && (p[1] != ' ' || p[2] == 'Z' || p[2] == 'X'))
        return false; /* a zombie: killed, not reaped yet */
    /* Field 22 (starttime), the 20th after the command's closing parenthesis. */
    for (int k = 0; p && k < 20; k++)
        p = strchr(p + 1, ' ');
    if (!p || sscanf(p + 1, "%llu", &ticks) != 1)
        return true; /* unreadable: assume it is the same process */
    struct timespec up, real;
    clock_gettime(CLOCK_BOOTTIME, &up);
    clock_gettime(CLOCK_REALTIME, &real);
    double boot = (double)real.tv_sec + real.tv_nsec / 1e9 - (up.tv_sec + up.tv_nsec / 1e9);
    double started = boot + (double)ticks / 100.0; /* USER_HZ */
    return started <= (double)h->start_ns / 1e9 + 2.0;
}

/* Whether n records of size bytes from off end at or before end, without overflow. */
static bool rs_region(uint64_t off, uint64_t n, uint64_t size, uint64_t end)
{
    return off <= end && n <= (end - off) / size;
}

static int rs_header(rs_ctx_t *c)
{
    if (c->len < sizeof(hs_spool_header_t))
        return rs_fail(c, "truncated: %zu bytes, shorter than the spool's header (%zu)", c->len,
                       sizeof(hs_spool_header_t));
    memcpy(&c->h, c->d, sizeof(c->h));
    const hs_spool_header_t *h = &c->h;
    if (h->version != HS_SPOOL_VERSION)
        return rs_fail(c, "spool version %u (this heapsift reads version %u)", h->version,
                       HS_SPOOL_VERSION);
    if (h->check != hs_spool_header_sum(h))
        return rs_fail(c, "corrupted: the header's checksum does not match its fields");
    if (c->len < h->file_size)
        return rs_fail(c, "truncated: %zu bytes of the %" PRIu64 " the spool was made with", c->len,
                       h->file_size);
    if (!rs_region(h->maps_off, h->maps_cap, sizeof(hs_spool_map_t), h->stacks_off) ||
        !rs_region(h->stacks_off, h->stacks_cap, 1, h->live_off) ||
        !rs_region(h->live_off, h->live_cap, sizeof(hs_spool_live_t), h->file_size) ||
        h->maps_off < sizeof(*h) ||
        (h->maps_off | h->stacks_off | h->stacks_cap | h->live_off) % 8 ||
        h->maps_used > h->maps_cap || h->stacks_used > h->stacks_cap)
        return rs_fail(c, "corrupted: the header's regions or counts are out of bounds");
    c->alive = !h->exit_ns && !h->filtered_ns && hs_spool_alive(h);
    return 0;
}

/* A record at index k of count used failing its check: damage unless it lies past what
 * the process had finished (then it was being written when the process died). */
static int rs_maps(rs_ctx_t *c)
{
    const hs_spool_map_t *m = (const hs_spool_map_t *)(c->d + c->h.maps_off);
    for (uint64_t k = 0; k < c->h.maps_cap; k++) {
        if (m[k].commit == 0 || m[k].commit != hs_spool_map_sum(&m[k])) {
            if (k < c->h.maps_used && !c->alive)
                return rs_fail(c, "corrupted: mapping record %" PRIu64 " at offset %" PRIu64, k,
                               c->h.maps_off + k * sizeof(*m));
            break;
        }
        if (memchr(m[k].path, 0, sizeof(m[k].path)) == NULL ||
            memchr(m[k].build_id, 0, sizeof(m[k].build_id)) == NULL)
            return rs_fail(c, "corrupted: mapping record %" PRIu64 " has no end", k);
        hs_mapping_t pm = {.memory_start = m[k].start,
                           .memory_limit = m[k].limit,
                           .file_offset = m[k].offset,
                           .filename = hs_profile_str(c->p, m[k].path),
                           .build_id = hs_profile_str(c->p, m[k].build_id)};
        if (hs_profile_add_mapping(c->p, &pm) == 0)
            return -ENOMEM;
    }
    return 0;
}

static int rs_stacks(rs_ctx_t *c)
{
    const uint8_t *base = c->d + c->h.stacks_off;
    uint64_t off = 0;
    while (off + sizeof(hs_spool_stack_t) <= c->h.stacks_cap) {
        const hs_spool_stack_t *s = (const hs_spool_stack_t *)(base + off);
        uint64_t bytes = sizeof(*s) + 8 * (uint64_t)s->depth;
        bool ok = s->commit != 0 && s->depth <= HS_SPOOL_STACK_MAX && s->id >= 0 &&
                  s->id < RS_MAX_STACK_ID && off + bytes <= c->h.stacks_cap &&
                  s->commit == hs_spool_stack_sum(s, (const uint64_t *)(s + 1));
        if (!ok) {
            if (off < c->h.stacks_used && !c->alive)
                return rs_fail(c, "corrupted: stack record at offset %" PRIu64,
                               c->h.stacks_off + off);
            break;
        }
        if ((uint32_t)s->id >= c->nstacks) {
            uint32_t n = (uint32_t)s->id + 1024;
            const hs_spool_stack_t **g = realloc(c->stacks, n * sizeof(*g));
            if (!g)
                return -ENOMEM;
            memset(g + c->nstacks, 0, (n - c->nstacks) * sizeof(*g));
            c->stacks = g;
            c->nstacks = n;
        }
        if (!c->stacks[s->id])
            c->stacks[s->id] = s;
        off += bytes;
    }
    return 0;
}

/* Sums the live slots by stack id; slot sums[nstacks] is for ids without a stack. */
static int rs_live(rs_ctx_t *c)
{
    const hs_spool_live_t *l = (const hs_spool_live_t *)(c->d + c->h.live_off);
    uint64_t n = c->h.live_used < c->h.live_cap ? c->h.live_used : c->h.live_cap;
    c->sums = calloc((size_t)c->nstacks + 1, sizeof(*c->sums));
    if (!c->sums)
        return -ENOMEM;
    for (uint64_t i = 0; i < n; i++) {
        if (l[i].commit == 0)
            continue;
        if (l[i].commit != hs_spool_live_sum(&l[i]) || !isfinite(l[i].weight)) {
            if (!c->alive)
                return rs_fail(c, "corrupted: live record %" PRIu64 " at offset %" PRIu64, i,
                               c->h.live_off + i * sizeof(*l));
            c->skipped++;
            continue;
        }
        int32_t id = l[i].stack_id;
        size_t k = id >= 0 && (uint32_t)id < c->nstacks && c->stacks[id] ? (size_t)id : c->nstacks;
        c->sums[k][0] += l[i].weight;
        c->sums[k][1] += l[i].weight * (double)l[i].size;
        c->samples++;
    }
    return 0;
}

/* The slot of pc in the map: its own or the empty one where it goes. */
static size_t rs_pcmap_slot(const rs_ctx_t *c, uint64_t pc)
{
    size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (c->pccap - 1);
    while (c->pcmap[i][0] != 0 && c->pcmap[i][0] != pc)
        i = (i + 1) & (c->pccap - 1);
    return i;
}

static int rs_pcmap_grow(rs_ctx_t *c)
{
    rs_ctx_t n = *c;
    n.pccap = c->pccap ? c->pccap * 2 : 1024;
    if (!(n.pcmap = calloc(n.pccap, sizeof(*n.pcmap))))
        return -ENOMEM;
    for (size_t k = 0; k < c->pccap; k++)
        if (c->pcmap[k][0]) {
            size_t i = rs_pcmap_slot(&n, c->pcmap[k][0]);
            n.pcmap[i][0] = c->pcmap[k][0];
            n.pcmap[i][1] = c->pcmap[k][1];
        }
    free(c->pcmap);
    c->pcmap = n.pcmap;
    c->pccap = n.pccap;
    return 0;
}

/* The location of return address pc (0: the "no stack" frame; 1: the stack table's
 * overflow frame), one per address. */
static uint64_t rs_location(rs_ctx_t *c, uint64_t pc)
{
    const char *name = pc == 0   ? "[heapsift: stack not in the spool]"
                       : pc == 1 ? "[heapsift: stack table full: HEAPSIFT_MAX_STACKS reached]"
                                 : NULL;
    if (name) {
        hs_line_t line = {hs_profile_add_function(c->p, name, name, "", 0), 0};
        return hs_profile_add_location(c->p, 0, 0, &line, 1);
    }
    if (c->npc * 2 >= c->pccap && rs_pcmap_grow(c) != 0)
        return 0;
    size_t i = rs_pcmap_slot(c, pc);
    if (c->pcmap[i][0] == pc)
        return c->pcmap[i][1];
    uint64_t map = 0;
    for (size_t k = 0; k < c->p->nmappings && !map; k++)
        if (pc - 1 >= c->p->mappings[k].memory_start && pc - 1 < c->p->mappings[k].memory_limit)
            map = c->p->mappings[k].id;
    uint64_t id = hs_profile_add_location(c->p, map, pc - 1, NULL, 0);
    c->pcmap[i][0] = pc;
    c->pcmap[i][1] = id;
    c->npc++;
    return id;
}

static int rs_samples(rs_ctx_t *c)
{
    static const char *const types[4][2] = {{"alloc_objects", "count"},
                                            {"alloc_space", "bytes"},
                                            {"inuse_objects", "count"},
                                            {"inuse_space", "bytes"}};
    for (int k = 0; k < 4; k++)
        if (hs_profile_add_sample_type(c->p, types[k][0], types[k][1]) != 0)
            return -ENOMEM;
    c->p->default_sample_type = hs_profile_str(c->p, "inuse_space");
    if ((c->p->drop_frames = hs_profile_str(c->p, hs_dropframes_rule)) < 0) /* as dump.c's */
        return -ENOMEM;
    c->p->period_type =
        (hs_value_type_t){hs_profile_str(c->p, "space"), hs_profile_str(c->p, "bytes")};
    c->p->period = (int64_t)c->h.rate;
    uint64_t *locs = malloc(sizeof(uint64_t) * HS_SPOOL_STACK_MAX);
    int rc = locs ? 0 : -ENOMEM;
    for (uint32_t id = 0; id <= c->nstacks && rc == 0; id++) {
        if (c->sums[id][0] == 0 && c->sums[id][1] == 0)
            continue;
        const hs_spool_stack_t *s = id < c->nstacks ? c->stacks[id] : NULL;
        const uint64_t *pcs = s ? (const uint64_t *)(s + 1) : NULL;
        size_t n = s ? s->depth : 1;
        for (size_t k = 0; k < n; k++)
            if ((locs[k] = rs_location(c, pcs ? pcs[k] : 0)) == 0)
                rc = -ENOMEM;
        int64_t o = llround(c->sums[id][0]), b = llround(c->sums[id][1]);
        int64_t v[4] = {o, b, o, b};
        if (rc == 0)
            rc = hs_profile_add_sample(c->p, locs, n, v);
    }
    free(locs);
    return rc;
}

static void rs_comments(rs_ctx_t *c, int64_t mtime_ns)
{
    char line[3000], when[64], args[HS_SPOOL_CMDLINE + 1];
    int64_t t = c->h.filtered_ns > 0      ? c->h.filtered_ns
                : c->h.exit_ns            ? c->h.exit_ns
                : c->h.last_ns > mtime_ns ? c->h.last_ns
                                          : mtime_ns;
    time_t sec = (time_t)(t / 1000000000);
    struct tm tm;
    strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", gmtime_r(&sec, &tm));
    c->p->time_nanos = t;
    if (c->h.filtered_ns > 0 && c->h.sandbox_assumed)
        snprintf(line, sizeof(line),
                 "recovered from the spool of process %" PRIu64 ", which exited at %s %s: it "
                 "could not tell whether a sandbox refuses the calls that write a profile, so it "
                 "made none",
                 c->h.pid, when,
                 c->h.forked == HS_SPOOL_FORKED_CLONE
                     ? "(its parent made it by a raw clone, which runs no fork handler)"
                     : "(it could not open its own status, as in a chroot)");
    else if (c->h.filtered_ns > 0)
        snprintf(line, sizeof(line),
                 "recovered from the spool of process %" PRIu64 ", which exited at %s under a "
                 "seccomp filter installed after it started (a sandbox): the filter refuses the "
                 "calls that write a profile",
                 c->h.pid, when);
    else if (c->h.exit_ns)
        snprintf(line, sizeof(line),
                 "read from the spool of process %" PRIu64 ", which ended writing its exit profile "
                 "at %s (the spool was kept: HEAPSIFT_KEEP_SPOOL=1)",
                 c->h.pid, when);
    else if (c->alive)
        snprintf(line, sizeof(line),
                 "read from the spool of process %" PRIu64 ", which is still running: a "
                 "snapshot as of %s",
                 c->h.pid, when);
    else
        snprintf(line, sizeof(line),
                 "recovered from process %" PRIu64 ", which ended without exiting, at about %s",
                 c->h.pid, when);
    hs_profile_add_comment(c->p, line);
    size_t n = c->h.cmdline_len < HS_SPOOL_CMDLINE ? (size_t)c->h.cmdline_len : HS_SPOOL_CMDLINE;
    memcpy(args, c->h.cmdline, n);
    while (n > 0 && args[n - 1] == '\0')
        n--;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)args[i] < 0x20 || args[i] == 0x7f)
            args[i] = args[i] ? '?' : ' ';
    args[n] = '\0';
    snprintf(line, sizeof(line), "process: pid=%" PRIu64 " cmdline=%s", c->h.pid, args);
    hs_profile_add_comment(c->p, line);
    snprintf(line, sizeof(line),
             "spool: %" PRIu64 " live samples; alloc_* counts only the live ones (freed samples "
             "are not kept)",
             c->samples);
    hs_profile_add_comment(c->p, line);
    if (c->h.live_dropped || c->h.stacks_dropped || c->skipped) {
        snprintf(line, sizeof(line),
                 "spool: incomplete: %" PRIu64 " samples found it full, %" PRIu64
                 " stacks did not fit, %" PRIu64 " records were being written",
                 c->h.live_dropped, c->h.stacks_dropped, c->skipped);
        hs_profile_add_comment(c->p, line);
    }
}

int hs_spool_parse(const uint8_t *d, size_t len, int64_t mtime_ns, hs_profile_t **out, char *err,
                   size_t errlen)
{
    rs_ctx_t c = {.d = d, .len = len, .err = err, .errlen = errlen};
    *out = NULL;
    int rc = rs_header(&c);
    if (rc == 0 && !(c.p = hs_profile_new()))
        rc = -ENOMEM;
    if (rc == 0)
        rc = rs_maps(&c);
    if (rc == 0)
        rc = rs_stacks(&c);
    if (rc == 0)
        rc = rs_live(&c);
    if (rc == 0)
        rc = rs_samples(&c);
    if (rc == 0)
        rs_comments(&c, mtime_ns);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s", strerror(ENOMEM));
    free(c.stacks);
    free(c.sums);
    free(c.pcmap);
    if (rc != 0)
        hs_profile_free(c.p);
    else
        *out = c.p;
    return rc;
}

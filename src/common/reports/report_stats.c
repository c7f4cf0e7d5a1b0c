/*
 * Where the RSS went, from the accounting comments a heapsift profile carries (written
 * by the library's accounting.c and dump.c: "rss:", "maps:", "profiler:", "allocator:",
 * "estimate:", "exact:"): a reconciliation whose parts add up to the RSS: the
 * allocator's resident mappings split into the live heap (the sampled estimate with its
 * 95% interval), allocator overhead, free space kept by the allocator and its metadata;
 * then the profiler, thread stacks, code and mapped files, and other anonymous memory
 * (docs/accounting.md). Shared by `heapsift stats` and the HTTP endpoint's
 * ?display=stats. Owns only its allocations.
 */
#include "report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One "section: key=value ..." pair from the comments. */
typedef struct {
    char name[64]; /* "section.key" */
    char value[64];
} stats_kv_t;

typedef struct {
    stats_kv_t kv[96];
    int n;
    bool bytes; /* --bytes: plain byte counts */
    FILE *out;
} stats_t;

/* Adds every key=value of a comment line, under its section (the text before ':'; the
 * first comment, "heapsift 0.1.0 rate=...", goes under "heapsift"). */
static void stats_parse_line(stats_t *s, const char *line)
{
    char sect[24] = "heapsift";
    const char *colon = strchr(line, ':');
    const char *p = line;
    if (colon && colon - line < (long)sizeof(sect) && !memchr(line, ' ', (size_t)(colon - line))) {
        snprintf(sect, sizeof(sect), "%.*s", (int)(colon - line), line);
        p = colon + 1;
    }
    while (*p && s->n < (int)(sizeof(s->kv) / sizeof(s->kv[0]))) {
        p += strspn(p, " ");
        size_t len = strcspn(p, " ");
        const char *eq = memchr(p, '=', len);
        if (eq) {
            stats_kv_t *kv = &s->kv[s->n++];
            snprintf(kv->name, sizeof(kv->name), "%s.%.*s", sect, (int)(eq - p), p);
            snprintf(kv->value, sizeof(kv->value), "%.*s", (int)(p + len - eq - 1), eq + 1);
        } else if (len && strcmp(sect, "allocator") == 0) {
            stats_kv_t *kv = &s->kv[s->n++]; /* "allocator: glibc ..." */
            snprintf(kv->name, sizeof(kv->name), "allocator.name");
            snprintf(kv->value, sizeof(kv->value), "%.*s", (int)len, p);
        }
        p += len;
    }
}

static const char *stats_str(const stats_t *s, const char *name)
{
    for (int i = 0; i < s->n; i++)
        if (strcmp(s->kv[i].name, name) == 0)
            return s->kv[i].value;
    return NULL;
}

static double stats_num(const stats_t *s, const char *name)
{
    const char *v = stats_str(s, name);
    return v ? strtod(v, NULL) : 0;
}

/* Bytes in pprof's style of units (B, kB, MB, GB: powers of 1024), signed. */
static const char *stats_fmt(const stats_t *s, double v, char *buf, size_t cap)
{
    static const char *const units[] = {"B", "kB", "MB", "GB", "TB"};
    double a = v < 0 ? -v : v;
    int u = 0;
    if (s->bytes) {
        snprintf(buf, cap, "%.0f", v);
        return buf;
    }
    while (a >= 1024 && u < 4) {
        a /= 1024;
        v /= 1024;
        u++;
    }
    snprintf(buf, cap, u ? "%.1f %s" : "%.0f %s", v, units[u]);
    return buf;
}

static void stats_row(const stats_t *s, int indent, const char *label, double v, const char *note)
{
    char b[48];
    fprintf(s->out, "%*s%-*s %12s%s%s\n", indent, "", 44 - indent, label,
            stats_fmt(s, v, b, sizeof(b)), note && *note ? "  " : "", note ? note : "");
}

/* The live heap's 95% interval as offsets from the estimate, "+A/-B (95%)": lo95_bytes and
 * hi95_bytes of the estimate comment; "+- A" when both sides print alike (exact: "+- 0 B")
 * and from the symmetric ci95_bytes of a dump older than the asymmetric interval. */
static void stats_interval(const stats_t *s, double live, char *out, size_t len)
{
    char a[48], b[48];
    double up = stats_num(s, "estimate.ci95_bytes"), down = up;
    if (stats_str(s, "estimate.lo95_bytes") && stats_str(s, "estimate.hi95_bytes")) {
        up = stats_num(s, "estimate.hi95_bytes") - live;
        down = live - stats_num(s, "estimate.lo95_bytes");
    }
    stats_fmt(s, up, a, sizeof(a));
    stats_fmt(s, down, b, sizeof(b));
    if (strcmp(a, b) == 0)
        snprintf(out, len, "+- %s (95%%)", a);
    else
        snprintf(out, len, "+%s/-%s (95%%)", a, b);
}

/* The allocator's resident memory, split. Returns the part the heap rows cover. */
static void stats_heap(const stats_t *s)
{
    const char *alloc = stats_str(s, "allocator.name");
    double heap = stats_num(s, "maps.heap"), live = stats_num(s, "estimate.live_bytes");
    double ph = stats_num(s, "profiler.heap");
    char note[160], ci[112], b1[48], b2[48];
    bool glibc = alloc && strcmp(alloc, "glibc") == 0;
    bool je = alloc && strcmp(alloc, "jemalloc") == 0;
    bool tc = alloc && strcmp(alloc, "tcmalloc") == 0 && stats_str(s, "allocator.heap_size");
    if (!glibc && !je && !tc) {
        /* Not broken down: the program break is the allocator's for sure; its mmap'd
         * memory cannot be told from the program's own, and stays in "other anonymous". */
        bool unread = alloc && strcmp(alloc, "unread") == 0; /* a signal's exit profile */
        snprintf(note, sizeof(note),
                 "%s%s: the program break; its mmap'd memory is in \"other anonymous\"",
                 unread ? "allocator statistics not read at the terminating signal" : "allocator ",
                 unread            ? ""
                 : alloc && *alloc ? alloc
                                   : "unknown");
        stats_row(s, 2, "heap ([heap])", heap, note);
        stats_interval(s, live, ci, sizeof(ci));
        snprintf(note, sizeof(note), "%s, inside heap and other anonymous", ci);
        stats_row(s, 4, "live heap (sampled estimate)", live, note);
        return;
    }
    double allocated = glibc ? stats_num(s, "allocator.in_use") + stats_num(s, "allocator.mmap")
                             : stats_num(s, "allocator.allocated");
    double meta = je ? stats_num(s, "allocator.metadata") : 0;
    stats_row(s, 2, "heap (the allocator's resident memory)", heap, alloc);
    stats_interval(s, live, ci, sizeof(ci));
    stats_row(s, 4, "live heap (sampled estimate)", live, ci);
    stats_row(s, 4, "allocator overhead (headers, rounding)", allocated - live - ph,
              "allocated minus requested; carries the estimate's error");
    stats_row(s, 4, "profiler's own heap allocations", ph, NULL);
    if (glibc)
        snprintf(note, sizeof(note), "glibc free chunks %s, trimmable top %s",
                 stats_fmt(s, stats_num(s, "allocator.free"), b1, sizeof(b1)),
                 stats_fmt(s, stats_num(s, "allocator.releasable"), b2, sizeof(b2)));
    else if (tc)
        snprintf(note, sizeof(note), "tcmalloc page heap free %s, caches free %s",
                 stats_fmt(s, stats_num(s, "allocator.pageheap_free"), b1, sizeof(b1)),
                 stats_fmt(s,
                           stats_num(s, "allocator.central_free") +
                               stats_num(s, "allocator.thread_free"),
                           b2, sizeof(b2)));
    else
        snprintf(note, sizeof(note), "partly used pages %s, dirty unused pages %s",
                 stats_fmt(s, stats_num(s, "allocator.active") - allocated, b1, sizeof(b1)),
                 stats_fmt(s, heap - stats_num(s, "allocator.active") - meta, b2, sizeof(b2)));
    stats_row(s, 4, "free space kept by the allocator", heap - allocated - meta, note);
    if (heap - allocated - meta < 0)
        fprintf(s->out, "%6s(negative: allocated memory not resident: never touched, or swapped)\n",
                "");
    stats_row(s, 4, "allocator metadata", meta,
              glibc ? "glibc keeps it in chunk headers (overhead above)" : NULL);
}

static int stats_print(const stats_t *s, const char *path)
{
    double rss = stats_num(s, "rss.rss");
    char note[160], b1[48], b2[48], b3[48];
    const char *kind = stats_str(s, "heapsift.kind");
    fprintf(s->out, "%s: kind %s, rate %s\n\n", path, kind ? kind : "heap",
            stats_str(s, "heapsift.rate") ? stats_str(s, "heapsift.rate") : "?");
    snprintf(note, sizeof(note), "anonymous %s, file-backed %s; swapped out %s",
             stats_fmt(s, stats_num(s, "rss.anon"), b1, sizeof(b1)),
             stats_fmt(s, stats_num(s, "rss.file"), b2, sizeof(b2)),
             stats_fmt(s, stats_num(s, "rss.swap"), b3, sizeof(b3)));
    stats_row(s, 0, "RSS", rss, note);
    stats_heap(s);
    stats_row(s, 2, "profiler's tables (mmap)", stats_num(s, "profiler.maps"), NULL);
    stats_row(s, 2, "thread stacks", stats_num(s, "maps.stacks"), NULL);
    stats_row(s, 2, "code and mapped files", stats_num(s, "maps.code"), NULL);
    stats_row(s, 2, "other anonymous memory", stats_num(s, "maps.other_anon"),
              "mmap by the program, static data, other allocators");
    double sum = stats_num(s, "maps.heap") + stats_num(s, "profiler.maps") +
                 stats_num(s, "maps.stacks") + stats_num(s, "maps.code") +
                 stats_num(s, "maps.other_anon");
    snprintf(note, sizeof(note), "%.2f%% of RSS unaccounted (read a moment apart)",
             rss > 0 ? 100.0 * (rss - sum) / rss : 0);
    stats_row(s, 2, "sum of the parts", sum, note);
    double allocs = stats_num(s, "exact.allocs"), frees = stats_num(s, "exact.frees");
    fprintf(s->out,
            "\nexact since start: %.0f allocations, %.0f frees (%.0f objects live), %s "
            "requested, %.0f threads\n",
            allocs, frees, allocs - frees,
            stats_fmt(s, stats_num(s, "exact.bytes"), b1, sizeof(b1)),
            stats_num(s, "exact.threads"));
    return 0;
}

int hs_report_stats(const hs_profile_t *p, const char *name, bool bytes, FILE *f)
{
    stats_t *s = calloc(1, sizeof(*s));
    if (!s)
        return -ENOMEM;
    s->bytes = bytes;
    s->out = f;
    for (size_t i = 0; i < p->ncomments; i++)
        stats_parse_line(s, hs_profile_get_str(p, p->comments[i]));
    int rc = stats_str(s, "rss.rss") ? stats_print(s, name) : -ENOENT;
    for (size_t i = 0; rc == 0 && i < p->ncomments; i++) { /* calls heapsift did not see */
        const char *c = hs_profile_get_str(p, p->comments[i]);
        if (strncmp(c, "reach: ", 7) == 0)
            fprintf(f, "\n%s\n", c);
    }
    free(s);
    return rc;
}

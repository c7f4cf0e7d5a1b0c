/*
 * The diagnosis' findings from a profile's accounting comments (diagnose_int.h;
 * docs/accounting.md has what the library writes): fragmentation (free space the
 * allocator keeps, in its own terms: glibc's free chunks and trimmable top, jemalloc's
 * dirty and partly used pages, tcmalloc's free page-heap pages and caches), not_heap (thread
 * stacks, file mappings, other anonymous mappings, the profiler's tables) and blind_spot (the reach
 * line's calls that bypass heapsift). Declines, with a note, what the comments cannot support: no
 * accounting, an allocator heapsift does not break down or did not read, parts adding up to more
 * than the RSS. Pure code over the profile.
 */
#define _GNU_SOURCE
#include "diagnose_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void hs_diag_acct_read(hs_diag_acct_t *a, const hs_profile_t *p)
{
    memset(a, 0, sizeof(*a));
    for (size_t i = 0; i < p->ncomments; i++) {
        const char *line = hs_profile_get_str(p, p->comments[i]);
        char sect[24] = "heapsift";
        const char *colon = strchr(line, ':'), *s = line;
        if (strncmp(line, "reach: ", 7) == 0 && !a->reach)
            a->reach = line;
        /* a scan before the pagemap check made untouched pages resident: its comment
         * does not say "untouched" */
        a->scanned |= strncmp(line, "reachability scan: ", 19) == 0 && !strstr(line, "untouched");
        if (colon && colon - line < (long)sizeof(sect) &&
            !memchr(line, ' ', (size_t)(colon - line))) {
            snprintf(sect, sizeof(sect), "%.*s", (int)(colon - line), line);
            s = colon + 1;
        }
        while (*s && a->n < (int)(sizeof(a->kv) / sizeof(a->kv[0]))) {
            s += strspn(s, " ");
            size_t len = strcspn(s, " ");
            const char *eq = memchr(s, '=', len);
            hs_diag_kv_t *kv = &a->kv[a->n];
            if (eq) {
                snprintf(kv->name, sizeof(kv->name), "%s.%.*s", sect, (int)(eq - s), s);
                snprintf(kv->value, sizeof(kv->value), "%.*s", (int)(s + len - eq - 1), eq + 1);
                a->n++;
            } else if (len && strcmp(sect, "allocator") == 0 && !hs_diag_str(a, "allocator.name")) {
                snprintf(kv->name, sizeof(kv->name), "allocator.name");
                snprintf(kv->value, sizeof(kv->value), "%.*s", (int)len, s);
                a->n++;
            }
            s += len;
        }
    }
}

const char *hs_diag_str(const hs_diag_acct_t *a, const char *name)
{
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->kv[i].name, name) == 0)
            return a->kv[i].value;
    return NULL;
}

double hs_diag_num(const hs_diag_acct_t *a, const char *name)
{
    const char *v = hs_diag_str(a, name);
    return v ? strtod(v, NULL) : 0;
}

void hs_diag_mb(char *s, size_t len, double b)
{
    double a = b < 0 ? -b : b;
    if (a >= 1e6)
        snprintf(s, len, "%.2f MB", b / 1e6);
    else if (a >= 1e3)
        snprintf(s, len, "%.1f kB", b / 1e3);
    else
        snprintf(s, len, "%.0f B", b);
}

bool hs_diag_significant(double part, double rss)
{
    return part >= 1048576 && (rss <= 0 || part >= 0.05 * rss);
}

/* glibc: the free chunks (mallinfo2's fordblks, the trimmable top among them), bounded by
 * what of the heap is resident and not handed out. */
static int diag_frag_glibc(hs_diagnosis_t *d, const hs_diag_acct_t *a, double rss)
{
    double heap = hs_diag_num(a, "maps.heap"), free_ = hs_diag_num(a, "allocator.free");
    double top = hs_diag_num(a, "allocator.releasable");
    double handed = hs_diag_num(a, "allocator.in_use") + hs_diag_num(a, "allocator.mmap");
    double kept = heap - handed < free_ ? heap - handed : free_;
    char ev[512], b[4][32];
    if (!hs_diag_significant(kept, rss))
        return 0;
    hs_diag_mb(b[0], sizeof(b[0]), free_);
    hs_diag_mb(b[1], sizeof(b[1]), top);
    hs_diag_mb(b[2], sizeof(b[2]), heap);
    hs_diag_mb(b[3], sizeof(b[3]), handed);
    snprintf(ev, sizeof(ev),
             "glibc keeps %s in free chunks (mallinfo2 fordblks), of which %s is the trimmable "
             "top (keepcost) and the rest lies between chunks in use; the heap is %s resident, "
             "%s of it handed out (in_use + mmap)",
             b[0], b[1], b[2], b[3]);
    return hs_diagnosis_add(
        d, HS_DIAG_FRAGMENTATION, (int64_t)kept, NULL, ev,
        top >= 0.5 * kept
            ? "most of it is the top of the heap: call malloc_trim(0) after a burst, or lower "
              "M_TRIM_THRESHOLD (mallopt, or GLIBC_TUNABLES=glibc.malloc.trim_threshold) so "
              "glibc returns it by itself"
            : "free chunks between live ones cannot be trimmed from the top: malloc_trim(0) "
              "returns their whole pages (madvise); allocate long-lived and short-lived "
              "objects apart (a pool or arena for the churn), and with many threads cap the "
              "arenas with MALLOC_ARENA_MAX=2");
}

/* jemalloc: resident - active - metadata are dirty (or muzzy) unused pages, active -
 * allocated the unused parts of pages in use; retained is address space only. */
static int diag_frag_jemalloc(hs_diagnosis_t *d, const hs_diag_acct_t *a, double rss)
{
    double res = hs_diag_num(a, "allocator.resident"), act = hs_diag_num(a, "allocator.active");
    double alloc = hs_diag_num(a, "allocator.allocated"),
           meta = hs_diag_num(a, "allocator.metadata");
    double ret = hs_diag_num(a, "allocator.retained");
    double dirty = res - act - meta, partly = act - alloc, kept = res - alloc - meta;
    char ev[512], b[5][32];
    if (!hs_diag_significant(kept, rss))
        return 0;
    hs_diag_mb(b[0], sizeof(b[0]), dirty);
    hs_diag_mb(b[1], sizeof(b[1]), partly);
    hs_diag_mb(b[2], sizeof(b[2]), res);
    hs_diag_mb(b[3], sizeof(b[3]), alloc);
    hs_diag_mb(b[4], sizeof(b[4]), ret);
    snprintf(ev, sizeof(ev),
             "jemalloc holds %s of dirty or muzzy unused pages (resident - active - metadata) "
             "and %s unused in partly used pages (active - allocated); resident %s, allocated "
             "%s; retained %s (address space, not resident)",
             b[0], b[1], b[2], b[3], b[4]);
    return hs_diagnosis_add(
        d, HS_DIAG_FRAGMENTATION, (int64_t)kept, NULL, ev,
        dirty >= partly ? "unused pages wait for decay: lower dirty_decay_ms and muzzy_decay_ms "
                          "(MALLOC_CONF=dirty_decay_ms:1000,muzzy_decay_ms:0), enable "
                          "background_thread:true so purging runs without allocations, or "
                          "purge after a burst with mallctl(\"arena.<i>.purge\")"
                        : "pages partly used by live objects cannot be purged: allocate "
                          "long-lived and short-lived objects apart (a separate arena for "
                          "the churn, MALLOCX_ARENA), or fewer size classes per page");
}

/* tcmalloc (gperftools): free mapped pages in the page heap, and free objects in its central,
 * transfer and thread caches; unmapped pages are given back already. */
static int diag_frag_tcmalloc(hs_diagnosis_t *d, const hs_diag_acct_t *a, double rss)
{
    double page = hs_diag_num(a, "allocator.pageheap_free");
    double cache =
        hs_diag_num(a, "allocator.central_free") + hs_diag_num(a, "allocator.thread_free");
    double kept = page + cache;
    char ev[512], b[5][32];
    if (!hs_diag_significant(kept, rss))
        return 0;
    hs_diag_mb(b[0], sizeof(b[0]), page);
    hs_diag_mb(b[1], sizeof(b[1]), cache);
    hs_diag_mb(b[2], sizeof(b[2]), hs_diag_num(a, "allocator.heap_size"));
    hs_diag_mb(b[3], sizeof(b[3]), hs_diag_num(a, "allocator.allocated"));
    hs_diag_mb(b[4], sizeof(b[4]), hs_diag_num(a, "allocator.unmapped"));
    snprintf(ev, sizeof(ev),
             "tcmalloc keeps %s of free pages in its page heap (tcmalloc.pageheap_free_bytes) "
             "and %s of free objects in its central, transfer and thread caches; heap size %s, "
             "allocated %s; %s given back already (unmapped)",
             b[0], b[1], b[2], b[3], b[4]);
    return hs_diagnosis_add(
        d, HS_DIAG_FRAGMENTATION, (int64_t)kept, NULL, ev,
        page >= cache ? "free pages go back at TCMALLOC_RELEASE_RATE (default 1; raise it, up "
                        "to 10, to give them back sooner), or at once with "
                        "MallocExtension::instance()->ReleaseFreeMemory() after a burst"
                      : "free objects wait in the size classes' caches: lower "
                        "TCMALLOC_MAX_TOTAL_THREAD_CACHE_BYTES, or allocate long-lived and "
                        "short-lived objects of one size apart");
}

/* The parts of the RSS (heap, profiler tables, stacks, code, other anonymous) add up to
 * it by construction; more than 5% over says a part was counted twice (the heap read
 * while a scan's pages were mapped), and no figure of the heap is then to be trusted. */
static bool diag_acct_consistent(const hs_diag_acct_t *a, double rss, double *sum)
{
    *sum = hs_diag_num(a, "maps.heap") + hs_diag_num(a, "profiler.maps") +
           hs_diag_num(a, "maps.stacks") + hs_diag_num(a, "maps.code") +
           hs_diag_num(a, "maps.other_anon");
    return *sum <= rss * 1.05 + 1048576 && hs_diag_num(a, "maps.heap") <= rss;
}

static int diag_frag(hs_diagnosis_t *d, const hs_diag_acct_t *a, double rss)
{
    const char *alloc = hs_diag_str(a, "allocator.name");
    double sum;
    char b[2][32];
    if (!diag_acct_consistent(a, rss, &sum)) {
        hs_diag_mb(b[0], sizeof(b[0]), sum);
        hs_diag_mb(b[1], sizeof(b[1]), rss);
        return hs_diagnosis_note(d,
                                 "fragmentation: not answered: the accounting's parts add up to "
                                 "%s, more than the RSS of %s, so the heap's figures are not "
                                 "to be trusted",
                                 b[0], b[1]);
    }
    if (alloc && strcmp(alloc, "glibc") == 0)
        return diag_frag_glibc(d, a, rss);
    if (alloc && strcmp(alloc, "jemalloc") == 0)
        return diag_frag_jemalloc(d, a, rss);
    if (alloc && strcmp(alloc, "tcmalloc") == 0 && hs_diag_str(a, "allocator.heap_size"))
        return diag_frag_tcmalloc(d, a, rss);
    if (alloc && strcmp(alloc, "unread") == 0)
        return hs_diagnosis_note(d, "fragmentation: not answered: the allocator's statistics "
                                    "were not read (the exit profile of a terminating signal)");
    return hs_diagnosis_note(
        d,
        "fragmentation: not answered: heapsift does not read the statistics of this allocator "
        "(%s)%s",
        d->allocator,
        strcmp(d->allocator, "tcmalloc") == 0
            ? "; it reads tcmalloc's through MallocExtension_GetNumericProperty, which this "
              "one does not export (linked in statically): its page-heap free bytes tell it, "
              "and TCMALLOC_RELEASE_RATE (or ReleaseFreeMemory()) returns them"
            : "");
}

static int diag_part(hs_diagnosis_t *d, double bytes, double rss, double floor, const char *site,
                     const char *ev, const char *advice)
{
    if (bytes < floor || !hs_diag_significant(bytes, rss))
        return 0;
    return hs_diagnosis_add(d, HS_DIAG_NOT_HEAP, (int64_t)bytes, site, ev, advice);
}

static int diag_not_heap(hs_diagnosis_t *d, const hs_diag_acct_t *a, double rss)
{
    char ev[384], b[32];
    double stacks = hs_diag_num(a, "maps.stacks"), threads = hs_diag_num(a, "exact.threads");
    double prof = hs_diag_num(a, "profiler.maps") + hs_diag_num(a, "profiler.heap");
    int rc;
    hs_diag_mb(b, sizeof(b), stacks);
    double all = hs_diag_num(a, "maps.threads");
    if (all > 0)
        snprintf(ev, sizeof(ev),
                 "%s resident in thread stacks (anonymous mappings above a guard page, and "
                 "[stack]) of %.0f threads (heapsift's own included)",
                 b, all);
    else
        snprintf(ev, sizeof(ev),
                 "%s resident in thread stacks (anonymous mappings above a guard page, and "
                 "[stack]); %.0f live threads have allocated (the profile counts no others)",
                 b, threads);
    if ((rc = diag_part(d, stacks, rss, 0, "thread stacks", ev,
                        "fewer threads, or smaller stacks (pthread_attr_setstacksize, ulimit -s); "
                        "a stack keeps the pages its deepest call touched")))
        return rc;
    hs_diag_mb(b, sizeof(b), hs_diag_num(a, "maps.code"));
    snprintf(ev, sizeof(ev),
             "%s resident in code and file mappings (RSS less the anonymous "
             "mappings; file-backed %s)",
             b, hs_diag_str(a, "rss.file") ?: "?");
    if ((rc = diag_part(d, hs_diag_num(a, "maps.code"), rss, 32.0 * 1048576, "file mappings", ev,
                        "mapped files count while their pages are cached: unmap what is no "
                        "longer read, or madvise(MADV_DONTNEED) it")))
        return rc;
    hs_diag_mb(b, sizeof(b), hs_diag_num(a, "maps.other_anon"));
    snprintf(ev, sizeof(ev),
             "%s resident in anonymous mappings the allocator did not make (the program's own "
             "mmap, static data, another allocator)%s",
             b,
             a->scanned ? "; this profile was written after a reachability scan by a heapsift "
                          "that read pages never written and so made them resident (about "
                          "40 MB in heapsift's tests; later versions skip them): compare with "
                          "a profile written without a scan"
                        : "");
    if ((rc = diag_part(d, hs_diag_num(a, "maps.other_anon"), rss, 0, "anonymous mappings", ev,
                        "look for the program's direct mmap calls and for a second allocator; "
                        "heapsift does not see these")))
        return rc;
    hs_diag_mb(b, sizeof(b), prof);
    snprintf(ev, sizeof(ev), "%s held by heapsift itself (its tables, maps copy and heap)", b);
    return diag_part(d, prof, rss, 0, "heapsift's own tables", ev,
                     "a lower sampling rate (a larger HEAPSIFT_RATE) keeps fewer stacks");
}

/* The reach line names calls that bypass heapsift: allocations it cannot see, of a size it
 * cannot know. */
static int diag_blind(hs_diagnosis_t *d, const hs_diag_acct_t *a)
{
    char ev[1024];
    if (!a->reach || !strstr(a->reach, "bypass heapsift"))
        return 0;
    snprintf(ev, sizeof(ev),
             "bytes unknown (0 here): heapsift cannot measure what it does not "
             "see; the profile's %s",
             a->reach);
    return hs_diagnosis_add(d, HS_DIAG_BLIND_SPOT, 0, NULL, ev,
                            "see docs/reach.md: install the decoder (libzydis) so heapsift can "
                            "hook the program's own allocator in place, or build it against "
                            "the system's malloc");
}

/* The allocator in use: the accounting's, else the one a mapping names (tcmalloc, which
 * heapsift does not break down), else "unknown". */
static const char *diag_allocator(const hs_diag_acct_t *a, const hs_profile_t *p)
{
    static const char *const known[] = {"glibc", "jemalloc", "tcmalloc", "mimalloc"};
    const char *alloc = hs_diag_str(a, "allocator.name");
    for (size_t i = 0; alloc && i < sizeof(known) / sizeof(known[0]); i++)
        if (strcmp(alloc, known[i]) == 0)
            return known[i];
    for (size_t m = 0; m < p->nmappings; m++)
        for (size_t i = 1; i < sizeof(known) / sizeof(known[0]); i++)
            if (strstr(hs_profile_get_str(p, p->mappings[m].filename), known[i]))
                return known[i];
    return "unknown";
}

int hs_diag_acct_findings(hs_diagnosis_t *d, const hs_profile_t *last)
{
    hs_diag_acct_t *a = malloc(sizeof(*a));
    int rc;
    if (!a)
        return -ENOMEM;
    hs_diag_acct_read(a, last);
    d->allocator = diag_allocator(a, last);
    if ((rc = diag_blind(d, a)))
        goto out;
    if (!hs_diag_str(a, "rss.rss")) {
        rc = hs_diagnosis_note(d, "fragmentation and not_heap: not answered: the profile "
                                  "carries no accounting (rss:, maps:, allocator: comments; "
                                  "heapsift's own profiles do)");
        goto out;
    }
    d->rss_bytes = (int64_t)hs_diag_num(a, "rss.rss");
    if (!(rc = diag_frag(d, a, (double)d->rss_bytes)))
        rc = diag_not_heap(d, a, (double)d->rss_bytes);
out:
    free(a);
    return rc;
}

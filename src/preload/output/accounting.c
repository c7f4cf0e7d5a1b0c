/*
 * Accounting: what the process really holds, recorded in every profile so that a reader
 * can tell a leak from fragmentation, allocator caching or memory that is not heap at
 * all. The totals (RSS, its anonymous/file split, swap) are the kernel's counters in
 * /proc/self/status; each anonymous mapping of /proc/self/maps is probed with mincore and
 * classified (the allocator's mappings, stacks, other anonymous), and what is left of the
 * RSS is the file-backed mappings'. /proc/self/smaps, which gave the same figures, walks
 * and weighs every page for its PSS: 1.7 ms of the exit dump of a 50 MB process, against
 * 0.1 ms for this; it is read when a mapping is too big to probe or mincore fails, and
 * smaps_rollup when smaps cannot be read. It asks the real allocator for its own figures
 * (glibc mallinfo2; jemalloc's mallctl stats, looked up with dlsym at dump time and used
 * only when jemalloc is the allocator hs_real resolved to) and sizes the profiler itself.
 * Runs on the dumping thread with the guard held, before the dump allocates anything;
 * reads files with open/read into stack buffers (a dump hands it the maps it read just
 * before, hs_acct_read_maps) and never touches application memory
 * directly (chunk headers are read with process_vm_readv, which fails instead of
 * faulting if a mapping vanished). `heapsift stats` turns the comments into a
 * reconciliation (src/cli/verbs/stats.c, docs/accounting.md).
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "runtime/core.h"
#include "accounting.h"
#include "reach/hooks.h"
#include "reach/reach.h"
#include "record/modules.h"
#include "record/peak.h"
#include "base/fdio.h"
#include "record/labels.h"
#include "record/livetab.h"
#include "base/maps.h"
#include "record/stacktab.h"
#include "symcache.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#define ACCT_ARENA_ALIGN (64ul << 20) /* glibc's HEAP_MAX_SIZE on 64-bit */

/* A line reader over a file descriptor, or over a text already read (text non-NULL). */
typedef struct {
    int fd;
    char buf[8192];
    size_t pos, len;
    const char *text;
    size_t text_len, text_pos;
} acct_reader_t;

/* A reader of fd, or of text (fd -1): its buffer is left as it is (8 KiB to clear at each
 * of a dump's reads was 8,000 instructions). */
static void acct_reader_init(acct_reader_t *r, int fd, const char *text, size_t len)
{
    r->fd = fd;
    r->pos = r->len = 0;
    r->text = text;
    r->text_len = len;
    r->text_pos = 0;
}

static ssize_t acct_fill(acct_reader_t *r, char *dst, size_t n)
{
    if (!r->text)
        return hs_fd_read(r->fd, dst, n);
    size_t k = r->text_len - r->text_pos < n ? r->text_len - r->text_pos : n;
    memcpy(dst, r->text + r->text_pos, k);
    r->text_pos += k;
    return (ssize_t)k;
}

/* The next line (NUL-terminated, without its newline), or NULL at the end. Lines longer
 * than the buffer are cut. */
static char *acct_line(acct_reader_t *r)
{
    for (;;) {
        char *nl = memchr(r->buf + r->pos, '\n', r->len - r->pos);
        if (nl || (r->len == sizeof(r->buf) - 1 && r->pos == 0)) {
            char *line = r->buf + r->pos;
            if (!nl)
                nl = r->buf + r->len - 1;
            *nl = '\0';
            r->pos = (size_t)(nl - r->buf) + 1;
            return line;
        }
        memmove(r->buf, r->buf + r->pos, r->len - r->pos);
        r->len -= r->pos;
        r->pos = 0;
        ssize_t n = acct_fill(r, r->buf + r->len, sizeof(r->buf) - 1 - r->len);
        if (n <= 0) {
            if (r->len == 0)
                return NULL;
            r->buf[r->len] = '\n'; /* last line without a newline */
            n = 1;
        }
        r->len += (size_t)n;
    }
}

/* "Name:   1234 kB" -> bytes, when line starts with key. */
static bool acct_kb(const char *line, const char *key, uint64_t *out)
{
    size_t k = strlen(key);
    if (line[0] != key[0] || strncmp(line, key, k) != 0 || line[k] != ':')
        return false;
    *out = strtoull(line + k + 1, NULL, 10) * 1024;
    return true;
}

static void acct_rollup(hs_acct_t *a)
{
    acct_reader_t r;
    acct_reader_init(&r, hs_open_high("/proc/self/smaps_rollup", O_RDONLY, 0), NULL, 0);
    char *line;
    if (r.fd < 0)
        return;
    while ((line = acct_line(&r)) != NULL) {
        acct_kb(line, "Rss", &a->rss);
        acct_kb(line, "Anonymous", &a->anon);
        acct_kb(line, "Swap", &a->swap);
    }
    hs_fd_close(r.fd);
    a->file = a->rss > a->anon ? a->rss - a->anon : 0;
}

/* One mapping of /proc/self/smaps. */
typedef struct {
    uintptr_t start, end;
    char perms[5];
    unsigned long inode;
    char path[64]; /* cut; only its first characters matter */
    uint64_t rss;
} acct_map_t;

static bool acct_parse_header(const char *line, acct_map_t *m)
{
    hs_map_t map;
    hs_maps_line_t x;
    /* A header starts with its address in lowercase hex; every field line ("Rss:",
     * "VmFlags:") with an uppercase letter. Testing that first spares the parser the 20
     * or so field lines of each mapping. */
    if (!((line[0] >= '0' && line[0] <= '9') || (line[0] >= 'a' && line[0] <= 'f')) ||
        !hs_maps_parse_line(line, line + strlen(line), &map, &x))
        return false;
    m->start = (uintptr_t)map.start;
    m->end = (uintptr_t)map.limit;
    memcpy(m->perms, x.perms, sizeof(m->perms));
    m->inode = (unsigned long)x.inode;
    size_t n = x.pathlen < sizeof(m->path) - 1 ? x.pathlen : sizeof(m->path) - 1;
    memcpy(m->path, x.path, n);
    m->path[n] = '\0';
    m->rss = 0;
    return true;
}

/* A glibc arena's heap: aligned to HEAP_MAX_SIZE and no bigger (a program's mapping of
 * 128 MiB may start at a 64 MiB boundary too: the kernel aligns big anonymous mappings
 * for huge pages, so one in 32 does). */
static bool acct_is_arena_heap(const acct_map_t *m)
{
    return (m->start & (ACCT_ARENA_ALIGN - 1)) == 0 && m->end - m->start <= ACCT_ARENA_ALIGN;
}

/* glibc's mmapped chunk: its header (prev_size, size) sits at the mapping's start, with
 * IS_MMAPPED set and prev_size + size == the mapping's length. */
static bool acct_is_glibc_chunk(const acct_map_t *m)
{
    uint64_t hdr[2];
    struct iovec local = {hdr, sizeof(hdr)};
    struct iovec remote = {(void *)m->start, sizeof(hdr)};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != (ssize_t)sizeof(hdr))
        return false;
    return (hdr[1] & 2) && (hdr[1] & ~7ull) + hdr[0] == m->end - m->start;
}

/* Not a file's mapping, nor the vdso's: the classes other than code. */
static bool acct_is_anon(const acct_map_t *m)
{
    return m->inode == 0 && (m->path[0] == '\0' || m->path[0] == '[') &&
           strcmp(m->path, "[vdso]") != 0 && strcmp(m->path, "[vvar]") != 0;
}

/* A PROT_NONE anonymous mapping: below a thread stack, glibc's guard. */
static bool acct_is_guard(const acct_map_t *m)
{
    return m->inode == 0 && m->path[0] == '\0' && strcmp(m->perms, "---p") == 0;
}

/* Adds a finished mapping to its class. prev_guard: the mapping right below it is a
 * PROT_NONE anonymous guard (a thread stack's, with glibc's layout). */
static void acct_classify(hs_acct_t *a, const acct_map_t *m, bool prev_guard)
{
    if (!m->rss)
        return;
    if (!acct_is_anon(m))
        a->code += m->rss;
    else if (strcmp(m->path, "[stack]") == 0)
        a->stacks += m->rss;
    else if (strcmp(m->path, "[heap]") == 0 && a->allocator != HS_ALLOC_JEMALLOC)
        a->heap += m->rss;
    else if (a->allocator == HS_ALLOC_GLIBC && m->path[0] == '\0' &&
             (acct_is_arena_heap(m) || acct_is_glibc_chunk(m)))
        a->heap += m->rss;
    else if (prev_guard && m->path[0] == '\0' && m->perms[0] == 'r' && m->perms[1] == 'w')
        a->stacks += m->rss;
    else
        a->other_anon += m->rss;
}

/* Returns false when smaps could not be read. */
static bool acct_smaps(hs_acct_t *a)
{
    acct_reader_t r;
    acct_reader_init(&r, hs_open_high("/proc/self/smaps", O_RDONLY, 0), NULL, 0);
    acct_map_t cur, next;
    bool have = false, prev_guard = false, cur_guard = false;
    char *line;
    uint64_t v;
    if (r.fd < 0)
        return false;
    while ((line = acct_line(&r)) != NULL) {
        if (acct_parse_header(line, &next)) {
            if (have)
                acct_classify(a, &cur, prev_guard);
            prev_guard = have && cur_guard && cur.end == next.start;
            cur = next;
            cur_guard = acct_is_guard(&cur);
            have = true;
        } else if (have) {
            if (acct_kb(line, "Rss", &cur.rss))
                a->rss += cur.rss;
            else if (acct_kb(line, "Anonymous", &v))
                a->anon += v;
            else if (acct_kb(line, "Swap", &v))
                a->swap += v;
        }
    }
    if (have)
        acct_classify(a, &cur, prev_guard);
    hs_fd_close(r.fd);
    a->file = a->rss > a->anon ? a->rss - a->anon : 0;
    return true;
}

/* The totals from the kernel's counters (/proc/self/status, no page walk). */
static bool acct_status(hs_acct_t *a)
{
    acct_reader_t r;
    acct_reader_init(&r, hs_open_high("/proc/self/status", O_RDONLY, 0), NULL, 0);
    uint64_t file = 0, shmem = 0;
    char *line;
    if (r.fd < 0)
        return false;
    while ((line = acct_line(&r)) != NULL) {
        acct_kb(line, "VmRSS", &a->rss);
        acct_kb(line, "RssAnon", &a->anon);
        acct_kb(line, "RssFile", &file);
        acct_kb(line, "RssShmem", &shmem);
        acct_kb(line, "VmSwap", &a->swap);
        if (acct_kb(line, "Threads", &a->threads))
            a->threads /= 1024; /* a count, not kB */
    }
    hs_fd_close(r.fd);
    a->file = file + shmem;
    return a->rss != 0;
}

/* Address space one mapping, and all of them together, may have probed: mincore writes
 * a byte a page, untouched ranges included (a 1 TiB reservation is 256 MiB of them). */
#define ACCT_PROBE_MAP_MAX (16ull << 30)
#define ACCT_PROBE_ALL_MAX (64ull << 30)

/* Resident bytes of [start, end): pages present in the page tables (the shared zero page
 * of a read-only touch included, which smaps leaves out). A mapping unmapped meanwhile
 * counts what was seen before (ENOMEM). False when mincore is refused otherwise. */
static bool acct_resident(uintptr_t start, uintptr_t end, uint64_t *out)
{
    unsigned char vec[4096];
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uint64_t pages = 0;
    for (uintptr_t p = start; p < end;) {
        uintptr_t len = end - p < sizeof(vec) * page ? end - p : sizeof(vec) * page;
        if (mincore((void *)p, len, vec) != 0) {
            *out = pages * page;
            return errno == ENOMEM;
        }
        size_t n = (len + page - 1) / page, i = 0;
        while (i + 8 <= n) { /* 8 pages a word: bit 0 of each byte, summed by byte lanes */
            uint64_t acc = 0;
            for (int k = 0; k < 255 && i + 8 <= n; k++, i += 8) { /* a lane holds 255 */
                uint64_t w;
                memcpy(&w, vec + i, sizeof(w));
                acc += w & 0x0101010101010101ull;
            }
            acc = (acc & 0x00ff00ff00ff00ffull) + ((acc >> 8) & 0x00ff00ff00ff00ffull);
            pages += (acc * 0x0001000100010001ull) >> 48; /* 4 lanes of 16 bits, summed */
        }
        for (; i < n; i++)
            pages += vec[i] & 1;
        p += len;
    }
    *out = pages * page;
    return true;
}

/* Whether a mapping is probed: anonymous memory the program can read (not the kernel's
 * own special mappings, [vvar], [vvar_vclock], [vsyscall] and the like, nor PROT_NONE). */
static bool acct_probed(const acct_map_t *m)
{
    const char *p = m->path;
    bool plain = p[0] == '\0' || strcmp(p, "[heap]") == 0 || strcmp(p, "[stack]") == 0 ||
                 strncmp(p, "[anon:", 6) == 0;
    return m->inode == 0 && plain && m->perms[0] == 'r';
}

/* The mappings of /proc/self/maps (maps: its text, read by the caller; NULL: read it
 * here): the anonymous ones probed and classified, the file-backed ones the rest of the
 * RSS. False when smaps has to answer instead. */
static bool acct_probe(hs_acct_t *a, const char *maps, size_t len)
{
    acct_reader_t r;
    acct_reader_init(&r, maps ? -1 : hs_open_high("/proc/self/maps", O_RDONLY, 0), maps, len);
    acct_map_t m;
    bool ok = true, prev_guard = false;
    uintptr_t prev_end = 0;
    uint64_t probed = 0;
    char *line;
    if (!maps && r.fd < 0)
        return false;
    while (ok && (line = acct_line(&r)) != NULL) {
        /* No field before the path holds a '/' or a '[': a '/' first is a path that is
         * neither empty nor "[...]", a mapping neither probed nor a guard, which needs no
         * parse (most lines: the dump parses them all again for its mappings). */
        const char *s = strpbrk(line, "/[");
        if (s && *s == '/') {
            prev_guard = false;
            continue;
        }
        if (!acct_parse_header(line, &m))
            continue;
        bool guard_below = prev_guard && prev_end == m.start;
        prev_guard = acct_is_guard(&m);
        prev_end = m.end;
        if (!acct_probed(&m))
            continue;
        probed += m.end - m.start;
        ok = m.end - m.start <= ACCT_PROBE_MAP_MAX && probed <= ACCT_PROBE_ALL_MAX &&
             acct_resident(m.start, m.end, &m.rss);
        if (ok)
            acct_classify(a, &m, guard_below);
    }
    if (r.fd >= 0)
        hs_fd_close(r.fd);
    if (!ok || !acct_status(a))
        return false;
    uint64_t anon = a->heap + a->stacks + a->other_anon;
    a->code = a->rss > anon ? a->rss - anon : 0;
    return true;
}

const char *const hs_alloc_names[4] = {"unknown", "glibc", "jemalloc", "tcmalloc"};

/* Which allocator hs_real.malloc is (or the malloc hooked in place): glibc's, jemalloc's
 * (mallctl in the same object: a static jemalloc's in the executable too), gperftools'
 * tcmalloc (MallocExtension_GetNumericProperty in the same object, exported), or another.
 * Decided once; *fn is the statistics' entry point. */
static int acct_allocator(void **fn)
{
    static int kind = -1;
    static void *ctl;
    if (kind < 0) {
        const char *name = NULL;
        void *c = dlsym(RTLD_DEFAULT, "mallctl");
        if (!c)
            c = hs_reach_mallctl();         /* a static jemalloc's: not exported */
        void *m = hs_hooks_entry("malloc"); /* hooked: hs_real.malloc is its trampoline */
        const void *self = hs_code_object(m ? m : (void *)hs_real.malloc, &name);
        kind = HS_ALLOC_UNKNOWN;
        if (self && name && self == hs_code_object(c, NULL)) {
            kind = HS_ALLOC_JEMALLOC;
            ctl = c;
        } else if (name && strstr(name, "libc.so")) {
            kind = HS_ALLOC_GLIBC;
        } else if (self) {
            void *tc = dlsym(RTLD_DEFAULT, "MallocExtension_GetNumericProperty");
            if (tc && self == hs_code_object(tc, NULL)) {
                kind = HS_ALLOC_TCMALLOC;
                ctl = tc;
            }
        }
    }
    *fn = ctl;
    return kind;
}

static void acct_glibc(hs_acct_t *a)
{
    struct mallinfo2 (*mi2)(void) = (struct mallinfo2(*)(void))dlsym(RTLD_DEFAULT, "mallinfo2");
    if (!mi2)
        return;
    struct mallinfo2 mi = mi2();
    a->a[0] = mi.arena;
    a->a[1] = mi.hblkhd;
    a->a[2] = mi.hblks;
    a->a[3] = mi.uordblks;
    a->a[4] = mi.fordblks;
    a->a[5] = mi.keepcost;
}

typedef int (*acct_mallctl_t)(const char *, void *, size_t *, void *, size_t);

static void acct_jemalloc(hs_acct_t *a, acct_mallctl_t ctl)
{
    static const char *const names[6] = {"stats.allocated", "stats.active",   "stats.metadata",
                                         "stats.resident",  "stats.retained", "stats.mapped"};
    uint64_t epoch = 1;
    size_t sz = sizeof(epoch);
    ctl("epoch", &epoch, &sz, &epoch, sz); /* refresh the statistics */
    for (int i = 0; i < 6; i++) {
        size_t v = 0, vs = sizeof(v);
        if (ctl(names[i], &v, &vs, NULL, 0) == 0)
            a->a[i] = v;
    }
    /* Its mappings are plain anonymous ones: move what it says is resident. */
    a->heap = a->a[3] < a->other_anon ? a->a[3] : a->other_anon;
    a->other_anon -= a->heap;
}

typedef int (*acct_tcprop_t)(const char *, size_t *);

/* gperftools' figures. It takes memory with sbrk first ([heap], counted already), then
 * plain anonymous mappings: what it holds mapped (heap_size - unmapped) beyond [heap] moves
 * from other anonymous to the heap. */
static void acct_tcmalloc(hs_acct_t *a, acct_tcprop_t get)
{
    static const char *const names[7] = {
        "generic.current_allocated_bytes",   "generic.heap_size",
        "tcmalloc.pageheap_free_bytes",      "tcmalloc.pageheap_unmapped_bytes",
        "tcmalloc.central_cache_free_bytes", "tcmalloc.transfer_cache_free_bytes",
        "tcmalloc.thread_cache_free_bytes"};
    size_t v[7] = {0};
    for (int i = 0; i < 7; i++)
        if (!get(names[i], &v[i]))
            v[i] = 0;
    uint64_t f[6] = {v[0], v[1], v[2], v[3], (uint64_t)v[4] + v[5], v[6]};
    memcpy(a->a, f, sizeof(f));
    uint64_t mapped = v[1] > v[3] ? v[1] - v[3] : 0;
    uint64_t more = mapped > a->heap ? mapped - a->heap : 0; /* [heap]: its sbrk'd part */
    more = more < a->other_anon ? more : a->other_anon;
    a->heap += more;
    a->other_anon -= more;
}

/* Heap a part above counts for itself (the trigger thread's kept names), registered. */
static uint64_t (*acct_own_mem)(void);

void hs_acct_own_mem(uint64_t (*fn)(void))
{
    acct_own_mem = fn;
}

/* The tables' mmap'd memory, as each table counts it. */
void hs_acct_profiler(hs_acct_t *a)
{
    a->prof_maps = hs_livetab_mem();
    a->prof_maps += hs_stacktab_mem();
    a->prof_maps += hs_filter_mem();
    a->prof_maps += hs_labels_mem();
    a->prof_heap = hs_peak_mem() + (acct_own_mem ? acct_own_mem() : 0) + hs_symcache_mem();
    uint64_t p = a->prof_maps < a->other_anon ? a->prof_maps : a->other_anon;
    a->other_anon -= p;
}

void hs_acct_read(hs_acct_t *a)
{
    hs_assert_guard();
    hs_acct_read_maps(a, NULL, 0, 0);
}

void hs_acct_read_maps(hs_acct_t *a, const char *maps, size_t len, uint64_t own)
{
    hs_acct_read_maps_ex(a, maps, len, own, true);
}

void hs_acct_read_maps_ex(hs_acct_t *a, const char *maps, size_t len, uint64_t own, bool stats)
{
    void *ctl = NULL;
    memset(a, 0, sizeof(*a));
    a->allocator = acct_allocator(&ctl);
    if (!acct_probe(a, maps, len)) {
        memset(a, 0, sizeof(*a));
        a->allocator = acct_allocator(&ctl);
        if (!acct_smaps(a))
            acct_rollup(a);
    }
    if (!a->threads) { /* the smaps route did not read /proc/self/status */
        hs_acct_t t = {0};
        acct_status(&t);
        a->threads = t.threads;
    }
    if (!stats)
        a->unread = true;
    else if (a->allocator == HS_ALLOC_GLIBC)
        acct_glibc(a);
    else if (a->allocator == HS_ALLOC_JEMALLOC)
        acct_jemalloc(a, (acct_mallctl_t)ctl);
    else if (a->allocator == HS_ALLOC_TCMALLOC)
        acct_tcmalloc(a, (acct_tcprop_t)ctl);
    hs_acct_profiler(a);
    /* The caller's pages holding maps are the profiler's too (an anonymous mapping). */
    uint64_t p = own < a->other_anon ? own : a->other_anon;
    a->prof_maps += own;
    a->other_anon -= p;
}

int hs_acct_format(const hs_acct_t *a, char lines[][200], int max)
{
    int n = 0;
    if (max < 4 || !a->rss)
        return 0;
    snprintf(lines[n++], 200, "rss: rss=%llu anon=%llu file=%llu swap=%llu",
             (unsigned long long)a->rss, (unsigned long long)a->anon, (unsigned long long)a->file,
             (unsigned long long)a->swap);
    snprintf(lines[n++], 200, "maps: heap=%llu stacks=%llu code=%llu other_anon=%llu threads=%llu",
             (unsigned long long)a->heap, (unsigned long long)a->stacks,
             (unsigned long long)a->code, (unsigned long long)a->other_anon,
             (unsigned long long)a->threads);
    snprintf(lines[n++], 200, "profiler: maps=%llu heap=%llu", (unsigned long long)a->prof_maps,
             (unsigned long long)a->prof_heap);
    const unsigned long long *v = (const unsigned long long *)a->a;
    if (a->unread) /* heapsift stats then splits nothing of the heap: no figure is made up */
        snprintf(lines[n++], 200, "allocator: unread");
    else if (a->allocator == HS_ALLOC_GLIBC)
        snprintf(lines[n++], 200,
                 "allocator: glibc arena=%llu mmap=%llu mmap_chunks=%llu in_use=%llu free=%llu "
                 "releasable=%llu",
                 v[0], v[1], v[2], v[3], v[4], v[5]);
    else if (a->allocator == HS_ALLOC_JEMALLOC)
        snprintf(lines[n++], 200,
                 "allocator: jemalloc allocated=%llu active=%llu metadata=%llu resident=%llu "
                 "retained=%llu mapped=%llu",
                 v[0], v[1], v[2], v[3], v[4], v[5]);
    else if (a->allocator == HS_ALLOC_TCMALLOC)
        snprintf(lines[n++], 200,
                 "allocator: tcmalloc allocated=%llu heap_size=%llu pageheap_free=%llu "
                 "unmapped=%llu central_free=%llu thread_free=%llu",
                 v[0], v[1], v[2], v[3], v[4], v[5]);
    else
        snprintf(lines[n++], 200, "allocator: %s", hs_alloc_names[0]);
    return n;
}

uint64_t hs_acct_rss_fast(void)
{
    char buf[128];
    int fd = hs_open_high("/proc/self/statm", O_RDONLY, 0);
    if (fd < 0)
        return 0;
    ssize_t n = hs_fd_read(fd, buf, sizeof(buf) - 1);
    hs_fd_close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *p = strchr(buf, ' ');
    return p ? strtoull(p + 1, NULL, 10) * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

void hs_acct_process(char *line, size_t cap)
{
    char args[512];
    ssize_t n = -1;
    int fd = hs_fd_open("/proc/self/cmdline", O_RDONLY, 0);
    if (fd >= 0) {
        n = hs_fd_read(fd, args, sizeof(args) - 1);
        hs_fd_close(fd);
    }
    size_t len = n > 0 ? (size_t)n : 0;
    while (len > 0 && args[len - 1] == '\0')
        len--;
    for (size_t i = 0; i < len; i++) /* one line: NULs between the arguments, and controls */
        if ((unsigned char)args[i] < 0x20 || args[i] == 0x7f)
            args[i] = args[i] ? '?' : ' ';
    args[len] = '\0';
    int k = snprintf(line, cap, "process: pid=%ld cmdline=%s", (long)getpid(), args);
    if (k >= (int)cap && cap > 4)
        memcpy(line + cap - 4, "...", 4); /* cut: said so */
}

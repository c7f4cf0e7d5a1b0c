/*
 * Reachability scan: which sampled live blocks does some pointer in the process still
 * point to? A conservative mark phase, as LeakSanitizer's, over the sampled blocks only:
 *   - the blocks are copied from the live table (under each shard's lock, one at a time)
 *     into memory of the scan's own (mmap, never malloc) and sorted by address;
 *   - roots are the readable and writable mappings of /proc/self/maps (data and bss of
 *     every object, every allocator's heap, thread stacks, anonymous mmaps), minus the
 *     byte ranges of the sampled blocks (a block counts only once something reaches it),
 *     minus heapsift's own writable memory (its data and bss, the live table's slots,
 *     this scan's arrays), and for the calling thread only the live part of its stack
 *     (from its stack pointer up, with its callee-saved registers spilled on it);
 *   - each word-aligned word whose value lies in [addr, end) of a block (its start or
 *     inside it) marks the block, and a marked block is scanned in turn (a worklist), so
 *     blocks kept alive only by unreached blocks (cycles among leaks) stay unreached.
 * Every read goes through process_vm_readv on the process itself, so a mapping that
 * changes or goes away under the scan is an error to skip (page by page), never a fault.
 * It never takes a lock but the live table's, and runs with the guard held, at exit
 * (leaks.c): never on an allocation path. What it cannot see (registers of the other
 * threads, hidden pointers) is in docs/leaks.md.
 */
#define _GNU_SOURCE
#include "reachscan.h"
#include "core.h"
#include "livetab.h"
#include "log.h"
#include "maps.h"
#include "sort.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define RS_BUF (64u << 10) /* bytes read per process_vm_readv: fits in L2 */
#define RS_EXCL_MAX 128u   /* heapsift's own ranges: 64 live table shards and a few more */
#define RS_PAGE 4096u

typedef struct {
    uintptr_t lo, hi;
} rs_range_t;

typedef struct {
    hs_reachscan_t *r;
    size_t cap;       /* blocks the copy has room for */
    bool overflow;    /* the live table grew past cap during the copy */
    uintptr_t lo, hi; /* lowest block start, highest block end */
    size_t nwork;
    uint8_t *buf; /* RS_BUF bytes in the same mapping */
    rs_range_t excl[RS_EXCL_MAX];
    size_t nexcl;
    pid_t pid;
    int fatal; /* -errno: process_vm_readv refused outright */
    /* A bit per hashed 4 KiB page, set for every page a block overlaps: most words that
     * point into the heap point to unsampled blocks, and one load turns them away before
     * the binary search. */
    uint64_t *filter;
    size_t filter_len;
    unsigned filter_shift; /* 64 - log2(bits) */
} rs_ctx_t;

static int64_t rs_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void rs_copy_one(hs_live_t *e, void *arg)
{
    rs_ctx_t *c = arg;
    if (c->r->n == c->cap) {
        c->overflow = true;
        return;
    }
    c->r->blocks[c->r->n++] = (hs_rs_block_t){
        .addr = e->addr,
        .end = e->addr + (e->size ? e->size : 1),
        .size = e->size,
        .weight = e->weight,
        .stack_id = e->stack_id,
    };
}

static int rs_cmp_block(const void *a, const void *b)
{
    const hs_rs_block_t *x = a, *y = b;
    return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* One mapping holds the blocks, the worklist and the read buffer. */
static int rs_alloc(rs_ctx_t *c, size_t cap)
{
    size_t len = cap * sizeof(hs_rs_block_t) + cap * sizeof(uint32_t) + RS_BUF;
    len = (len + RS_PAGE - 1) & ~(size_t)(RS_PAGE - 1);
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    c->r->blocks = p;
    c->r->work = (uint32_t *)(c->r->blocks + cap);
    c->buf = (uint8_t *)(c->r->work + cap);
    c->r->map_len = len;
    c->r->n = 0;
    c->cap = cap;
    return 0;
}

/* The live table, copied and sorted; a table that grows during the copy is copied again
 * into more room (a few tries: at exit it hardly moves). */
static int rs_copy(rs_ctx_t *c)
{
    for (int tries = 0; tries < 4; tries++) {
        size_t want = (size_t)hs_livetab_count();
        int rc = rs_alloc(c, want + want / 4 + 64);
        if (rc != 0)
            return rc;
        c->overflow = false;
        hs_livetab_each(rs_copy_one, c);
        if (!c->overflow) {
            hs_sort(c->r->blocks, c->r->n, sizeof(hs_rs_block_t), rs_cmp_block);
            return 0;
        }
        hs_reachscan_free(c->r);
    }
    return -EAGAIN;
}

static void rs_exclude(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    if (c->nexcl < RS_EXCL_MAX && lo < hi)
        c->excl[c->nexcl++] = (rs_range_t){lo, hi};
}

static void rs_exclude_table(uintptr_t lo, uintptr_t hi, void *arg)
{
    rs_exclude(arg, lo, hi);
}

/* heapsift's own writable segments (data, bss): its pins, options, TLS templates. */
static int rs_exclude_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    rs_ctx_t *c = arg;
    uintptr_t me = (uintptr_t)&rs_exclude_self;
    bool mine = false;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz)
            mine = true;
    }
    for (int i = 0; mine && i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_W))
            rs_exclude(c, lo & ~(uintptr_t)(RS_PAGE - 1),
                       (lo + ph->p_memsz + RS_PAGE - 1) & ~(uintptr_t)(RS_PAGE - 1));
    }
    return mine;
}

static int rs_cmp_range(const void *a, const void *b)
{
    const rs_range_t *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The block containing v, or -1. Blocks are sorted and do not overlap. */
static long rs_find(const rs_ctx_t *c, uintptr_t v)
{
    const hs_rs_block_t *b = c->r->blocks;
    size_t lo = 0, hi = c->r->n; /* answer: the last block with addr <= v */
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (b[mid].addr <= v)
            lo = mid;
        else
            hi = mid;
    }
    return c->r->n && b[lo].addr <= v && v < b[lo].end ? (long)lo : -1;
}

static inline uint64_t rs_filter_bit(const rs_ctx_t *c, uintptr_t v)
{
    return (uint64_t)(v >> 12) * 0x9e3779b97f4a7c15ull >> c->filter_shift;
}

/* The filter: bits = a power of two >= 16 per page marked, 2^16 to 2^28 (32 MiB). */
static int rs_filter_build(rs_ctx_t *c)
{
    const hs_rs_block_t *b = c->r->blocks;
    size_t pages = 0;
    unsigned lg = 16;
    for (size_t i = 0; i < c->r->n; i++)
        pages += ((b[i].end - 1) >> 12) - (b[i].addr >> 12) + 1;
    while (lg < 28 && ((size_t)1 << lg) < 16 * pages)
        lg++;
    c->filter_len = (size_t)1 << (lg - 3);
    void *p = mmap(NULL, c->filter_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    c->filter = p;
    c->filter_shift = 64 - lg;
    for (size_t i = 0; i < c->r->n; i++)
        for (uintptr_t pg = b[i].addr >> 12; pg <= (b[i].end - 1) >> 12; pg++) {
            uint64_t bit = rs_filter_bit(c, pg << 12);
            c->filter[bit >> 6] |= 1ull << (bit & 63);
        }
    return 0;
}

static HS_COLD void rs_hit(rs_ctx_t *c, uintptr_t v)
{
    long i = rs_find(c, v);
    if (i >= 0 && !c->r->blocks[i].reached) {
        c->r->blocks[i].reached = 1;
        c->r->work[c->nwork++] = (uint32_t)i;
    }
}

/* The hot loop: one subtraction and one compare per word outside the blocks' span, a
 * multiplication and a load from the filter inside it. */
static void rs_words(rs_ctx_t *c, const uintptr_t *w, size_t n)
{
    uintptr_t lo = c->lo, span = c->hi - c->lo;
    const uint64_t *f = c->filter;
    for (size_t i = 0; i < n; i++) {
        if (HS_LIKELY(w[i] - lo >= span))
            continue;
        uint64_t bit = rs_filter_bit(c, w[i]);
        if (f[bit >> 6] & (1ull << (bit & 63)))
            rs_hit(c, w[i]);
    }
}

/* Reads [lo, hi) into the buffer and scans it; what cannot be read is skipped, a page
 * at a time. Returns the bytes read. */
static uint64_t rs_read_scan(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    uint64_t got = 0;
    lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    hi &= ~(uintptr_t)(sizeof(uintptr_t) - 1);
    while (lo < hi && !c->fatal) {
        size_t len = hi - lo < RS_BUF ? hi - lo : RS_BUF;
        size_t page_end = ((lo + RS_PAGE) & ~(uintptr_t)(RS_PAGE - 1)) - lo;
        struct iovec local = {c->buf, len}, remote = {(void *)lo, len};
        ssize_t n = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
        if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
            c->fatal = -errno;
            break;
        }
        if (n <= 0 && len > page_end) { /* retry up to the end of this page only */
            remote.iov_len = local.iov_len = len = page_end;
            n = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
        }
        if (n <= 0) {
            c->r->skipped_bytes += len; /* unreadable now: gone or changed */
            lo += len;
            continue;
        }
        rs_words(c, (const uintptr_t *)(void *)c->buf, (size_t)n / sizeof(uintptr_t));
        got += (uint64_t)n & ~(uint64_t)(sizeof(uintptr_t) - 1);
        lo += (size_t)n & ~(size_t)(sizeof(uintptr_t) - 1);
        if ((size_t)n < sizeof(uintptr_t))
            lo += sizeof(uintptr_t);
    }
    return got;
}

/* A root range: scanned around the sampled blocks inside it. */
static void rs_root_gaps(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    const hs_rs_block_t *b = c->r->blocks;
    long i = c->r->n ? rs_find(c, lo) : -1;
    size_t k;
    if (i >= 0) {
        lo = b[i].end; /* lo lies inside block i */
        k = (size_t)i + 1;
    } else {
        size_t a = 0, z = c->r->n; /* first block with addr >= lo */
        while (a < z) {
            size_t mid = a + (z - a) / 2;
            if (b[mid].addr < lo)
                a = mid + 1;
            else
                z = mid;
        }
        k = a;
    }
    for (; lo < hi && k < c->r->n && b[k].addr < hi; k++) {
        if (b[k].addr > lo)
            c->r->root_bytes += rs_read_scan(c, lo, b[k].addr);
        if (b[k].end > lo)
            lo = b[k].end;
    }
    if (lo < hi)
        c->r->root_bytes += rs_read_scan(c, lo, hi);
}

/* A root mapping, minus heapsift's own ranges (sorted). */
static void rs_root(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    c->r->mappings++;
    for (size_t i = 0; i < c->nexcl && lo < hi; i++) {
        const rs_range_t *x = &c->excl[i];
        if (x->hi <= lo || x->lo >= hi)
            continue;
        if (x->lo > lo)
            rs_root_gaps(c, lo, x->lo);
        lo = x->hi;
    }
    if (lo < hi)
        rs_root_gaps(c, lo, hi);
}

/* Which mappings are roots: readable and writable, private or shared memory, but no
 * device (reading one may have effects) and no kernel page. */
static bool rs_is_root(const hs_map_t *m, const hs_maps_line_t *x)
{
    const char *p = x->path;
    size_t n = x->pathlen;
    if (!m->readable || !m->writable)
        return false;
    if (n >= 5 && memcmp(p, "/dev/", 5) == 0)
        return n >= 9 && memcmp(p, "/dev/zero", 9) == 0;
    if (n >= 6 && (memcmp(p, "[vvar]", 6) == 0 || memcmp(p, "[vdso]", 6) == 0))
        return false;
    return !(n >= 10 && memcmp(p, "[vsyscall]", 10) == 0);
}

/* Roots from /proc/self/maps. sp: the calling thread's stack pointer. */
static int rs_roots(rs_ctx_t *c, uintptr_t sp)
{
    hs_maps_text_t t;
    int rc = hs_maps_text_read(&t);
    if (rc != 0)
        return rc;
    rs_exclude(c, (uintptr_t)t.text, (uintptr_t)t.text + t.size);
    hs_sort(c->excl, c->nexcl, sizeof(c->excl[0]), rs_cmp_range);
    for (const char *p = t.text, *end = t.text + t.len; p < end && !c->fatal;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        hs_map_t m;
        hs_maps_line_t x;
        if (!eol)
            eol = end;
        if (hs_maps_parse_line(p, eol, &m, &x) && rs_is_root(&m, &x)) {
            uintptr_t lo = (uintptr_t)m.start, hi = (uintptr_t)m.limit;
            if (sp >= lo && sp < hi)
                lo = sp; /* below it: dead frames, stale copies of pointers */
            rs_root(c, lo, hi);
        }
        p = eol + 1;
    }
    hs_maps_text_free(&t);
    return c->fatal;
}

/* Called by hs_reachscan_run after it spilled the callee-saved registers on its frame:
 * scanning from this frame up reads them. */
static __attribute__((noinline)) int rs_scan(rs_ctx_t *c)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    int rc = rs_roots(c, sp);
    while (rc == 0 && c->nwork > 0 && !c->fatal) {
        const hs_rs_block_t *b = &c->r->blocks[c->r->work[--c->nwork]];
        c->r->block_bytes += rs_read_scan(c, b->addr, b->addr + b->size);
    }
    return rc ? rc : c->fatal;
}

int hs_reachscan_run(hs_reachscan_t *r)
{
    static rs_ctx_t c; /* big (the exclusions): off the stack, one scan at a time */
    int64_t t0 = rs_now();
    memset(r, 0, sizeof(*r));
    memset(&c, 0, sizeof(c));
    c.r = r;
    c.pid = getpid();
    int rc = rs_copy(&c);
    if (rc != 0)
        return rc;
    if (r->n > 0) {
        c.lo = r->blocks[0].addr;
        for (size_t i = 0; i < r->n; i++)
            c.hi = r->blocks[i].end > c.hi ? r->blocks[i].end : c.hi;
    }
    rc = rs_filter_build(&c);
    if (rc != 0) {
        hs_reachscan_free(r);
        return rc;
    }
    rs_exclude(&c, (uintptr_t)r->blocks, (uintptr_t)r->blocks + r->map_len);
    rs_exclude(&c, (uintptr_t)c.filter, (uintptr_t)c.filter + c.filter_len);
    hs_livetab_tables(rs_exclude_table, &c);
    dl_iterate_phdr(rs_exclude_self, &c);
    __builtin_unwind_init(); /* the callee-saved registers, on this frame */
    rc = rs_scan(&c);
    for (size_t i = 0; i < r->n; i++)
        r->reached += r->blocks[i].reached;
    r->ns = rs_now() - t0;
    munmap(c.filter, c.filter_len);
    if (rc != 0)
        hs_reachscan_free(r);
    return rc;
}

void hs_reachscan_free(hs_reachscan_t *r)
{
    if (r->blocks)
        munmap(r->blocks, r->map_len);
    r->blocks = NULL;
    r->work = NULL;
    r->n = 0;
}

void hs_reachscan_unreached(const hs_reachscan_t *r, double *objects, double *bytes, size_t nstacks)
{
    for (size_t i = 0; i < r->n; i++) {
        const hs_rs_block_t *b = &r->blocks[i];
        if (b->reached || b->stack_id < 0 || (size_t)b->stack_id >= nstacks)
            continue;
        objects[b->stack_id] += b->weight;
        bytes[b->stack_id] += b->weight * (double)b->size;
    }
}

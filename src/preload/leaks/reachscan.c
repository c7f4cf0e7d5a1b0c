/*
 * Reachability scan: which sampled live blocks does some pointer in the process still
 * point to? A conservative mark phase, as LeakSanitizer's, over the sampled blocks only:
 *   - the blocks are copied from the live table (under every shard's lock) into memory of
 *     the scan's own (mmap, never malloc) and sorted in place by address;
 *   - roots are the readable and writable mappings of /proc/self/maps (data and bss of
 *     every object, every allocator's heap, thread stacks, anonymous mmaps), minus the
 *     byte ranges of the sampled blocks (a block counts only once something reaches it),
 *     minus heapsift's own writable memory (its data and bss, the live table's slots,
 *     this scan's arrays, its threads' stacks), and for the calling thread only the live
 *     part of its stack (from its stack pointer up, with its callee-saved registers
 *     spilled on it);
 *   - each word-aligned word whose value lies in [addr, end) of a block (its start or
 *     inside it) marks the block, and a marked block is scanned in turn (a worklist), so
 *     blocks kept alive only by unreached blocks (cycles among leaks) stay unreached.
 * Every read goes through process_vm_readv on the process itself (in a snapshot's child,
 * /proc/self/mem), so a mapping that changes or goes away under the scan is an error to
 * skip (page by page), never a fault.
 * The other threads are stopped for it (stopworld.c): their general registers are roots,
 * and their stacks are read from their stack pointers up. Everything the scan needs is
 * made before they stop (the copy, under every shard lock, held until they go again; the
 * filter; the exclusions, which read the loader's list); once they are stopped it
 * allocates nothing and takes no lock, so a thread stopped inside malloc, dlopen or
 * heapsift itself cannot hold what it waits for. It runs with the guard held, at exit
 * (leaks.c) or on one of heapsift's own threads (heapsift_leak_check, HTTP): never on an
 * allocation path. What it cannot see (hidden pointers, vector registers) is in
 * docs/leaks.md.
 */
#define _GNU_SOURCE
#include "reachscan.h"
#include "base/monoclock.h"
#include "runtime/core.h"
#include "record/livetab.h"
#include "runtime/log.h"
#include "base/maps.h"
#include "record/spool.h"
#include "runtime/stopworld.h"
#include "runtime/threads.h"
#include "runtime/debugcheck.h"
#include "runtime/options.h"
#include "snapshot.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define RS_BUF (64u << 10) /* bytes read per process_vm_readv: fits in L2 */
#define RS_EXCL_MAX 160u   /* heapsift's own ranges: 64 live table shards, 32 thread stacks... */
#define RS_PAGE 4096u
#define RS_PM_BATCH 512u        /* pagemap entries per read: 2 MiB of the address space */
#define RS_PM_USED (3ull << 62) /* present or swapped: the page holds something */
#define RS_STOP_MS 1000         /* the longest wait for the other threads to stop */
#define RS_RED_ZONE 128         /* below a stopped thread's stack pointer: its leaf's red zone */

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
    /* In the snapshot's child, memory is read through /proc/self/mem. Not in place: fork
     * marks the child's page table entries old, and on a virtual machine the first load
     * through an old entry costs 6 to 9 us a page (1 GiB of 4 KiB pages: 1.6 s of CPU
     * against 0.07 s). Not by process_vm_readv: it pins the pages it reads (FOLL_PIN),
     * and a pin of an anonymous page shared with the parent since the fork makes the
     * kernel copy it for the child (unsharing, Linux 5.19 on): the whole heap copied.
     * /proc/self/mem takes each page without a pin and copies it through the kernel's own
     * mapping: neither cost. Without it, anonymous memory is read in place: nothing can
     * change the child's mappings under it (it is alone in its copy); a fault ends it,
     * and the scan is made again, stopped. */
    bool child;
    int mem_fd;  /* the child's /proc/self/mem; -1: not the child, or it cannot be read */
    bool direct; /* the mapping being read is anonymous: read in place (child, no mem_fd) */
    /* A bit per hashed 4 KiB page, set for every page a block overlaps: most words that
     * point into the heap point to unsampled blocks, and one load turns them away before
     * the binary search. */
    uint64_t *filter;
    size_t filter_len;
    unsigned filter_shift;    /* 64 - log2(bits) */
    hs_sw_t *sw;              /* the stopped threads: their registers and stack pointers */
    int pm_fd;                /* /proc/self/pagemap, -1 if it cannot be read */
    bool all_pages;           /* the root read now is shared: its pages are read, all */
    uint64_t pm[RS_PM_BATCH]; /* its entries for the pages read next */
} rs_ctx_t;

static int64_t rs_clock(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
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

static void rs_sift(hs_rs_block_t *b, size_t i, size_t n)
{
    for (;;) {
        size_t k = 2 * i + 1;
        if (k >= n)
            return;
        if (k + 1 < n && b[k + 1].addr > b[k].addr)
            k++;
        if (b[i].addr >= b[k].addr)
            return;
        hs_rs_block_t t = b[i];
        b[i] = b[k];
        b[k] = t;
        i = k;
    }
}

/* Heapsort by address, in place. Not qsort: glibc's qsort sorts elements this big through
 * a malloc'd array of pointers and a malloc'd copy, which it frees with every block's
 * address still in it; read later as roots (freed heap memory is), those copies made
 * lost blocks look reachable (reachprog's lost list, about one run in ten). */
static void rs_sort_blocks(hs_rs_block_t *b, size_t n)
{
    for (size_t i = n / 2; i-- > 0;)
        rs_sift(b, i, n);
    for (size_t end = n; end > 1; end--) {
        hs_rs_block_t t = b[0];
        b[0] = b[end - 1];
        b[end - 1] = t;
        rs_sift(b, 0, end - 1);
    }
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

static void rs_exclude(rs_ctx_t *c, uintptr_t lo, uintptr_t hi);

static void rs_exclude_table(uintptr_t lo, uintptr_t hi, void *arg)
{
    rs_exclude(arg, lo, hi);
}

/* The live table, copied and sorted, and its slots' ranges left out of the roots. Every
 * shard lock is held (hs_livetab_lock_all): the table cannot change under the copy. */
static int rs_copy(rs_ctx_t *c)
{
    size_t want = (size_t)hs_livetab_count();
    int rc = rs_alloc(c, want + 64);
    if (rc != 0)
        return rc;
    hs_livetab_each_locked(rs_copy_one, rs_exclude_table, c);
    if (c->overflow) { /* a count read racily: cannot happen with the locks held */
        hs_reachscan_free(c->r);
        return -EAGAIN;
    }
    rs_sort_blocks(c->r->blocks, c->r->n);
    return 0;
}

static void rs_exclude(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    if (c->nexcl < RS_EXCL_MAX && lo < hi)
        c->excl[c->nexcl++] = (rs_range_t){lo, hi};
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

/* Insertion sort of the exclusions (a few dozen): it runs with the threads stopped, where
 * qsort, which may malloc its scratch space, must not. */
static void rs_sort_ranges(rs_range_t *x, size_t n)
{
    for (size_t i = 1; i < n; i++) {
        rs_range_t v = x[i];
        size_t j = i;
        for (; j > 0 && x[j - 1].lo > v.lo; j--)
            x[j] = x[j - 1];
        x[j] = v;
    }
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

/* len bytes at lo into the buffer: through the child's /proc/self/mem, else
 * process_vm_readv. Returns the bytes read, -1 with errno set. */
static ssize_t rs_fetch(rs_ctx_t *c, uintptr_t lo, size_t len)
{
    if (c->mem_fd >= 0)
        return (ssize_t)syscall(SYS_pread64, c->mem_fd, c->buf, len, (long)lo);
    struct iovec local = {c->buf, len}, remote = {(void *)lo, len};
    return process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
}

/* Reads [lo, hi) into the buffer and scans it; what cannot be read is skipped, a page
 * at a time. Returns the bytes read. */
static uint64_t rs_read_run(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    uint64_t got = 0;
    lo = (lo + sizeof(uintptr_t) - 1) & ~(uintptr_t)(sizeof(uintptr_t) - 1);
    hi &= ~(uintptr_t)(sizeof(uintptr_t) - 1);
    if (c->direct && lo < hi) {
        rs_words(c, (const uintptr_t *)lo, (hi - lo) / sizeof(uintptr_t));
        return hi - lo;
    }
    while (lo < hi && !c->fatal) {
        size_t len = hi - lo < RS_BUF ? hi - lo : RS_BUF;
        size_t page_end = ((lo + RS_PAGE) & ~(uintptr_t)(RS_PAGE - 1)) - lo;
        ssize_t n = rs_fetch(c, lo, len);
        if (n < 0 && (errno == ENOSYS || errno == EPERM)) {
            c->fatal = -errno;
            break;
        }
        if (n <= 0 && len > page_end) /* retry up to the end of this page only */
            n = rs_fetch(c, lo, len = page_end);
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

/* [lo, hi), read only where its pages are present or swapped out (/proc/self/pagemap): a
 * private page never touched, or given back with MADV_DONTNEED, holds only zeros, and
 * reading it would make it resident (a reservation of 1 GiB became 1 GiB of RSS). A shared
 * mapping's page may hold what another process wrote without being mapped here: shared
 * roots, and everything when pagemap cannot be read, are read whole. Returns the bytes
 * read. */
static uint64_t rs_read_scan(rs_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    if (c->pm_fd < 0 || c->all_pages)
        return rs_read_run(c, lo, hi);
    uint64_t got = 0;
    uintptr_t pg = lo & ~(uintptr_t)(RS_PAGE - 1);
    while (pg < hi && !c->fatal) {
        size_t n = (hi - pg + RS_PAGE - 1) / RS_PAGE;
        n = n < RS_PM_BATCH ? n : RS_PM_BATCH;
        long k = syscall(SYS_pread64, c->pm_fd, c->pm, n * 8, (long)(pg / RS_PAGE * 8));
        if (k < 8)
            return got + rs_read_run(c, pg > lo ? pg : lo, hi);
        n = (size_t)k / 8;
        for (size_t i = 0; i < n;) {
            bool used = (c->pm[i] & RS_PM_USED) != 0;
            size_t j = i + 1;
            while (j < n && ((c->pm[j] & RS_PM_USED) != 0) == used)
                j++;
            uintptr_t a = pg + i * RS_PAGE, b = pg + j * RS_PAGE;
            a = a > lo ? a : lo;
            b = b < hi ? b : hi;
            if (used)
                got += rs_read_run(c, a, b);
            else
                c->r->untouched_bytes += b - a;
            i = j;
        }
        pg += n * RS_PAGE;
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

/* Anonymous memory, private: no file behind it to end early (SIGBUS), not shared. */
static bool rs_is_anon(const hs_maps_line_t *x)
{
    if (x->perms[3] != 'p')
        return false;
    return x->pathlen == 0 || (x->pathlen >= 6 && memcmp(x->path, "[heap]", 6) == 0) ||
           (x->pathlen >= 7 && memcmp(x->path, "[stack]", 7) == 0) ||
           (x->pathlen >= 6 && memcmp(x->path, "[anon:", 6) == 0);
}

/* /proc/self/maps with raw system calls into memory of its own (mmap, mremap): read
 * while the other threads are stopped, so nothing that may allocate or lock. */
static int rs_maps_read(hs_maps_text_t *t)
{
    size_t size = 256u << 10, len = 0;
    char *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/maps", O_RDONLY | O_CLOEXEC);
    int rc = fd < 0 ? -errno : 0;
    while (rc == 0) {
        if (size - len < 8192) {
            void *q = mremap(p, size, 2 * size, MREMAP_MAYMOVE);
            if (q == MAP_FAILED) {
                rc = -ENOMEM;
                break;
            }
            p = q;
            size *= 2;
        }
        long n = syscall(SYS_read, fd, p + len, size - len - 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            rc = -errno;
        if (n <= 0)
            break;
        len += (size_t)n;
    }
    if (fd >= 0)
        syscall(SYS_close, fd);
    if (rc != 0) {
        munmap(p, size);
        return rc;
    }
    p[len] = '\0';
    *t = (hs_maps_text_t){.text = p, .len = len, .size = size};
    return 0;
}

/* Where the live part of a stack in [lo, hi) starts: the lowest stack pointer in it of
 * the calling thread (sp) or a stopped thread (minus its red zone); lo if none. */
static uintptr_t rs_live_from(const rs_ctx_t *c, uintptr_t lo, uintptr_t hi, uintptr_t sp)
{
    uintptr_t cut = sp >= lo && sp < hi ? sp : hi;
    const hs_sw_t *w = c->sw;
    for (size_t i = 0; w && i < w->n; i++) {
        const hs_sw_slot_t *s = &w->slots[i];
        if (s->state != HS_SW_STOPPED || s->sp < lo || s->sp >= hi)
            continue;
        uintptr_t x = s->sp - lo >= RS_RED_ZONE ? s->sp - RS_RED_ZONE : lo;
        cut = x < cut ? x : cut;
    }
    return cut == hi ? lo : cut;
}

/* Roots from /proc/self/maps. sp: the calling thread's stack pointer. */
static int rs_roots(rs_ctx_t *c, uintptr_t sp)
{
    hs_maps_text_t t;
    int rc = rs_maps_read(&t);
    if (rc != 0)
        return rc;
    rs_exclude(c, (uintptr_t)t.text, (uintptr_t)t.text + t.size);
    rs_sort_ranges(c->excl, c->nexcl);
    for (const char *p = t.text, *end = t.text + t.len; p < end && !c->fatal;) {
        const char *eol = memchr(p, '\n', (size_t)(end - p));
        hs_map_t m;
        hs_maps_line_t x;
        if (!eol)
            eol = end;
        if (hs_maps_parse_line(p, eol, &m, &x) && rs_is_root(&m, &x)) {
            uintptr_t lo = (uintptr_t)m.start, hi = (uintptr_t)m.limit;
            c->direct = c->child && c->mem_fd < 0 && rs_is_anon(&x);
            /* below the stack pointers: dead frames, stale copies of pointers */
            c->all_pages = x.perms[3] == 's'; /* written by another process, maybe */
            rs_root(c, rs_live_from(c, lo, hi, sp), hi);
            c->all_pages = false;
        }
        p = eol + 1;
    }
    munmap(t.text, t.size);
    return c->fatal;
}

/* The stopped threads' registers, as they were when the signal came. */
static void rs_registers(rs_ctx_t *c)
{
    const hs_sw_t *w = c->sw;
    for (size_t i = 0; w && i < w->n; i++)
        if (w->slots[i].state == HS_SW_STOPPED)
            rs_words(c, (const uintptr_t *)(const void *)w->slots[i].regs, HS_SW_REGS);
}

/* Called by hs_reachscan_run after it spilled the callee-saved registers on its frame:
 * scanning from this frame up reads them. */
static __attribute__((noinline)) int rs_scan(rs_ctx_t *c)
{
    uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
    c->pm_fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    rs_registers(c);
    int rc = rs_roots(c, sp);
    c->direct = c->child && c->mem_fd < 0; /* the blocks: the heap's, live at the fork */
    while (rc == 0 && c->nwork > 0 && !c->fatal) {
        const hs_rs_block_t *b = &c->r->blocks[c->r->work[--c->nwork]];
        c->r->block_bytes += rs_read_scan(c, b->addr, b->addr + b->size);
    }
    if (c->pm_fd >= 0)
        syscall(SYS_close, c->pm_fd);
    return rc ? rc : c->fatal;
}

/* Everything the scan needs once the threads are stopped, made while nothing is: the
 * blocks (under every shard lock, which the caller holds), the filter, the exclusions. */
static int rs_prepare(rs_ctx_t *c)
{
    hs_reachscan_t *r = c->r;
    int rc = rs_copy(c);
    if (rc != 0)
        return rc;
    if (r->n > 0) {
        c->lo = r->blocks[0].addr;
        for (size_t i = 0; i < r->n; i++)
            c->hi = r->blocks[i].end > c->hi ? r->blocks[i].end : c->hi;
    }
    rc = rs_filter_build(c);
    if (rc != 0) {
        hs_reachscan_free(r);
        return rc;
    }
    rs_exclude(c, (uintptr_t)r->blocks, (uintptr_t)r->blocks + r->map_len);
    rs_exclude(c, (uintptr_t)c->filter, (uintptr_t)c->filter + c->filter_len);
    hs_thread_stacks(rs_exclude_table, c); /* heapsift's threads: no program pointers */
    hs_spool_ranges(rs_exclude_table, c);  /* their live slots name every sampled block */
    if (c->sw)                             /* the registers are read from the slots, once */
        rs_exclude(c, (uintptr_t)c->sw->slots, (uintptr_t)c->sw->slots + c->sw->map_len);
    return 0;
}

/* The stop's figures, for the report and the profile's comment. */
static void rs_note_stop(hs_reachscan_t *r, const hs_sw_t *w)
{
    r->threads_stopped = w->stopped;
    r->threads_blocked = w->blocked;
    r->threads_unanswered = w->unanswered + w->overflow;
    r->stop_ns = w->stop_ns;
    r->pause_ns = w->pause_ns;
}

/* The child's /proc/self/mem, kept only if a read of a word of c itself answers. */
static void rs_mem_open(rs_ctx_t *c)
{
    c->mem_fd = (int)syscall(SYS_openat, AT_FDCWD, "/proc/self/mem", O_RDONLY | O_CLOEXEC);
    if (c->mem_fd >= 0 && rs_fetch(c, (uintptr_t)&c->pid, sizeof(c->pid)) != sizeof(c->pid)) {
        syscall(SYS_close, c->mem_fd);
        c->mem_fd = -1;
    }
}

/* The snapshot's child: scans its own copy, hands the answer over, ends. Its pid is its
 * own (process_vm_readv of itself: the copy, not the running program). */
static __attribute__((noreturn)) void rs_child(rs_ctx_t *c, hs_snap_t *s)
{
    hs_snap_out_t *o = s->out;
    hs_snap_child_begin(s);
    c->pid = (pid_t)syscall(SYS_getpid);
    c->child = true;
    rs_exclude(c, (uintptr_t)o, (uintptr_t)o + s->out_len);
    rs_mem_open(c);
    int rc = rs_scan(c);
    for (size_t i = 0; rc == 0 && i < c->r->n; i++)
        o->reached[i] = (uint8_t)c->r->blocks[i].reached;
    o->rc = rc;
    o->root_bytes = c->r->root_bytes;
    o->block_bytes = c->r->block_bytes;
    o->skipped_bytes = c->r->skipped_bytes;
    o->untouched_bytes = c->r->untouched_bytes;
    o->mappings = c->r->mappings;
    o->cpu_ns = rs_clock(CLOCK_THREAD_CPUTIME_ID);
    __atomic_store_n(&o->done, 1, __ATOMIC_RELEASE);
    hs_snap_child_exit(0);
}

/* In the parent, the threads going again: the child's answer into r. */
static int rs_snap_collect(rs_ctx_t *c, hs_snap_t *s)
{
    hs_reachscan_t *r = c->r;
    int rc = hs_snap_wait(s);
    if (rc == 0 && s->out->rc != 0) {
        snprintf(s->why, sizeof(s->why), "the snapshot's scan failed: %s", strerror(-s->out->rc));
        rc = s->out->rc;
    }
    s->lost = rc != 0;
    if (rc != 0)
        return rc;
    for (size_t i = 0; i < r->n; i++)
        r->blocks[i].reached = s->out->reached[i];
    r->root_bytes = s->out->root_bytes;
    r->block_bytes = s->out->block_bytes;
    r->skipped_bytes = s->out->skipped_bytes;
    r->untouched_bytes = s->out->untouched_bytes;
    r->mappings = s->out->mappings;
    r->cpu_ns = s->out->cpu_ns;
    r->snapshot = true;
    return 0;
}

/* Stopped threads, the live table locked: the snapshot (s; NULL: none) or the scan in
 * place. With a snapshot the threads and the table go as soon as the fork returns. */
static int rs_stopped(rs_ctx_t *c, hs_sw_t *w, hs_snap_t *s, bool *collect)
{
    pid_t pid = s ? hs_snap_fork(s) : -1;
    if (pid == 0)
        rs_child(c, s);
    *collect = pid > 0;
    int rc = pid > 0 ? 0 : rs_scan(c);
    hs_livetab_unlock_all();
    if (c->sw)
        hs_sw_resume(w);
    return rc;
}

/* One scan: a snapshot's when s is given and one can be taken, else stop-the-world. */
static int rs_run(hs_reachscan_t *r, hs_snap_t *s)
{
    static rs_ctx_t c; /* big (the exclusions): off the stack, one scan at a time */
    static hs_sw_t w;
    bool collect = false;
    memset(&c, 0, sizeof(c));
    c.r = r;
    c.pid = getpid();
    c.mem_fd = -1;
    r->stop_rc = hs_sw_prepare(&w);
    c.sw = r->stop_rc == 0 ? &w : NULL;
    dl_iterate_phdr(rs_exclude_self, &c); /* the loader's lock: before anything stops */
    hs_livetab_lock_all();
    int rc = rs_prepare(&c);
    if (rc == 0 && s && hs_snap_map(s, r->n) != 0)
        s = NULL;
    if (rc == 0) {
        if (c.sw)
            hs_sw_stop(&w, RS_STOP_MS);
        __builtin_unwind_init(); /* the callee-saved registers, on this frame */
        rc = rs_stopped(&c, &w, s, &collect);
        if (collect)
            rc = rs_snap_collect(&c, s);
        munmap(c.filter, c.filter_len);
    } else {
        hs_livetab_unlock_all();
    }
    if (c.sw) {
        rs_note_stop(r, &w);
        hs_sw_free(&w);
    }
    return rc;
}

int hs_reachscan_run(hs_reachscan_t *r, bool at_exit)
{
    static hs_snap_t s;
    int64_t t0 = hs_mono_ns(), c0 = rs_clock(CLOCK_THREAD_CPUTIME_ID);
    memset(r, 0, sizeof(*r));
    bool snap = !at_exit && hs_snap_check(&s) == 0;
    if (at_exit) {
        memset(&s, 0, sizeof(s));
        snprintf(s.why, sizeof(s.why), "%s",
                 hs_opt.leaks_snapshot ? "at exit, the program is ending"
                                       : "HEAPSIFT_LEAKS_SNAPSHOT=0");
    }
    int rc = rs_run(r, snap ? &s : NULL);
    if (rc != 0 && snap && s.lost) {
        hs_reachscan_free(r); /* the child failed after the threads went: again, stopped */
        memset(r, 0, sizeof(*r));
        rc = rs_run(r, NULL);
    }
    r->fork_ns = s.fork_ns;
    snprintf(r->snap_why, sizeof(r->snap_why), "%s", r->snapshot ? "" : s.why);
    hs_snap_free(&s);
    for (size_t i = 0; rc == 0 && i < r->n; i++)
        r->reached += r->blocks[i].reached;
    r->ns = hs_mono_ns() - t0;
    r->cpu_ns += rs_clock(CLOCK_THREAD_CPUTIME_ID) - c0;
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

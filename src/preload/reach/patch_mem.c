/*
 * The patcher's memory side (patch_int.h; the design is in patch.c's header): reading
 * /proc/self/maps without stdio or malloc, mapping trampoline pages within +-2 GB of the
 * code they serve, and writing code that other threads may be running (one locked
 * compare-exchange of the word holding the bytes, or jmp $ first when they cross a cache
 * line; the cores serialized with membarrier). Never on an allocation path; called under
 * patch.c's lock.
 */
#define _GNU_SOURCE
#include "patch_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/membarrier.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)

typedef struct {
    uint8_t *base;
    unsigned used;
} patch_page_t;

static patch_page_t patch_pages[PATCH_MAX_PAGES];
static int patch_npages;
static int patch_membarrier; /* 0 untried, 1 registered, -1 unavailable */

/* ---- /proc/self/maps without stdio or malloc -------------------------------------- */

typedef struct {
    int fd;
    size_t len, pos;
    char buf[4096];
} patch_maps_t;

static uintptr_t patch_hex(const char **s)
{
    uintptr_t v = 0;
    for (;; (*s)++) {
        char c = **s;
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
        if (d < 0)
            return v;
        v = v * 16 + (uintptr_t)d;
    }
}

/* The next mapping, false at the end. A line is at most PATH_MAX + ~80 bytes; only its
   first 256 matter, the rest is skipped. */
static bool patch_maps_next(patch_maps_t *r, hs_patch_map_t *m)
{
    char line[256];
    size_t n = 0;
    for (;;) {
        if (r->pos == r->len) {
            ssize_t k = read(r->fd, r->buf, sizeof(r->buf));
            if (k <= 0)
                return false;
            r->len = (size_t)k;
            r->pos = 0;
        }
        char c = r->buf[r->pos++];
        if (c == '\n')
            break;
        if (n < sizeof(line) - 1)
            line[n++] = c;
    }
    line[n] = '\0';
    const char *s = line;
    m->lo = patch_hex(&s);
    s++;
    m->hi = patch_hex(&s);
    s++;
    m->prot = (s[0] == 'r' ? PROT_READ : 0) | (s[1] == 'w' ? PROT_WRITE : 0) |
              (s[2] == 'x' ? PROT_EXEC : 0);
    for (int field = 0; field < 4 && *s; field++) { /* perms, offset, dev, inode */
        while (*s && *s != ' ')
            s++;
        while (*s == ' ')
            s++;
    }
    snprintf(m->name, sizeof(m->name), "%s", s);
    return true;
}

static int patch_maps_open(patch_maps_t *r)
{
    r->len = r->pos = 0;
    r->fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
    return r->fd < 0 ? -errno : 0;
}

/* The mapping holding addr; false if none. */
bool hs_patch_map_of(uintptr_t addr, hs_patch_map_t *out)
{
    patch_maps_t r;
    bool found = false;
    if (patch_maps_open(&r) < 0)
        return false;
    while (!found && patch_maps_next(&r, out))
        found = addr >= out->lo && addr < out->hi;
    close(r.fd);
    return found;
}

/* ---- trampoline pages --------------------------------------------------------------- */

static bool patch_near(uintptr_t a, uintptr_t b)
{
    return (a > b ? a - b : b - a) < PATCH_NEAR;
}

/* The best free page within reach of at in the gap [glo, ghi): the one nearest at, except
   next to [heap] (brk grows up into the gap after it) or [stack] (grows down). */
static void patch_gap(uintptr_t glo, uintptr_t ghi, uintptr_t at, bool after_heap,
                      bool before_stack, uintptr_t *best)
{
    uintptr_t lo = at > PATCH_NEAR ? at - PATCH_NEAR : PATCH_PAGE * 16;
    uintptr_t hi = at + PATCH_NEAR;
    uintptr_t a = (glo > lo ? glo : lo + PATCH_PAGE - 1) & ~(uintptr_t)(PATCH_PAGE - 1);
    uintptr_t b = ((ghi < hi ? ghi : hi) & ~(uintptr_t)(PATCH_PAGE - 1));
    if (b < a + PATCH_PAGE)
        return;
    b -= PATCH_PAGE;
    uintptr_t c = after_heap ? b : before_stack ? a : at < a ? a : at > b ? b : at;
    if (!patch_near(c, at) || !patch_near(c + PATCH_PAGE, at))
        return;
    if (!*best || (c > at ? c - at : at - c) < (*best > at ? *best - at : at - *best))
        *best = c;
}

static uint8_t *patch_map_near(uintptr_t at)
{
    for (int attempt = 0; attempt < 4; attempt++) {
        patch_maps_t r;
        hs_patch_map_t m;
        uintptr_t best = 0, prev_end = PATCH_PAGE * 16;
        bool prev_heap = false;
        if (patch_maps_open(&r) < 0)
            return NULL;
        while (patch_maps_next(&r, &m) && m.lo < (uintptr_t)0x7ffffffff000ull) {
            if (m.lo > prev_end)
                patch_gap(prev_end, m.lo, at, prev_heap, strncmp(m.name, "[stack]", 7) == 0, &best);
            if (m.hi > prev_end)
                prev_end = m.hi;
            prev_heap = strncmp(m.name, "[heap]", 6) == 0;
        }
        close(r.fd);
        if (!best)
            return NULL;
        void *p = mmap((void *)best, PATCH_PAGE, PROT_READ | PROT_EXEC,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == (void *)best)
            return p;
        if (p != MAP_FAILED) /* a kernel before 4.17 took it as a hint */
            munmap(p, PATCH_PAGE);
    } /* else another thread mapped there meanwhile: look again */
    return NULL;
}

/* A free slot: within reach of at (SLOT_NEAR), anywhere, or (HS_PATCH_FORCE_ABS, for the
   tests of the absolute forms) in a page out of reach. NULL if none. The caller takes it
   by counting it used. */
uint8_t *hs_patch_slot_find(uintptr_t at, int where, int *page)
{
    bool near = where == SLOT_NEAR;
    for (int i = 0; i < patch_npages; i++) {
        patch_page_t *pg = &patch_pages[i];
        bool reach =
            patch_near((uintptr_t)pg->base, at) && patch_near((uintptr_t)pg->base + PATCH_PAGE, at);
        if (pg->used < PATCH_SLOTS_PER_PAGE && (where == SLOT_ANY || reach == near)) {
            *page = i;
            return pg->base + pg->used * PATCH_SLOT;
        }
    }
    if (patch_npages == PATCH_MAX_PAGES)
        return NULL;
    uint8_t *base = near ? patch_map_near(at) : NULL;
    if (!near) {
        void *p = mmap(NULL, PATCH_PAGE, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        base = p == MAP_FAILED ? NULL : p;
    }
    if (!base)
        return NULL;
    memset(&patch_pages[patch_npages], 0, sizeof(patch_pages[0]));
    patch_pages[patch_npages].base = base;
    *page = patch_npages++;
    return base;
}

/* Writes len bytes at dst inside trampoline page pg (r-x -> rwx -> r-x: other slots of the
   page stay executable throughout). */
int hs_patch_slot_write(int pg, uint8_t *dst, const uint8_t *src, size_t len)
{
    uint8_t *base = patch_pages[pg].base;
    if (mprotect(base, PATCH_PAGE, PROT_READ | PROT_WRITE | PROT_EXEC) != 0)
        return -errno;
    if (len == 8 && ((uintptr_t)dst & 7) == 0) { /* a stub's hook word: a thread may read it */
        uint64_t v;
        memcpy(&v, src, 8);
        __atomic_store_n((uint64_t *)dst, v, __ATOMIC_RELEASE);
    } else {
        memcpy(dst, src, len);
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return mprotect(base, PATCH_PAGE, PROT_READ | PROT_EXEC) != 0 ? -errno : 0;
}

void hs_patch_slot_taken(int pg)
{
    patch_pages[pg].used++;
}

int hs_patch_slot_page(const uint8_t *slot)
{
    for (int i = 0; i < patch_npages; i++)
        if (slot >= patch_pages[i].base && slot < patch_pages[i].base + PATCH_PAGE)
            return i;
    return -1;
}

/* ---- writing code that other threads may be running --------------------------------- */

static bool patch_cas8(uint8_t *w, uint64_t old, uint64_t nv)
{
    bool ok;
    __asm__ volatile("lock cmpxchgq %3, %1"
                     : "=@ccz"(ok), "+m"(*(volatile uint64_t *)w), "+a"(old)
                     : "r"(nv)
                     : "memory");
    return ok;
}

static bool patch_cas2(uint8_t *w, uint16_t old, uint16_t nv)
{
    bool ok;
    __asm__ volatile("lock cmpxchgw %3, %1"
                     : "=@ccz"(ok), "+m"(*(volatile uint16_t *)w), "+a"(old)
                     : "r"(nv)
                     : "memory");
    return ok;
}

/* Replaces n <= 8 bytes at p with one locked 8-byte compare-exchange of the word [w, w+8)
   holding them, w inside p's cache line. */
static void patch_store_word(uint8_t *p, const uint8_t *bytes, size_t n)
{
    uintptr_t up = (uintptr_t)p, w = up & ~(uintptr_t)7;
    if (up + n > w + 8) {
        uintptr_t line_last = (up | 63) - 7;
        w = up < line_last ? up : line_last;
    }
    uint64_t old, nv;
    do {
        memcpy(&old, (const void *)w, 8);
        nv = old;
        memcpy((uint8_t *)&nv + (up - w), bytes, n);
    } while (!patch_cas8((uint8_t *)w, old, nv));
}

static void patch_sync_cores(void)
{
    if (patch_membarrier == 0)
        patch_membarrier =
            syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0) == 0
                ? 1
                : -1;
    if (patch_membarrier > 0)
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED_SYNC_CORE, 0, 0);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
}

/* Makes [p, p+n) (at most two pages) writable, keeping each page's protection otherwise.
   prot[] receives the originals for patch_unprotect. */
static int patch_unprotect(uint8_t *p, size_t n, int prot[2])
{
    uintptr_t first = (uintptr_t)p & ~(uintptr_t)(PATCH_PAGE - 1);
    uintptr_t last = ((uintptr_t)p + n - 1) & ~(uintptr_t)(PATCH_PAGE - 1);
    for (int i = 0; i < 2; i++) {
        uintptr_t pg = first + i * PATCH_PAGE;
        hs_patch_map_t m;
        prot[i] = -1;
        if (pg > last)
            break;
        if (!hs_patch_map_of(pg, &m))
            return -EFAULT;
        if (mprotect((void *)pg, PATCH_PAGE, m.prot | PROT_WRITE) != 0)
            return -errno;
        prot[i] = m.prot;
    }
    return 0;
}

static int patch_protect(uint8_t *p, const int prot[2])
{
    uintptr_t first = (uintptr_t)p & ~(uintptr_t)(PATCH_PAGE - 1);
    int rc = 0;
    for (int i = 0; i < 2; i++)
        if (prot[i] >= 0 && mprotect((void *)(first + i * PATCH_PAGE), PATCH_PAGE, prot[i]) != 0)
            rc = -errno;
    return rc;
}

/* Writes n bytes of code at p so that a thread fetching there sees the old bytes, the new
   ones, or (cache-line-crossing case only) a `jmp $` it spins on until the end. */
int hs_patch_write_code(uint8_t *p, const uint8_t *bytes, size_t n)
{
    int prot[2] = {-1, -1};
    int rc = patch_unprotect(p, n, prot);
    if (rc < 0)
        goto out;
    if (n <= 8 && ((uintptr_t)p & 63) + n <= 64) {
        patch_store_word(p, bytes, n);
    } else if (((uintptr_t)p & 63) == 63) {
        rc = -EINVAL; /* no atomic two-byte `jmp $` at the last byte of a line */
    } else {
        uint16_t head;
        memcpy(&head, p, 2);
        patch_cas2(p, head, 0xfeeb); /* EB FE: jmp $ */
        patch_sync_cores();
        for (size_t i = 2; i < n; i++)
            ((volatile uint8_t *)p)[i] = bytes[i];
        patch_sync_cores();
        memcpy(&head, bytes, 2);
        patch_cas2(p, 0xfeeb, head);
    }
    patch_sync_cores();
out:;
    int rc2 = patch_protect(p, prot);
    return rc < 0 ? rc : rc2;
}

#endif

/*
 * Unwinder variant "dwarf" (the default): walks the calling thread's stack with the DWARF
 * CFI of .eh_frame (unwind_cfi.c), so it is right for code built without frame pointers,
 * and caches the reduced rule of every return address in a lock-free direct-mapped table
 * shared by all threads, so that a capture through known code costs a hash probe and
 * two or three loads per frame (udw_walk). It exists because libunwind validates addresses through
 * a pipe it keeps open at descriptors the application may later reuse, and because
 * libgcc's _Unwind_Backtrace, while safe, costs 10-20x more per capture.
 *
 * Safety: it reads only the current thread's stack, between its own frame and the
 * stack's top (bounds from pthread_getattr_np, once per thread, with the reentrancy
 * guard held since glibc allocates there; the main thread's from the loader and mincore,
 * udw_main_bounds), and checks every read against them; the CFA
 * must rise strictly from frame to frame. It never allocates or locks otherwise. A frame
 * it cannot follow (signal trampoline, expression rules, CFA in another register) or a
 * stack it does not know (sigaltstack, coroutines) sends the whole capture to
 * hs_unwind_libgcc instead, counted in hs_unwind_dwarf_fallbacks. Called by
 * hs_unwind_capture on the sampled path, before any profiler lock.
 */
#define _GNU_SOURCE
#include "unwind.h"
#include "unwind_cfi.h"
#include "runtime/sandbox.h"

#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define HS_UDW_TLS __attribute__((tls_model("initial-exec")))
#if defined(__clang__) /* clang keeps %rbp for __builtin_frame_address on its own */
#define HS_UDW_KEEP_FP __attribute__((noinline))
#else
#define HS_UDW_KEEP_FP __attribute__((noinline, optimize("no-omit-frame-pointer")))
#endif

/* 8192 slots of 16 bytes (128 KiB of .bss, touched lazily) in sets of two: a program's
 * hot allocation paths rarely span more than a few thousand distinct return addresses.
 * Two ways, because with one a pair of hot addresses that hash alike evict each other at
 * every sample, and which pairs do depends on where the code lands: a build of heapsift
 * whose functions had moved spent 0.65 rule lookups per sample in churn (2,260
 * instructions per walk against 1,150) until the sets had two ways. */
#define HS_UDW_CACHE_BITS 13
#define HS_UDW_CACHE_SIZE (1u << HS_UDW_CACHE_BITS)
#define HS_UDW_KEY_EMPTY 0
#define HS_UDW_KEY_BUSY 1 /* a writer owns the slot; pcs are never this small */

/* libgcc's first frames: its own and ours, before our caller's return address. */
#define HS_UDW_FALLBACK_SKIP 4

typedef struct {
    uint64_t key; /* pc, EMPTY or BUSY */
    uint64_t rule;
} hs_udw_slot_t;

typedef struct {
    uintptr_t pc, sp, rbp; /* sp: the caller's %rsp, i.e. the previous frame's CFA */
    uintptr_t lo, hi;      /* readable: [lo, hi - 8] */
} hs_udw_regs_t;

static hs_udw_slot_t hs_udw_cache[HS_UDW_CACHE_SIZE] __attribute__((aligned(32)));
static uint64_t hs_udw_fallbacks;

static __thread uintptr_t hs_udw_lo HS_UDW_TLS, hs_udw_hi HS_UDW_TLS;
static __thread int hs_udw_state HS_UDW_TLS; /* 0 unknown, 1 bounds known, -1 failed */
/* The main thread's bounds are its own (udw_main_bounds); below floor, no frame is. */
static __thread bool hs_udw_main HS_UDW_TLS;
/* Another thread's bounds found under its descriptor (udw_thread_bounds). */
static __thread bool hs_udw_thread HS_UDW_TLS;
static __thread uintptr_t hs_udw_floor HS_UDW_TLS;
/* The return addresses whose rules this thread's last walk looked up first. */
#define UDW_RECENT 8
static __thread uintptr_t hs_udw_recent[UDW_RECENT] HS_UDW_TLS;

/* ---- the rule cache ------------------------------------------------------------------- */

/*
 * A seqlock per slot whose sequence is the key itself: a writer claims the slot by
 * swapping its key to BUSY (so two writers never interleave), stores the rule, then
 * publishes the key; a reader accepts the rule only if the key equals pc before and
 * after reading it. On x86-64 the hit path is three plain loads per way.
 */
static inline hs_udw_slot_t *udw_set(uintptr_t pc)
{
    size_t i = (size_t)(((uint64_t)pc * 0x9e3779b97f4a7c15ull) >> (64 - HS_UDW_CACHE_BITS));
    return &hs_udw_cache[i & ~(size_t)1];
}

/* Into an empty way of pc's set, else into the way a bit of pc picks. */
static void udw_cache_put(uintptr_t pc, const hs_cfi_rule_t *rule)
{
    hs_udw_slot_t *set = udw_set(pc);
    hs_udw_slot_t *s = &set[(pc >> 4) & 1];
    if (__atomic_load_n(&set[0].key, __ATOMIC_RELAXED) == HS_UDW_KEY_EMPTY)
        s = &set[0];
    else if (__atomic_load_n(&set[1].key, __ATOMIC_RELAXED) == HS_UDW_KEY_EMPTY)
        s = &set[1];
    uint64_t k = __atomic_load_n(&s->key, __ATOMIC_RELAXED), v;

    if (k == HS_UDW_KEY_BUSY || !__atomic_compare_exchange_n(&s->key, &k, HS_UDW_KEY_BUSY, false,
                                                             __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        return; /* another writer has it: this rule can wait for the next miss */
    __atomic_thread_fence(__ATOMIC_RELEASE); /* BUSY is visible before the new rule */
    memcpy(&v, rule, sizeof(v));
    __atomic_store_n(&s->rule, v, __ATOMIC_RELAXED);
    __atomic_store_n(&s->key, (uint64_t)pc, __ATOMIC_RELEASE);
}

void hs_unwind_dwarf_invalidate(void)
{
    for (size_t i = 0; i < HS_UDW_CACHE_SIZE; i++) {
        uint64_t k = __atomic_load_n(&hs_udw_cache[i].key, __ATOMIC_RELAXED);
        if (k != HS_UDW_KEY_EMPTY && k != HS_UDW_KEY_BUSY)
            __atomic_compare_exchange_n(&hs_udw_cache[i].key, &k, HS_UDW_KEY_EMPTY, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED);
    }
}

uint64_t hs_unwind_dwarf_fallbacks(void)
{
    return __atomic_load_n(&hs_udw_fallbacks, __ATOMIC_RELAXED);
}

/* A rule as the cache holds it: one word, hs_cfi_rule_t's bytes (little-endian x86-64). */
#define UDW_CFA_OFF(w) ((intptr_t)(int32_t)(uint32_t)(w))
#define UDW_RBP_OFF(w) ((intptr_t)(int16_t)(uint16_t)((w) >> 32))
#define UDW_RA_OFF(w) ((intptr_t)(int8_t)(uint8_t)((w) >> 48))
#define UDW_FLAGS(w) ((unsigned)((w) >> 56))
_Static_assert(offsetof(hs_cfi_rule_t, cfa_off) == 0 && offsetof(hs_cfi_rule_t, rbp_off) == 4 &&
                   offsetof(hs_cfi_rule_t, ra_off) == 6 && offsetof(hs_cfi_rule_t, flags) == 7,
               "the UDW_ accessors follow hs_cfi_rule_t's layout");

/* The miss path: the rule from the CFI, cached. Where no FDE covers pc (code without
 * unwind tables, as most of Debian's Chromium, or code outside every object, as a JIT's),
 * the frame-pointer rule: CFA = %rbp + 16, the return address below it, the caller's %rbp
 * at %rbp. A frame that keeps no frame pointer gives a %rbp the walk's checks reject (the
 * CFA must rise and stay on the stack), and the walk ends there. That rule is cached for
 * an address inside a loaded object (as lasting as an FDE's rule: Chromium's stacks are
 * mostly such frames), not for one outside every object: code loaded there later must be
 * found. */
static __attribute__((noinline)) uint64_t udw_rule_miss(uintptr_t pc)
{
    hs_cfi_rule_t rule;
    uint64_t w;
    hs_cfi_result_t res = hs_cfi_rule(pc, &rule);

    if (res == HS_CFI_NO_FDE || res == HS_CFI_NO_OBJECT)
        rule = (hs_cfi_rule_t){16, -16, -8, HS_CFI_CFA_RBP | HS_CFI_RBP_AT_CFA};
    if (res != HS_CFI_NO_OBJECT)
        udw_cache_put(pc, &rule);
    memcpy(&w, &rule, sizeof(w));
    return w;
}

/* The rule word for a return address (pc - 1 is inside the call, as libgcc looks it up):
 * on a hit, the seqlock read of the way holding it (the key before and after the rule). */
static inline uint64_t udw_rule(uintptr_t ra)
{
    uintptr_t pc = ra - 1;
    hs_udw_slot_t *set = udw_set(pc);

    for (int way = 0; way < 2; way++) {
        hs_udw_slot_t *s = &set[way];
        if (__atomic_load_n(&s->key, __ATOMIC_ACQUIRE) == pc) {
            uint64_t v = __atomic_load_n(&s->rule, __ATOMIC_RELAXED);
            __atomic_thread_fence(__ATOMIC_ACQUIRE);
            if (__builtin_expect(__atomic_load_n(&s->key, __ATOMIC_RELAXED) == pc, 1))
                return v;
        }
    }
    return udw_rule_miss(pc);
}

/*
 * A walk's rule lookups wait for each other: the next return address is known only once
 * the rule before it has been read. On a cold cache each lookup of a set the caches lost
 * is a miss of its own, one after the other. The first lookups of a walk are mostly the
 * same from one sample of a thread to the next: the profiler's own frames always, and the
 * program's innermost frames whenever its allocations go through the same wrappers or
 * sites. Their sets are requested here at once, before the real allocator runs, so that
 * the misses overlap with it and with each other.
 */
void hs_unwind_dwarf_prefetch(void)
{
    for (int k = 0; k < UDW_RECENT; k++)
        __builtin_prefetch(udw_set(hs_udw_recent[k] - 1));
}

/* ---- the walk ------------------------------------------------------------------------- */

/* The initial thread's stack: from the loader (the stack pointer the kernel started the
 * process with), so that no /proc/self/maps is read for it. */
extern void *__libc_stack_end;

/* How far below its known part the main thread's stack is checked in one step. */
#define UDW_MAIN_STEP (8ul << 20)

/* Whether every page of [lo, hi) (page-aligned, at most UDW_MAIN_STEP) is mapped; *err:
 * mincore's errno when it failed (ENOMEM: a page is not). The program's errno is kept:
 * this runs inside its malloc. */
static bool udw_mapped(uintptr_t lo, uintptr_t hi, int *err)
{
    unsigned char vec[UDW_MAIN_STEP / 4096];
    int saved = errno;
    bool ok = lo < hi && hi - lo <= UDW_MAIN_STEP && mincore((void *)lo, hi - lo, vec) == 0;
    *err = ok ? 0 : errno;
    errno = saved;
    return ok;
}

/*
 * The main thread's bounds without pthread_getattr_np, which reads and sscanfs all of
 * /proc/self/maps for it (65 us here for a small process, milliseconds for one of
 * thousands of mappings): the top is the page holding __libc_stack_end, the bottom the
 * page of the frame at hand, once mincore says every page between is mapped. A stack
 * VMA is contiguous, so the walk's reads stay in mapped memory; a deeper frame later
 * extends the bottom the same way (udw_extend). The range must be within UDW_MAIN_STEP:
 * other mappings lie at least 128 MiB below the stack's top (the kernel's gap for it), so
 * a thread that is the process's first only by number (a fork's child, where the forking
 * thread had a stack of its own) or a frame on another stack fails the test and gets
 * pthread_getattr_np's bounds or the fallback.
 */
static bool udw_main_bounds(uintptr_t fp)
{
    uintptr_t top = ((uintptr_t)__libc_stack_end | 4095) + 1, lo = fp & ~(uintptr_t)4095;
    int err;
    if (syscall(SYS_gettid) != getpid() || fp >= top || !udw_mapped(lo, top, &err))
        return false;
    hs_udw_lo = lo;
    hs_udw_hi = top;
    hs_udw_main = true;
    return true;
}

/* Whether every page of [lo, hi) (page-aligned, at most UDW_MAIN_STEP) can be read: a byte
 * of each copied by process_vm_readv from this process, which fails at a page that is not
 * mapped or not readable (a guard page, which mincore counts as mapped). */
static int udw_probe_refused; /* process_vm_readv failed other than at a page: not again */

static bool udw_readable(uintptr_t lo, uintptr_t hi)
{
    enum { N = 64 };
    struct iovec from[N], to;
    unsigned char sink[N];
    int saved = errno;
    bool ok = lo < hi && hi - lo <= UDW_MAIN_STEP &&
              !__atomic_load_n(&udw_probe_refused, __ATOMIC_RELAXED);
    if (ok && hs_sandbox_entered()) { /* a sandbox refuses process_vm_readv and reports it */
        __atomic_store_n(&udw_probe_refused, 1, __ATOMIC_RELAXED);
        ok = false;
    }
    for (uintptr_t a = lo; ok && a < hi;) {
        int n = 0;
        for (; n < N && a < hi; n++, a += 4096)
            from[n] = (struct iovec){(void *)a, 1};
        to = (struct iovec){sink, (size_t)n};
        long got = syscall(SYS_process_vm_readv, getpid(), &to, 1ul, from, (unsigned long)n, 0ul);
        ok = got == n;
        if (got < 0 && errno != EFAULT) /* a seccomp filter's refusal, or no such call */
            __atomic_store_n(&udw_probe_refused, 1, __ATOMIC_RELAXED);
    }
    errno = saved;
    return ok;
}

/*
 * A thread's bounds without pthread_getattr_np, which takes the thread's lock and calls
 * calloc under it: a sample of that calloc (Rust's std calls it in every thread it
 * starts) would wait for the lock forever. glibc puts a thread's descriptor (pthread_self)
 * at the top of its stack, above every frame; the pages from the frame at hand up to it
 * must all be readable (udw_readable), which a frame on another stack (a signal stack, a
 * coroutine's) with a guard page or a hole between fails. A deeper frame later extends
 * the bottom the same way (udw_extend).
 */
static bool udw_thread_bounds(uintptr_t fp)
{
    uintptr_t top = (uintptr_t)pthread_self(), lo = fp & ~(uintptr_t)4095;
    stack_t ss;
    int saved = errno;
    bool alt = sigaltstack(NULL, &ss) == 0 && (ss.ss_flags & SS_ONSTACK);
    errno = saved;
    if (alt || fp >= top || !udw_readable(lo, (top + 4095) & ~(uintptr_t)4095))
        return false;
    hs_udw_lo = lo;
    hs_udw_hi = top;
    hs_udw_thread = true;
    return true;
}

static __attribute__((noinline, cold)) void udw_find_bounds(uintptr_t fp)
{
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;
    int saved = errno; /* inside the program's malloc: its errno is kept */

    hs_udw_state = -1;
    if (udw_main_bounds(fp) || udw_thread_bounds(fp)) {
        hs_udw_state = 1;
    } else if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr != NULL && size > 64) {
            hs_udw_lo = (uintptr_t)addr;
            hs_udw_hi = (uintptr_t)addr + size;
            hs_udw_state = 1;
        }
        pthread_attr_destroy(&attr);
    }
    errno = saved;
}

/* The main thread's frame fp lies below the part of its stack checked so far: checks the
 * pages in between (one system call per new depth, at most UDW_MAIN_STEP below it). A
 * range with a hole is not tried again from lower down, which would span the hole too. */
static __attribute__((noinline, cold)) bool udw_extend(uintptr_t fp)
{
    uintptr_t lo = fp & ~(uintptr_t)4095;
    int err;
    if (hs_udw_thread && lo >= hs_udw_floor && udw_readable(lo, hs_udw_lo)) {
        hs_udw_lo = lo;
        return true;
    }
    if (hs_udw_thread)
        hs_udw_floor = lo + 4096; /* not tried again from lower down */
    if (!hs_udw_main || lo < hs_udw_floor || hs_udw_lo - lo > UDW_MAIN_STEP)
        return false;
    if (!udw_mapped(lo, hs_udw_lo, &err)) {
        hs_udw_floor = lo + 4096;
        if (err != ENOMEM)
            hs_udw_main = false; /* mincore refused (a seccomp filter?): not asked again */
        return false;
    }
    hs_udw_lo = lo;
    return true;
}

static inline bool udw_load(const hs_udw_regs_t *r, uintptr_t addr, uintptr_t *v)
{
    if (addr < r->lo || addr > r->hi - sizeof(uintptr_t))
        return false;
    memcpy(v, (const void *)addr, sizeof(*v));
    return true;
}

/* Moves r from a frame to its caller; false if a read falls outside the stack or the
 * CFA does not rise (a corrupt or switched stack: the walk ends there). */
static inline bool udw_step(hs_udw_regs_t *r, hs_cfi_rule_t rule)
{
    uintptr_t cfa = (rule.flags & HS_CFI_CFA_RBP) ? r->rbp : r->sp;
    uintptr_t ra, rbp = r->rbp;

    cfa += (uintptr_t)(intptr_t)rule.cfa_off;
    if ((rule.flags & HS_CFI_CFA_DEREF) && !udw_load(r, cfa, &cfa))
        return false;
    if (cfa <= r->sp || !udw_load(r, cfa + (uintptr_t)(intptr_t)rule.ra_off, &ra))
        return false;
    if ((rule.flags & HS_CFI_RBP_AT_CFA) &&
        !udw_load(r, cfa + (uintptr_t)(intptr_t)rule.rbp_off, &rbp))
        return false;
    if ((rule.flags & HS_CFI_RBP_AT_RBP) &&
        !udw_load(r, r->rbp + (uintptr_t)(intptr_t)rule.rbp_off, &rbp))
        return false;
    r->sp = cfa;
    r->pc = ra;
    r->rbp = rbp;
    return true;
}

/* Rules the loop below leaves to udw_step: rare (DRAP, realigned stacks) or the end. */
#define UDW_RARE (HS_CFI_UNSUPPORTED | HS_CFI_END | HS_CFI_CFA_DEREF | HS_CFI_RBP_AT_RBP)

/* How far above the current frame the walk keeps the stack's lines requested. */
#define UDW_PREFETCH_AHEAD 1024

/* Requests the lines from *pf (or sp's, if above) to sp + UDW_PREFETCH_AHEAD, not past
 * end; returns the sp at which to come back: half the window later. */
static inline uintptr_t udw_prefetch(uintptr_t sp, uintptr_t *pf, uintptr_t end)
{
    uintptr_t line = sp & ~(uintptr_t)63, ahead = sp + UDW_PREFETCH_AHEAD;
    ahead = ahead < end ? ahead : end;
    for (line = *pf > line ? *pf : line; line < ahead; line += 64)
        __builtin_prefetch((const void *)line);
    *pf = line;
    return sp + UDW_PREFETCH_AHEAD / 2;
}

/*
 * The walk, its registers in locals. Cost per frame on a cache hit, 50 to 57
 * instructions: the slot's hash and seqlock read (15, skipped when a frame returns to
 * the same address as the one before, as recursion does), the CFA, one or two loads
 * from the stack, each checked against its bounds with one unsigned compare; the first 8
 * lookups also note their address for hs_unwind_dwarf_prefetch (3 more). The CFA must
 * rise; the first frame that breaks a rule ends the walk. Returns false if a frame
 * needs the fallback.
 *
 * Each frame's loads depend on the one before, so on a stack the program's other data
 * has pushed out of the caches every new line was a miss waited for alone. From the
 * first frame outside the profiler's own code (whose frames are hot and hold its big
 * buffers), the walk therefore keeps the UDW_PREFETCH_AHEAD bytes above each frame
 * requested, a prefetch per line and each line once, skipping what lies between a big
 * frame's bottom and its top, topped up each time half the window has been walked: the
 * misses overlap. A cold sampled pair 64 frames deep took 0.46 to 0.66 us less, a warm
 * one 10 ns more; a walk in churn runs 295 instructions more (bench/history/2026-11-25.md,
 * notes of 18:30).
 */
static bool udw_walk(hs_udw_regs_t *r, uintptr_t *pcs, size_t max, size_t *n)
{
    uintptr_t pc = r->pc, sp = r->sp, rbp = r->rbp, last = 0, cfa = sp;
    const uintptr_t lo = r->lo, span = r->hi - sizeof(uintptr_t) - r->lo; /* [lo, lo + span] */
    uint64_t w = 0;
    size_t i = *n;
    /* pf: the next line to request, 0 while the frames are still the profiler's own;
     * refill: the sp past which the requested lines are topped up again. */
    uintptr_t pf = 0, refill = 0;
    size_t nr = 0; /* hs_udw_recent filled */
    const uintptr_t own_lo = __atomic_load_n(&hs_unwind_skip_lo, __ATOMIC_RELAXED);
    const uintptr_t own_span = __atomic_load_n(&hs_unwind_skip_hi, __ATOMIC_RELAXED) - own_lo;

    if (i >= max || pc == 0)
        return true;
    for (;; sp = cfa) {
        if (sp >= refill && (pf != 0 || pc - own_lo >= own_span))
            refill = udw_prefetch(sp, &pf, lo + span);
        pcs[i++] = pc;
        if (i == max)
            break;
        if (pc != last) {
            if (nr < UDW_RECENT)
                hs_udw_recent[nr++] = pc;
            w = udw_rule(pc);
        }
        last = pc;
        unsigned f = UDW_FLAGS(w);
        if (__builtin_expect(f & UDW_RARE, 0)) {
            hs_cfi_rule_t rule;
            hs_udw_regs_t g = {.pc = pc, .sp = sp, .rbp = rbp, .lo = lo, .hi = r->hi};
            if (f & HS_CFI_END)
                break;
            if (f & HS_CFI_UNSUPPORTED) {
                *n = i;
                return false;
            }
            memcpy(&rule, &w, sizeof(rule));
            if (!udw_step(&g, rule) || g.pc == 0)
                break;
            pc = g.pc, cfa = g.sp, rbp = g.rbp;
            continue;
        }
        cfa = ((f & HS_CFI_CFA_RBP) ? rbp : sp) + UDW_CFA_OFF(w);
        uintptr_t ra_at = cfa + UDW_RA_OFF(w), rbp_at = cfa + UDW_RBP_OFF(w);
        if (cfa <= sp || ra_at - lo > span)
            break;
        if (f & HS_CFI_RBP_AT_CFA) {
            if (rbp_at - lo > span)
                break;
            memcpy(&rbp, (const void *)rbp_at, sizeof(rbp));
        }
        memcpy(&pc, (const void *)ra_at, sizeof(pc));
        if (pc == 0)
            break;
    }
    *n = i;
    return true;
}

/*
 * libgcc for the whole capture, minus its leading frames (its own, ours) so that the
 * result starts at our caller as the walk's does. Those frames take room at the end of a
 * full capture: hs_unwind_capture asks for 16 frames more than it keeps, and a small max
 * goes through a buffer of its own.
 */
static __attribute__((noinline, cold)) size_t udw_fallback(uintptr_t *pcs, size_t max,
                                                           uintptr_t first)
{
    uintptr_t small[HS_UDW_FALLBACK_SKIP + 16];
    uintptr_t *buf = max <= 16 ? small : pcs;
    size_t n = hs_unwind_libgcc(buf, max <= 16 ? max + HS_UDW_FALLBACK_SKIP : max), i;

    __atomic_fetch_add(&hs_udw_fallbacks, 1, __ATOMIC_RELAXED);
    for (i = 0; i < n && i < HS_UDW_FALLBACK_SKIP && buf[i] != first; i++)
        ;
    if (i == n || i == HS_UDW_FALLBACK_SKIP)
        i = 0; /* our caller not found: keep everything rather than guess */
    n = n - i < max ? n - i : max;
    memmove(pcs, buf + i, n * sizeof(*pcs));
    return n;
}

/*
 * The walk starts from our own frame record (a frame pointer is forced here): our
 * return address, our caller's %rbp, and our CFA, which is the caller's %rsp. The first
 * address stored is therefore a pc in our caller; hs_unwind_capture's skip range drops
 * the profiler's frames.
 */
HS_UDW_KEEP_FP size_t hs_unwind_dwarf(uintptr_t *pcs, size_t max)
{
    const uintptr_t *fp = __builtin_frame_address(0);
    hs_udw_regs_t r;
    size_t n = 0;

    if (max == 0)
        return 0;
    if (__builtin_expect(hs_udw_state == 0, 0))
        udw_find_bounds((uintptr_t)fp);
    r.pc = fp[1];
    if (hs_udw_state != 1 || (uintptr_t)fp >= hs_udw_hi - 16 ||
        ((uintptr_t)fp < hs_udw_lo && !udw_extend((uintptr_t)fp)))
        return udw_fallback(pcs, max, r.pc); /* a stack we do not know the bounds of */
    r.rbp = fp[0];
    r.sp = (uintptr_t)fp + 2 * sizeof(uintptr_t);
    r.lo = (uintptr_t)fp;
    r.hi = hs_udw_hi;
    if (!udw_walk(&r, pcs, max, &n))
        return udw_fallback(pcs, max, fp[1]);
    return n;
}

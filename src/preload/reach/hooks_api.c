/*
 * An allocator's own API, hooked in place (hooks.h): the functions a program calls beside
 * the malloc family -- jemalloc's mallocx, rallocx, xallocx, sdallocx and dallocx
 * (unprefixed, or je_ and _rjem_ as tikv-jemallocator builds it), tcmalloc's tc_*,
 * mimalloc's mi_* as Rust's mimalloc crate calls them (mi_malloc_aligned,
 * mi_zalloc_aligned, mi_realloc_aligned, mi_free) -- defined by the executable or by the
 * shared library the program imports them from. This file owns their hooks, their
 * originals and what they count; reach.c finds them and asks here. Nothing here runs on an
 * allocation path but the hooks; they are installed at start, or with the other threads
 * stopped (objects loaded later, attach).
 *
 * Each (prefix, object) is an instance with hooks of its own, since a hook must know its
 * original. The functions whose first argument is the size or the block (malloc, mallocx,
 * mi_malloc_aligned, mi_zalloc(_aligned); free, sdallocx, dallocx) take interposition's
 * fast paths in assembly (HS_FAST_ALLOC and HS_FAST_FREE, hooks.h): no thunk, no guard.
 * They jump through a slot that holds, until a first call returns memory, a judge: that
 * call runs the original inside the guard and looks whether it came back through a hooked
 * allocation (or release): if so (je_mallocx over je_malloc) the slot gets a guarded call,
 * else the bare trampoline. The others (calloc, realloc, rallocx, xallocx, the aligned
 * forms) are C hooks behind thunks that keep every register and call their original
 * inside the guard, as the family's do.
 *
 * What is counted: flags (MALLOCX_ALIGN, _ZERO, _ARENA, _TCACHE) pass through untouched
 * and the size asked for is charged; rallocx and mi_realloc_aligned count as realloc does
 * (an allocation and a release). xallocx, a resize in place, allocates nothing: when its
 * block is sampled and the resize held (the usable size returned is at least the size
 * asked for), the sample's size becomes the size asked for (as everywhere in heapsift: not
 * the usable size returned, nor size + extra), so its bytes in use follow; alloc_space
 * keeps what was allocated.
 *
 * Where the family is interposed in front of the same object (a shared libmimalloc, whose
 * malloc is mi_malloc; a shared libjemalloc), hs_real's slots that point at a patched
 * function get its trampoline, and its other slots into the object are called inside the
 * guard (libmimalloc's memalign calls mi_malloc_aligned through its own PLT): each block
 * is counted once, whichever way it came.
 */
#define _GNU_SOURCE
#include "hooks.h"
#include "elfaddr.h"
#include "runtime/core.h"
#include "record/livetab.h"
#include "patch.h"
#include "record/recorder.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The functions, by index: the release ones first, then those with a fast path in
 * assembly (API_FAST_N in all), then the C hooks. Numbers, since the assembly names them. */
#define API_FREE 0
#define API_DALLOCX 1
#define API_SDALLOCX 2
#define API_MALLOC 3
#define API_MALLOCX 4
#define API_MALLOC_ALIGNED 5
#define API_ZALLOC 6
#define API_ZALLOC_ALIGNED 7
#define API_FAST_N 8
#define API_CALLOC 8
#define API_CALLOC_ALIGNED 9
#define API_REALLOC 10
#define API_RALLOCX 11
#define API_REALLOC_ALIGNED 12
#define API_XALLOCX 13
#define API_POSIX_MEMALIGN 14
#define API_ALIGNED_ALLOC 15
#define API_MEMALIGN 16
#define API_N 17
_Static_assert(API_SDALLOCX + 1 == HS_API_RELEASE_N, "the release functions come first");

static const char *const api_names[API_N] = {
    "free",           "dallocx",  "sdallocx",        "malloc",  "mallocx",
    "malloc_aligned", "zalloc",   "zalloc_aligned",  "calloc",  "calloc_aligned",
    "realloc",        "rallocx",  "realloc_aligned", "xallocx", "posix_memalign",
    "aligned_alloc",  "memalign",
};
/* Unprefixed, only jemalloc's own names are an API (malloc and free are the family's). */
static const char *const api_jemalloc[] = {"mallocx", "rallocx", "xallocx", "sdallocx", "dallocx"};

typedef struct {
    char prefix[8];
    const void *base;  /* the object whose API it is */
    bool release;      /* a release path is hooked */
    void *orig[API_N]; /* the trampolines */
    void *addr[API_N]; /* the entry points hooked */
} api_inst_t;

static api_inst_t api_inst[HS_API_INSTANCES];
static int api_ninst;

/* What each fast path jumps through: its judge, then the trampoline or a guarded call. An
 * array per instance, so that the assembly addresses slot k as hs_api_slot_I+8*k. */
HS_HIDDEN void *hs_api_slot_0[API_FAST_N];
HS_HIDDEN void *hs_api_slot_1[API_FAST_N];
HS_HIDDEN void *hs_api_slot_2[API_FAST_N];
static void **const api_slot[HS_API_INSTANCES] = {hs_api_slot_0, hs_api_slot_1, hs_api_slot_2};

typedef uintptr_t (*api_fn_t)(uintptr_t, uintptr_t, uintptr_t, uintptr_t);

/* Calls fn with up to four integer arguments inside the guard. Every API function takes at
 * most four integer or pointer arguments and returns one or nothing: called as taking four
 * and returning one, under the x86-64 ABI the extra registers are ignored, an int argument
 * is its register's low half, and a void function's rax is not read. */
static uintptr_t api_guarded(void *fn, uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d)
{
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    uintptr_t r = ((api_fn_t)fn)(a, b, c, d);
    hs_guard_exit(t);
    return r;
}

/* ---- the fast paths' other halves ------------------------------------------------- */

/* Fast allocation k whose countdown ran out (charged a bytes already): the sampled path. */
static inline uintptr_t api_alloc_slow(api_inst_t *in, int k, uintptr_t a, uintptr_t b, uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    bool sample = hs_sample_begin(t, a);
    uintptr_t p = api_guarded(in->orig[k], a, b, c, 0);
    if (sample)
        hs_sample_end(t, (void *)p, a);
    return p;
}

/* Release k of a block whose filter bit is set: a sample, a false positive, or NULL. */
static inline uintptr_t api_free_slow(api_inst_t *in, int k, uintptr_t a, uintptr_t b, uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    if (!a)
        t->frees--;     /* counted by the fast path: NULL's bit is pinned set */
    else if (!t->guard) /* else a block of the profiler's own (slowpath.c says why) */
        hs_forget((void *)a);
    return api_guarded(in->orig[k], a, b, c, 0);
}

/* The first call of fast function k that returns memory (or releases): see the file's
 * comment. slot is what the fast path jumps through, guarded the call in the guard. */
static inline uintptr_t api_judge(api_inst_t *in, void **slot, void *guarded, int k, uintptr_t a,
                                  uintptr_t b, uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    bool rel = k < HS_API_RELEASE_N;
    hs_guard_enter(t);
    uint64_t before = rel ? t->frees : t->allocs;
    uintptr_t r = ((api_fn_t)in->orig[k])(a, b, c, 0);
    bool back = (rel ? t->frees : t->allocs) != before;
    hs_guard_exit(t);
    if (rel || r || back)
        __atomic_store_n(slot, back ? guarded : in->orig[k], __ATOMIC_RELEASE);
    return r;
}

/* ---- the C hooks -------------------------------------------------------------------- */

static HS_COLD uintptr_t api_alloc_c_slow(api_inst_t *in, int k, size_t n, uintptr_t a, uintptr_t b,
                                          uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    bool sample = hs_sample_begin(t, n);
    uintptr_t p = api_guarded(in->orig[k], a, b, c, 0);
    if (sample)
        hs_sample_end(t, (void *)p, n);
    return p;
}

/* An allocation of n bytes through original k (arguments a, b, c). */
static inline uintptr_t api_alloc_c(api_inst_t *in, int k, size_t n, uintptr_t a, uintptr_t b,
                                    uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(hs_hooks_charge(t, n)))
        return api_guarded(in->orig[k], a, b, c, 0);
    return api_alloc_c_slow(in, k, n, a, b, c);
}

static int api_posix_memalign(api_inst_t *in, void **out, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    bool sample = !hs_hooks_charge(t, n) && hs_sample_begin(t, n);
    int rc = (int)api_guarded(in->orig[API_POSIX_MEMALIGN], (uintptr_t)out, align, n, 0);
    if (sample)
        hs_sample_end(t, rc == 0 ? *out : NULL, n);
    return rc;
}

/* realloc, rallocx, mi_realloc_aligned: counted as realloc is (an allocation, and a
 * release of p); c is the flags or the alignment. */
static HS_COLD uintptr_t api_realloc_slow(api_inst_t *in, int k, void *p, size_t n, uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    bool sample = t->countdown <= 0 && hs_sample_begin(t, n);
    hs_live_t e;
    bool had = p && hs_livetab_maybe(p) && hs_realloc_forget(p, &e);
    uintptr_t q = api_guarded(in->orig[k], (uintptr_t)p, n, c, 0);
    if (had)
        hs_realloc_done(&e, (void *)q, n);
    if (sample)
        hs_sample_end(t, (void *)q, n);
    return q;
}

static inline uintptr_t api_realloc(api_inst_t *in, int k, void *p, size_t n, uintptr_t c)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    t->frees += p != NULL;
    if (HS_UNLIKELY(!hs_hooks_charge(t, n) || (p && hs_livetab_maybe(p))))
        return api_realloc_slow(in, k, p, n, c);
    return api_guarded(in->orig[k], (uintptr_t)p, n, c, 0);
}

/* xallocx(p, size, extra, flags) of a block that may be sampled: its sample taken out, and
 * put back (hs_realloc_done puts back an entry whose block is still there), at what was
 * asked and granted, min(r, size + extra), when the resize reached size. */
static HS_COLD size_t api_xallocx_slow(api_inst_t *in, void *p, size_t size, size_t extra,
                                       uintptr_t flags)
{
    hs_live_t e;
    bool had = hs_realloc_forget(p, &e);
    size_t r = api_guarded(in->orig[API_XALLOCX], (uintptr_t)p, size, extra, flags);
    if (had) {
        size_t most = extra > SIZE_MAX - size ? SIZE_MAX : size + extra;
        if (r >= size)
            e.size = r < most ? r : most;
        hs_realloc_done(&e, NULL, 1);
    }
    return r;
}

static inline size_t api_xallocx(api_inst_t *in, void *p, size_t size, size_t extra,
                                 uintptr_t flags)
{
    if (HS_UNLIKELY(hs_livetab_maybe(p)))
        return api_xallocx_slow(in, p, size, extra, flags);
    return api_guarded(in->orig[API_XALLOCX], (uintptr_t)p, size, extra, flags);
}

/* C hook k, its arguments as they came (inlined with k constant: one case each). */
static inline uintptr_t api_c(api_inst_t *in, int k, uintptr_t a, uintptr_t b, uintptr_t c,
                              uintptr_t d)
{
    size_t total;
    switch (k) {
    case API_CALLOC:
    case API_CALLOC_ALIGNED:
        if (__builtin_mul_overflow(a, b, &total))
            return api_guarded(in->orig[k], a, b, c, 0); /* the original reports it */
        return api_alloc_c(in, k, total, a, b, c);
    case API_REALLOC:
    case API_RALLOCX:
    case API_REALLOC_ALIGNED:
        return api_realloc(in, k, (void *)a, b, c);
    case API_XALLOCX:
        return api_xallocx(in, (void *)a, b, c, d);
    case API_POSIX_MEMALIGN:
        return (uintptr_t)(unsigned)api_posix_memalign(in, (void **)a, b, c);
    default: /* aligned_alloc, memalign: (alignment, size) */
        return api_alloc_c(in, k, b, a, b, 0);
    }
}

/* ---- each instance's entry points ------------------------------------------------------
 * API_FAST(i, k, form, THUNK, FAST): fast function k of instance i, its fast path FAST
 * (HS_FAST_FREE or HS_FAST_ALLOC) and the thunks (THUNK: HS_KEEPALL_THUNK for the releases,
 * which return nothing) of its slow path (api_<form>_slow), judge and guarded call. */
#define API_FAST(i, k, form, THUNK, FAST)                                                          \
    HS_HIDDEN uintptr_t hs_api_slow_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c);              \
    HS_HIDDEN uintptr_t hs_api_slow_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c)               \
    {                                                                                              \
        return api_##form##_slow(&api_inst[i], k, a, b, c);                                        \
    }                                                                                              \
    HS_HIDDEN uintptr_t hs_api_guarded_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c);           \
    HS_HIDDEN uintptr_t hs_api_guarded_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c)            \
    {                                                                                              \
        return api_guarded(api_inst[i].orig[k], a, b, c, 0);                                       \
    }                                                                                              \
    THUNK(hs_api_thunk_slow_##i##_##k, hs_api_slow_##i##_##k)                                      \
    THUNK(hs_api_thunk_guarded_##i##_##k, hs_api_guarded_##i##_##k)                                \
    HS_HIDDEN uintptr_t hs_api_judge_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c);             \
    HS_HIDDEN uintptr_t hs_api_judge_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c)              \
    {                                                                                              \
        return api_judge(&api_inst[i], &hs_api_slot_##i[k],                                        \
                         (void *)hs_api_thunk_guarded_##i##_##k, k, a, b, c);                      \
    }                                                                                              \
    THUNK(hs_api_thunk_judge_##i##_##k, hs_api_judge_##i##_##k)                                    \
    FAST(hs_api_fast_##i##_##k, "hs_api_slot_" #i "+8*" #k, hs_api_thunk_slow_##i##_##k)

/* API_C(i, k): C hook k of instance i, behind a thunk that keeps the registers. */
#define API_C(i, k)                                                                                \
    HS_HIDDEN uintptr_t hs_api_c_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d);    \
    HS_HIDDEN uintptr_t hs_api_c_##i##_##k(uintptr_t a, uintptr_t b, uintptr_t c, uintptr_t d)     \
    {                                                                                              \
        return api_c(&api_inst[i], k, a, b, c, d);                                                 \
    }                                                                                              \
    HS_KEEPREGS_THUNK(hs_api_thunk_c_##i##_##k, hs_api_c_##i##_##k)

#define API_INSTANCE(i)                                                                            \
    API_FAST(i, 0, free, HS_KEEPALL_THUNK, HS_FAST_FREE)                                           \
    API_FAST(i, 1, free, HS_KEEPALL_THUNK, HS_FAST_FREE)                                           \
    API_FAST(i, 2, free, HS_KEEPALL_THUNK, HS_FAST_FREE)                                           \
    API_FAST(i, 3, alloc, HS_KEEPREGS_THUNK, HS_FAST_ALLOC)                                        \
    API_FAST(i, 4, alloc, HS_KEEPREGS_THUNK, HS_FAST_ALLOC)                                        \
    API_FAST(i, 5, alloc, HS_KEEPREGS_THUNK, HS_FAST_ALLOC)                                        \
    API_FAST(i, 6, alloc, HS_KEEPREGS_THUNK, HS_FAST_ALLOC)                                        \
    API_FAST(i, 7, alloc, HS_KEEPREGS_THUNK, HS_FAST_ALLOC)                                        \
    API_C(i, 8)                                                                                    \
    API_C(i, 9)                                                                                    \
    API_C(i, 10)                                                                                   \
    API_C(i, 11)                                                                                   \
    API_C(i, 12)                                                                                   \
    API_C(i, 13)                                                                                   \
    API_C(i, 14)                                                                                   \
    API_C(i, 15)                                                                                   \
    API_C(i, 16)
_Static_assert(API_N == 17 && API_FAST_N == 8, "API_INSTANCE's rows");

#if defined(__x86_64__)
API_INSTANCE(0)
API_INSTANCE(1)
API_INSTANCE(2)
_Static_assert(HS_API_INSTANCES == 3, "one API_INSTANCE line per instance");

#define API_ENTRIES(i)                                                                             \
    {                                                                                              \
        hs_api_fast_##i##_0, hs_api_fast_##i##_1, hs_api_fast_##i##_2, hs_api_fast_##i##_3,        \
            hs_api_fast_##i##_4, hs_api_fast_##i##_5, hs_api_fast_##i##_6, hs_api_fast_##i##_7,    \
            hs_api_thunk_c_##i##_8, hs_api_thunk_c_##i##_9, hs_api_thunk_c_##i##_10,               \
            hs_api_thunk_c_##i##_11, hs_api_thunk_c_##i##_12, hs_api_thunk_c_##i##_13,             \
            hs_api_thunk_c_##i##_14, hs_api_thunk_c_##i##_15, hs_api_thunk_c_##i##_16,             \
    }
#define API_JUDGES(i)                                                                              \
    {                                                                                              \
        hs_api_thunk_judge_##i##_0, hs_api_thunk_judge_##i##_1, hs_api_thunk_judge_##i##_2,        \
            hs_api_thunk_judge_##i##_3, hs_api_thunk_judge_##i##_4, hs_api_thunk_judge_##i##_5,    \
            hs_api_thunk_judge_##i##_6, hs_api_thunk_judge_##i##_7,                                \
    }
static void (*const api_entry[HS_API_INSTANCES][API_N])(void) = {API_ENTRIES(0), API_ENTRIES(1),
                                                                 API_ENTRIES(2)};
static void (*const api_judges[HS_API_INSTANCES][API_FAST_N])(void) = {API_JUDGES(0), API_JUDGES(1),
                                                                       API_JUDGES(2)};
#endif

/* ---- hs_real's slots into an object whose API is hooked ------------------------------- */

#define API_REAL_SLOTS (sizeof(hs_real_t) / sizeof(void *))
static void *api_real_saved[API_REAL_SLOTS]; /* what the guarded slots call */

#define API_REAL_GUARDED(s)                                                                        \
    static uintptr_t api_real_guarded_##s(uintptr_t a, uintptr_t b, uintptr_t c)                   \
    {                                                                                              \
        return api_guarded(api_real_saved[s], a, b, c, 0);                                         \
    }
/* calloc, realloc, posix_memalign, aligned_alloc, memalign, valloc, pvalloc, the sized
 * deletes: hs_real's slots 2 to 8, 10 and 11 (pinned below). Not malloc and free, whose
 * originals never come back through an API function (mimalloc's are mi_malloc and
 * mi_free themselves: their slots get the trampolines), nor malloc_usable_size, nor
 * operator new, which bootstrap.c judges. */
API_REAL_GUARDED(2)
API_REAL_GUARDED(3)
API_REAL_GUARDED(4)
API_REAL_GUARDED(5)
API_REAL_GUARDED(6)
API_REAL_GUARDED(7)
API_REAL_GUARDED(8)
API_REAL_GUARDED(10)
API_REAL_GUARDED(11)
_Static_assert(offsetof(hs_real_t, calloc) == 2 * sizeof(void *) &&
                   offsetof(hs_real_t, pvalloc) == 8 * sizeof(void *) &&
                   offsetof(hs_real_t, sized_delete) == 10 * sizeof(void *) &&
                   offsetof(hs_real_t, sized_delete_array) == 11 * sizeof(void *),
               "api_real_wrappers' slots");
static uintptr_t (*const api_real_wrappers[API_REAL_SLOTS])(uintptr_t, uintptr_t, uintptr_t) = {
    [2] = api_real_guarded_2, [3] = api_real_guarded_3,   [4] = api_real_guarded_4,
    [5] = api_real_guarded_5, [6] = api_real_guarded_6,   [7] = api_real_guarded_7,
    [8] = api_real_guarded_8, [10] = api_real_guarded_10, [11] = api_real_guarded_11,
};

static void **api_real_slot(size_t s)
{
    return (void **)(void *)&hs_real + s;
}

/* Slot s of hs_real now calls target: bare for malloc and free, else inside the guard. */
static void api_real_set(size_t s, void *target)
{
    if (s > 1 && !api_real_wrappers[s])
        return;
    if (s > 1) {
        __atomic_store_n(&api_real_saved[s], target, __ATOMIC_RELEASE);
        target = (void *)api_real_wrappers[s];
    }
    __atomic_store_n(api_real_slot(s), target, __ATOMIC_RELEASE);
}

/* Before the jump over function k of inst is written: its fast path's slot, and hs_real's
 * slots that held its entry point (an alias of the family interposed in front of it). */
static void api_published(void *arg)
{
#if defined(__x86_64__)
    int inst = (int)((uintptr_t)arg / API_N), k = (int)((uintptr_t)arg % API_N);
    api_inst_t *in = &api_inst[inst];
    if (k < API_FAST_N)
        __atomic_store_n(&api_slot[inst][k], (void *)api_judges[inst][k], __ATOMIC_RELEASE);
    for (size_t s = 0; s < API_REAL_SLOTS; s++)
        if (*api_real_slot(s) == in->addr[k])
            api_real_set(s, in->orig[k]);
#else
    (void)arg;
#endif
}

/* Whether v lies in the object of instance inst: within [lo, hi), or, with hi 0, as the
 * loader says. */
static bool api_in_object(int inst, const void *v, uintptr_t lo, uintptr_t hi)
{
    if (hi)
        return (uintptr_t)v >= lo && (uintptr_t)v < hi;
    const void *at = hs_elf_base_of(v);
    return at && at == api_inst[inst].base;
}

void hs_hooks_api_done(int inst, uintptr_t lo, uintptr_t hi)
{
    if (inst < 0 || inst >= api_ninst)
        return;
    for (size_t s = 2; s < API_REAL_SLOTS; s++) {
        void *v = *api_real_slot(s);
        if (api_real_wrappers[s] && v != (void *)api_real_wrappers[s] &&
            api_in_object(inst, v, lo, hi))
            api_real_set(s, v);
    }
}

/* ---- the instances, and hooking them ------------------------------------------------ */

int hs_hooks_api_count(void)
{
    return API_N;
}

const char *hs_hooks_api_name(int k)
{
    return k >= 0 && k < API_N ? api_names[k] : NULL;
}

int hs_hooks_api_index(const char *prefix, const char *rest)
{
    bool ok = prefix[0] != '\0';
    for (size_t j = 0; !ok && j < sizeof(api_jemalloc) / sizeof(api_jemalloc[0]); j++)
        ok = strcmp(rest, api_jemalloc[j]) == 0;
    for (int k = 0; ok && k < API_N; k++)
        if (strcmp(rest, api_names[k]) == 0)
            return k;
    return -1;
}

int hs_hooks_api_instance(const char *prefix, const void *base, bool release, char *why,
                          size_t whylen)
{
    if (!hs_hooks_enabled())
        return -ENOSYS;
    for (int i = 0; i < api_ninst; i++) {
        if (strcmp(api_inst[i].prefix, prefix) != 0)
            continue;
        if (api_inst[i].base == base)
            return i;
        snprintf(why, whylen,
                 "the %s%s API of another object is hooked already (one object's per prefix)",
                 prefix[0] ? prefix : "mallocx", prefix[0] ? "*" : "");
        return -EBUSY;
    }
    if (api_ninst == HS_API_INSTANCES) {
        snprintf(why, whylen, "%d allocator APIs are hooked already", HS_API_INSTANCES);
        return -ENOSPC;
    }
    api_inst_t *in = &api_inst[api_ninst];
    snprintf(in->prefix, sizeof(in->prefix), "%s", prefix);
    in->base = base;
    in->release = release;
    return api_ninst++;
}

/* Whether addr is hooked already: a family member hooked in place (mimalloc's mi_free is
 * its free), or another function of in (an allocator's memalign that is its
 * aligned_alloc). -EXDEV for a family member hooked through import slots only. */
static int api_alias(const api_inst_t *in, const void *addr, char *why, size_t whylen)
{
    if (hs_hooks_hooked(addr)) {
        if (hs_hooks_hooked_in_place(addr))
            return HS_HOOKS_ALIAS;
        snprintf(why, whylen, "an alias of a malloc family member hooked through import slots");
        return -EXDEV;
    }
    for (int j = 0; j < API_N; j++)
        if (in->addr[j] == addr)
            return HS_HOOKS_ALIAS;
    return 0;
}

int hs_hooks_api(int inst, int k, void *addr, size_t size, char *why, size_t whylen)
{
#if defined(__x86_64__)
    if (inst < 0 || inst >= api_ninst || k < 0 || k >= API_N || !hs_hooks_enabled())
        return -ENOSYS;
    api_inst_t *in = &api_inst[inst];
    bool rel = k < HS_API_RELEASE_N;
    if (rel && hs_hooks_noop(addr))
        return in->release = true, HS_HOOKS_NOOP;
    int rc = api_alias(in, addr, why, whylen);
    if (rc != 0) {
        in->release |= rel && rc == HS_HOOKS_ALIAS;
        return rc;
    }
    if (!rel && !in->release) {
        snprintf(why, whylen, "neither %sfree, %ssdallocx nor %sdallocx is hooked", in->prefix,
                 in->prefix, in->prefix);
        return -EPERM;
    }
    in->addr[k] = addr; /* for api_published */
    rc = hs_patch_install_cb(addr, size, 0, (void *)api_entry[inst][k], &in->orig[k], api_published,
                             (void *)(uintptr_t)(inst * API_N + k), why, whylen);
    if (rc != 0)
        in->addr[k] = NULL;
    in->release |= rel && rc == 0;
    return rc;
#else
    (void)inst, (void)k, (void)addr, (void)size, (void)why, (void)whylen;
    return -ENOSYS;
#endif
}

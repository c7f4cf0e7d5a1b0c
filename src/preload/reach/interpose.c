/*
 * The interposed allocation entry points: the only definitions of malloc, free and
 * friends (C++ operator new/delete included) in libheapsift.so, and nothing but their
 * fast paths. Everything rare (sampling, sampled frees, bootstrap blocks, errors) is in
 * slowpath.c behind non-inlined calls. The real allocator is whatever comes next in
 * symbol resolution (hs_real, bootstrap.c).
 *
 * Cost budget, kept true by bench/ (callgrind, bench/pairs.c): a non-sampled malloc is
 * two initial-exec TLS read-modify-writes (the count, and the countdown whose flags
 * decide), one predicted branch and a tail call; a non-sampled free is a hash, one bit
 * tested in the live filter (8 KiB, more on a big live set: livefilter.h), one predicted
 * branch and a tail call, with no NULL test (NULL's filter bit is pinned set, so
 * free(NULL) takes the slow path): 17 instructions per malloc+free pair more than the
 * real allocator alone. No lock, atomic read-modify-write, syscall or allocation on either.
 */
#define _GNU_SOURCE
#include "runtime/core.h"
#include "record/bootstrap.h"
#include "hooks.h"
#include "record/livetab.h"
#include "record/slowpath.h"

#include <errno.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>

/* The Itanium C++ ABI names of operator new and delete, declared for C. */
void *_Znwm(size_t n);
void *_Znam(size_t n);
void *_ZnwmRKSt9nothrow_t(size_t n, const void *tag);
void *_ZnamRKSt9nothrow_t(size_t n, const void *tag);
void *_ZnwmSt11align_val_t(size_t n, size_t align);
void *_ZnamSt11align_val_t(size_t n, size_t align);
void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag);
void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag);
void _ZdlPv(void *p);
void _ZdaPv(void *p);
void _ZdlPvm(void *p, size_t n);
void _ZdaPvm(void *p, size_t n);
void _ZdlPvRKSt9nothrow_t(void *p, const void *tag);
void _ZdaPvRKSt9nothrow_t(void *p, const void *tag);
void _ZdlPvSt11align_val_t(void *p, size_t a);
void _ZdaPvSt11align_val_t(void *p, size_t a);
void _ZdlPvmSt11align_val_t(void *p, size_t n, size_t a);
void _ZdaPvmSt11align_val_t(void *p, size_t n, size_t a);
void _ZdlPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *tag);
void _ZdaPvSt11align_val_tRKSt9nothrow_t(void *p, size_t a, const void *tag);

/*
 * Charges n bytes to the countdown; true while it stays above 0 (no sample due). On
 * x86-64 one subq on the TLS word whose flags are the answer: GCC otherwise loads,
 * subtracts, stores and tests (3 instructions more on every allocation). The flags give
 * the exact signed comparison, so the one difference from the C form is a request of
 * 2^63 bytes or more (which fails anyway): it takes the fast path and the next
 * allocation is sampled instead. The countdown's value, and so the exact byte count
 * (hs_countdown_reset), is the same either way.
 */
static inline bool interpose_charge(hs_tls_t *t, size_t n)
{
#if defined(__x86_64__) && defined(__GCC_ASM_FLAG_OUTPUTS__)
    bool expired;
    __asm__("subq %2, %0" : "+m"(t->countdown), "=@ccle"(expired) : "r"((int64_t)n));
    return !expired;
#else
    return (t->countdown -= (int64_t)n) > 0;
#endif
}

/* The bodies of malloc and free, also inlined into operator new (nothrow) and every
 * operator delete: a call to malloc or free from inside this library would go through
 * the PLT and back (2 jumps more). */
static inline __attribute__((always_inline)) void *interpose_malloc(size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.malloc(n);
    return hs_slow_alloc(HS_OP_MALLOC, 0, n);
}

static inline __attribute__((always_inline)) void interpose_free(void *p)
{
    hs_tls.frees++; /* taken back by the slow path for NULL, whose filter bit is set */
    if (HS_UNLIKELY(hs_livetab_maybe(p)))
        return hs_slow_free(p);
    hs_real.free(p);
}

/* 5 instructions: TLS address, counter, countdown, branch, jump. */
HS_EXPORT void *malloc(size_t n)
{
    return interpose_malloc(n);
}

/* 12 instructions: TLS address, counter, filter address, hash and its scaling to the
 * filter's size (2), bit and word index (3), word load, bit test, branch, jump. No NULL
 * test: free(NULL) finds its pinned filter bit set and returns from the slow path (14
 * instructions more than before, where a pointer's free saves 2: python3 building a
 * dict of lists frees NULL 5% of the time, perl, sqlite3 and gcc under 1%). */
HS_EXPORT void free(void *p)
{
    interpose_free(p);
}

HS_EXPORT void *calloc(size_t n, size_t m)
{
    hs_tls_t *t = &hs_tls;
    size_t total;
    t->allocs++;
    if (HS_UNLIKELY(__builtin_mul_overflow(n, m, &total)))
        return hs_real.calloc(n, m); /* the real calloc reports the overflow */
    if (HS_LIKELY(interpose_charge(t, total)))
        return hs_real.calloc(n, m);
    return hs_slow_alloc(HS_OP_CALLOC, 0, total);
}

/* The free half of realloc is counted last: next to allocs++, GCC adds the two counters
 * in an SSE register (8 instructions more). */
static __attribute__((noinline, cold)) void *interpose_realloc_slow(void *p, size_t n)
{
    hs_tls.frees += p != NULL;
    return hs_slow_realloc(p, n);
}

HS_EXPORT void *realloc(void *p, size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_UNLIKELY(!interpose_charge(t, n)))
        return interpose_realloc_slow(p, n);
    if (HS_UNLIKELY(p && hs_livetab_maybe(p))) /* NULL's bit is pinned set */
        return interpose_realloc_slow(p, n);
    t->frees += p != NULL;
    return hs_real.realloc(p, n);
}

HS_EXPORT void *reallocarray(void *p, size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, total);
}

HS_EXPORT int posix_memalign(void **out, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.posix_memalign(out, align, n);
    return hs_slow_posix_memalign(out, align, n);
}

HS_EXPORT void *aligned_alloc(size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.aligned_alloc(align, n);
    return hs_slow_alloc(HS_OP_ALIGNED_ALLOC, align, n);
}

HS_EXPORT void *memalign(size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.memalign(align, n);
    return hs_slow_alloc(HS_OP_MEMALIGN, align, n);
}

HS_EXPORT void *valloc(size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.valloc(n);
    return hs_slow_alloc(HS_OP_VALLOC, 0, n);
}

HS_EXPORT void *pvalloc(size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.pvalloc(n);
    return hs_slow_alloc(HS_OP_PVALLOC, 0, n);
}

HS_EXPORT size_t malloc_usable_size(void *p)
{
    if (HS_UNLIKELY(p && hs_livetab_maybe(p) && hs_boot_owns(p)))
        return hs_boot_size(p);
    return hs_real.malloc_usable_size(p);
}

/* --- C++ operator new/delete: defined here so that an allocator that brings its own
 * (tcmalloc, jemalloc's C++ build) is still seen; they share malloc's fast path, and
 * operator new and new[] then go on to that allocator's own (hs_real.new_plain). --- */

HS_EXPORT void *_Znwm(size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.new_plain(n);
    return hs_slow_new(HS_NEW_PLAIN, 0, n);
}

HS_EXPORT void *_Znam(size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(interpose_charge(t, n)))
        return hs_real.new_array(n);
    return hs_slow_new(HS_NEW_ARRAY, 0, n);
}

HS_EXPORT void *_ZnwmRKSt9nothrow_t(size_t n, const void *tag)
{
    (void)tag;
    return interpose_malloc(n);
}

HS_EXPORT void *_ZnamRKSt9nothrow_t(size_t n, const void *tag)
{
    (void)tag;
    return interpose_malloc(n);
}

HS_EXPORT void *_ZnwmSt11align_val_t(size_t n, size_t align)
{
    return hs_slow_new(HS_NEW_ALIGNED, align, n);
}

HS_EXPORT void *_ZnamSt11align_val_t(size_t n, size_t align)
{
    return hs_slow_new(HS_NEW_ALIGNED_ARRAY, align, n);
}

HS_EXPORT void *_ZnwmSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag)
{
    (void)tag;
    return memalign(align, n);
}

HS_EXPORT void *_ZnamSt11align_val_tRKSt9nothrow_t(size_t n, size_t align, const void *tag)
{
    (void)tag;
    return memalign(align, n);
}

/* The sized deletes that std::allocator calls go to the allocator's own when it has them
 * (hs_real.sized_delete): jemalloc's frees a block of known size without looking up its
 * size class. A sampled block (or a bootstrap one) takes free's slow path as with every
 * delete. */
static inline __attribute__((always_inline)) void interpose_sized_delete(void *p, size_t n,
                                                                         bool array)
{
    hs_tls.frees++; /* as in interpose_free, NULL comes back from the slow path */
    if (HS_UNLIKELY(hs_livetab_maybe(p)))
        return hs_slow_free(p);
    if (array)
        hs_real.sized_delete_array(p, n);
    else
        hs_real.sized_delete(p, n);
}

HS_EXPORT void _ZdlPvm(void *p, size_t n)
{
    interpose_sized_delete(p, n, false);
}

HS_EXPORT void _ZdaPvm(void *p, size_t n)
{
    interpose_sized_delete(p, n, true);
}

/* Every other delete is free: the real allocator's free accepts any of these blocks. */
#define HS_DELETE(sym, ...)                                                                        \
    HS_EXPORT void sym(void *p, ##__VA_ARGS__)                                                     \
    {                                                                                              \
        interpose_free(p);                                                                         \
    }

HS_DELETE(_ZdlPv)
HS_DELETE(_ZdaPv)
HS_DELETE(_ZdlPvRKSt9nothrow_t, const void *tag __attribute__((unused)))
HS_DELETE(_ZdaPvRKSt9nothrow_t, const void *tag __attribute__((unused)))
HS_DELETE(_ZdlPvSt11align_val_t, size_t a __attribute__((unused)))
HS_DELETE(_ZdaPvSt11align_val_t, size_t a __attribute__((unused)))
HS_DELETE(_ZdlPvmSt11align_val_t, size_t n __attribute__((unused)),
          size_t a __attribute__((unused)))
HS_DELETE(_ZdaPvmSt11align_val_t, size_t n __attribute__((unused)),
          size_t a __attribute__((unused)))
HS_DELETE(_ZdlPvSt11align_val_tRKSt9nothrow_t, size_t a __attribute__((unused)),
          const void *tag __attribute__((unused)))
HS_DELETE(_ZdaPvSt11align_val_tRKSt9nothrow_t, size_t a __attribute__((unused)),
          const void *tag __attribute__((unused)))

/* --- our own definitions, by name, for hooks.c: it patches an allocator that binds
 * ahead of this library to jump to them. Hidden aliases, since &malloc taken here would
 * be the first definition in the lookup scope: the program's. Each is entered through a
 * thunk that keeps every general register (but rax where it returns a value): a caller
 * compiled by GCC in the allocator's own translation unit (or with LTO) may keep values in
 * the call-clobbered registers that it sees the original not touch (-fipa-ra, on at -O2):
 * own_malloc's main keeps a pointer in r8 across its calls of malloc, prefixed_alloc's
 * realloc its result in rax across its call of free. The SSE registers are not kept (the
 * fast paths use none; the sampled path may). --- */

/* The ones that return a value (V), and the ones that return nothing (N). */
#define HS_OWN_LIST(V, N)                                                                          \
    V(malloc)                                                                                      \
    V(calloc)                                                                                      \
    V(realloc)                                                                                     \
    V(posix_memalign)                                                                              \
    V(aligned_alloc)                                                                               \
    V(memalign)                                                                                    \
    V(valloc)                                                                                      \
    V(pvalloc)                                                                                     \
    V(_Znwm)                                                                                       \
    V(_Znam)                                                                                       \
    V(_ZnwmRKSt9nothrow_t)                                                                         \
    V(_ZnamRKSt9nothrow_t)                                                                         \
    V(_ZnwmSt11align_val_t)                                                                        \
    V(_ZnamSt11align_val_t)                                                                        \
    V(_ZnwmSt11align_val_tRKSt9nothrow_t)                                                          \
    V(_ZnamSt11align_val_tRKSt9nothrow_t)                                                          \
    N(free)                                                                                        \
    N(_ZdlPv)                                                                                      \
    N(_ZdaPv)                                                                                      \
    N(_ZdlPvm)                                                                                     \
    N(_ZdaPvm)                                                                                     \
    N(_ZdlPvRKSt9nothrow_t)                                                                        \
    N(_ZdaPvRKSt9nothrow_t)                                                                        \
    N(_ZdlPvSt11align_val_t)                                                                       \
    N(_ZdaPvSt11align_val_t)                                                                       \
    N(_ZdlPvmSt11align_val_t)                                                                      \
    N(_ZdaPvmSt11align_val_t)                                                                      \
    N(_ZdlPvSt11align_val_tRKSt9nothrow_t)                                                         \
    N(_ZdaPvSt11align_val_tRKSt9nothrow_t)

/* The hidden alias hs_own_<sym>, and the thunk hs_thunk_<sym> that enters it. */
#define HS_OWN_ALIAS(sym)                                                                          \
    extern __typeof(sym) hs_own_##sym __attribute__((alias(#sym), copy(sym), visibility("hidden")));
#define HS_OWN_THUNK(sym) HS_KEEPREGS_THUNK(hs_thunk_##sym, hs_own_##sym)
#define HS_OWN_THUNK_VOID(sym) HS_KEEPALL_THUNK(hs_thunk_##sym, hs_own_##sym)
#define HS_OWN_ENTRY(sym) {#sym, (void *)hs_thunk_##sym},
HS_OWN_LIST(HS_OWN_ALIAS, HS_OWN_ALIAS)
HS_OWN_LIST(HS_OWN_THUNK, HS_OWN_THUNK_VOID)
HS_HIDDEN const hs_own_entry_t hs_own_entries[] = {
    HS_OWN_LIST(HS_OWN_ENTRY, HS_OWN_ENTRY){NULL, NULL}};

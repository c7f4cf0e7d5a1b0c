/*
 * Rust's global allocators, hooked in place (hooks.h): __rust_alloc, __rust_dealloc,
 * __rust_realloc and __rust_alloc_zeroed of a #[global_allocator] that a program or a
 * library brings (reach.c finds them in .symtab, where they are local symbols). Each
 * object's four entry points are one instance, with hooks of its own that know their
 * originals: the executable's, and up to three more from objects loaded later (a Rust
 * cdylib such as a Python extension). The hooks do interposition's work (count, charge
 * the countdown, sample when it runs out) and call the original inside the guard, so a
 * global allocator that wraps malloc is counted once, by the Rust hook.
 */
#define _GNU_SOURCE
#include "hooks.h"
#include "runtime/core.h"
#include "record/livetab.h"
#include "patch.h"
#include "record/recorder.h"

#include <errno.h>
#include <stdio.h>

const char *const hs_hooks_rust_suffix[HS_RUST_N] = {
    [HS_RUST_ALLOC] = "__rust_alloc",
    [HS_RUST_DEALLOC] = "__rust_dealloc",
    [HS_RUST_REALLOC] = "__rust_realloc",
    [HS_RUST_ALLOC_ZEROED] = "__rust_alloc_zeroed",
};

/* One object's originals (its trampolines). */
typedef struct {
    void *(*alloc)(size_t, size_t);
    void (*dealloc)(void *, size_t, size_t);
    void *(*realloc)(void *, size_t, size_t, size_t);
    void *(*alloc_zeroed)(size_t, size_t);
    bool dealloc_done; /* hooked, or does nothing */
} rust_inst_t;

static rust_inst_t rust_inst[HS_RUST_INSTANCES];
static int rust_ninst;

static void *rust_call_alloc(rust_inst_t *r, bool zeroed, size_t n, size_t align)
{
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    void *p = zeroed ? r->alloc_zeroed(n, align) : r->alloc(n, align);
    hs_guard_exit(t);
    return p;
}

static HS_COLD void *rust_alloc_slow(rust_inst_t *r, bool zeroed, size_t n, size_t align)
{
    hs_tls_t *t = &hs_tls;
    bool sample = hs_sample_begin(t, n);
    void *p = rust_call_alloc(r, zeroed, n, align);
    if (sample)
        hs_sample_end(t, p, n);
    return p;
}

static inline void *rust_alloc_hook(rust_inst_t *r, bool zeroed, size_t n, size_t align)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    if (HS_LIKELY(hs_hooks_charge(t, n)))
        return rust_call_alloc(r, zeroed, n, align);
    return rust_alloc_slow(r, zeroed, n, align);
}

static inline void rust_dealloc_hook(rust_inst_t *r, void *p, size_t n, size_t align)
{
    hs_tls_t *t = &hs_tls;
    t->frees++;
    if (HS_UNLIKELY(hs_livetab_maybe(p)))
        hs_forget(p);
    hs_guard_enter(t);
    r->dealloc(p, n, align);
    hs_guard_exit(t);
}

static HS_COLD void *rust_realloc_slow(rust_inst_t *r, void *p, size_t old, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    bool sample = t->countdown <= 0 && hs_sample_begin(t, n);
    hs_live_t e;
    bool had = hs_livetab_maybe(p) && hs_realloc_forget(p, &e);
    hs_guard_enter(t);
    void *q = r->realloc(p, old, align, n);
    hs_guard_exit(t);
    if (had)
        hs_realloc_done(&e, q, n);
    if (sample)
        hs_sample_end(t, q, n);
    return q;
}

static inline void *rust_realloc_hook(rust_inst_t *r, void *p, size_t old, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    t->allocs++;
    t->frees++;
    if (HS_UNLIKELY(!hs_hooks_charge(t, n) || hs_livetab_maybe(p)))
        return rust_realloc_slow(r, p, old, align, n);
    hs_guard_enter(t);
    void *q = r->realloc(p, old, align, n);
    hs_guard_exit(t);
    return q;
}

/* Instance i's hooks, entered through thunks that keep the registers (hooks.h). */
#define RUST_INSTANCE(i)                                                                           \
    HS_HIDDEN void *hs_hook_rust_alloc_##i(size_t n, size_t align);                                \
    HS_HIDDEN void *hs_hook_rust_alloc_##i(size_t n, size_t align)                                 \
    {                                                                                              \
        return rust_alloc_hook(&rust_inst[i], false, n, align);                                    \
    }                                                                                              \
    HS_HIDDEN void *hs_hook_rust_alloc_zeroed_##i(size_t n, size_t align);                         \
    HS_HIDDEN void *hs_hook_rust_alloc_zeroed_##i(size_t n, size_t align)                          \
    {                                                                                              \
        return rust_alloc_hook(&rust_inst[i], true, n, align);                                     \
    }                                                                                              \
    HS_HIDDEN void hs_hook_rust_dealloc_##i(void *p, size_t n, size_t align);                      \
    HS_HIDDEN void hs_hook_rust_dealloc_##i(void *p, size_t n, size_t align)                       \
    {                                                                                              \
        rust_dealloc_hook(&rust_inst[i], p, n, align);                                             \
    }                                                                                              \
    HS_HIDDEN void *hs_hook_rust_realloc_##i(void *p, size_t old, size_t align, size_t n);         \
    HS_HIDDEN void *hs_hook_rust_realloc_##i(void *p, size_t old, size_t align, size_t n)          \
    {                                                                                              \
        return rust_realloc_hook(&rust_inst[i], p, old, align, n);                                 \
    }                                                                                              \
    HS_KEEPREGS_THUNK(hs_thunk_rust_alloc_##i, hs_hook_rust_alloc_##i)                             \
    HS_KEEPREGS_THUNK(hs_thunk_rust_alloc_zeroed_##i, hs_hook_rust_alloc_zeroed_##i)               \
    HS_KEEPALL_THUNK(hs_thunk_rust_dealloc_##i, hs_hook_rust_dealloc_##i)                          \
    HS_KEEPREGS_THUNK(hs_thunk_rust_realloc_##i, hs_hook_rust_realloc_##i)

RUST_INSTANCE(0)
RUST_INSTANCE(1)
RUST_INSTANCE(2)
RUST_INSTANCE(3)
_Static_assert(HS_RUST_INSTANCES == 4, "one RUST_INSTANCE line per instance");

#define RUST_THUNKS(i)                                                                             \
    {                                                                                              \
        [HS_RUST_ALLOC] = (void *)hs_thunk_rust_alloc_##i,                                         \
        [HS_RUST_DEALLOC] = (void *)hs_thunk_rust_dealloc_##i,                                     \
        [HS_RUST_REALLOC] = (void *)hs_thunk_rust_realloc_##i,                                     \
        [HS_RUST_ALLOC_ZEROED] = (void *)hs_thunk_rust_alloc_zeroed_##i,                           \
    }
static void *const rust_thunks[HS_RUST_INSTANCES][HS_RUST_N] = {RUST_THUNKS(0), RUST_THUNKS(1),
                                                                RUST_THUNKS(2), RUST_THUNKS(3)};

int hs_hooks_rust_instance(void)
{
    return rust_ninst < HS_RUST_INSTANCES ? rust_ninst++ : -ENOSPC;
}

int hs_hooks_rust(int inst, int k, void *addr, size_t size, char *why, size_t whylen)
{
    if (k < 0 || k >= HS_RUST_N || inst < 0 || inst >= rust_ninst || !hs_hooks_enabled())
        return -ENOSYS;
    rust_inst_t *r = &rust_inst[inst];
    void **orig[HS_RUST_N] = {
        [HS_RUST_ALLOC] = (void **)&r->alloc,
        [HS_RUST_DEALLOC] = (void **)&r->dealloc,
        [HS_RUST_REALLOC] = (void **)&r->realloc,
        [HS_RUST_ALLOC_ZEROED] = (void **)&r->alloc_zeroed,
    };
    if (k == HS_RUST_DEALLOC && hs_hooks_noop(addr))
        return r->dealloc_done = true, HS_HOOKS_NOOP;
    if (k != HS_RUST_DEALLOC && !r->dealloc_done) {
        snprintf(why, whylen, "__rust_dealloc is not hooked");
        return -EPERM;
    }
    int rc = hs_patch_install_ex(addr, size, 0, rust_thunks[inst][k], orig[k], why, whylen);
    r->dealloc_done |= rc == 0 && k == HS_RUST_DEALLOC;
    return rc;
}

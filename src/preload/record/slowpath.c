/*
 * Slow paths of the interposed entry points: sampling an allocation (stack capture and
 * table updates happen in recorder.c), frees and reallocs of sampled or bootstrap
 * blocks, and operator new's failure path. Profiler state is updated before the real
 * free runs, so an address cannot be reused and re-sampled in between.
 */
#define _GNU_SOURCE
#include "runtime/core.h"
#include "bootstrap.h"
#include "recorder.h"
#include "livetab.h"
#include "slowpath.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static void *slow_call_real(hs_op_t op, size_t align, size_t n)
{
    switch (op) {
    case HS_OP_MALLOC:
        return hs_real.malloc(n);
    case HS_OP_CALLOC:
        return hs_real.calloc(1, n);
    case HS_OP_ALIGNED_ALLOC:
        return hs_real.aligned_alloc(align, n);
    case HS_OP_MEMALIGN:
        return hs_real.memalign(align, n);
    case HS_OP_VALLOC:
        return hs_real.valloc(n);
    case HS_OP_PVALLOC:
        return hs_real.pvalloc(n);
    }
    return NULL;
}

void *hs_slow_alloc(hs_op_t op, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    if (HS_UNLIKELY(t->boot_only))
        return hs_boot_aside(align, n);
    bool sample = hs_sample_begin(t, n);
    void *p = slow_call_real(op, align, n);
    if (sample)
        hs_sample_end(t, p, n);
    return p;
}

int hs_slow_posix_memalign(void **out, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    bool sample = hs_sample_begin(t, n);
    int rc = hs_real.posix_memalign(out, align, n);
    if (sample)
        hs_sample_end(t, rc == 0 ? *out : NULL, n);
    return rc;
}

/* A block freed or reallocated under the guard is the profiler's own, never sampled:
 * the filter's bit for it is a false positive. The live table is not asked, since the
 * caller may hold a lock ranked above its shards (the symbol cache frees its old table
 * under its lock). A program's signal handler that frees a sampled block while its
 * thread is inside the profiler leaves that entry behind until the address is sampled or
 * freed again: the price of not taking a shard lock the interrupted code may hold. */
static inline bool slow_profiler_block(void)
{
    return hs_tls.guard != 0;
}

void hs_slow_free(void *p)
{
    if (!p) { /* its filter bit is pinned set: the fast path counted a free that was not */
        hs_tls.frees--;
        return;
    }
    if (hs_boot_owns(p)) {
        hs_boot_free(p);
        return;
    }
    if (HS_LIKELY(!slow_profiler_block()))
        hs_forget(p);
    hs_real.free(p);
}

/* realloc of a bootstrap block: move it into the real allocator. */
static void *slow_realloc_boot(void *p, size_t n)
{
    size_t old = hs_boot_size(p);
    void *q = hs_slow_alloc(HS_OP_MALLOC, 0, n);
    if (q) {
        memcpy(q, p, old < n ? old : n);
        hs_boot_free(p);
    }
    return q;
}

void *hs_slow_realloc(void *p, size_t n)
{
    hs_tls_t *t = &hs_tls;
    bool maybe = p && hs_livetab_maybe(p); /* the filter, read once */
    if (maybe && hs_boot_owns(p))
        return slow_realloc_boot(p, n);
    maybe = maybe && !slow_profiler_block();
    bool sample = t->countdown <= 0 && hs_sample_begin(t, n);
    hs_live_t old;
    bool had = maybe && hs_realloc_forget(p, &old);
    void *q = hs_real.realloc(p, n);
    if (had)
        hs_realloc_done(&old, q, n);
    if (sample)
        hs_sample_end(t, q, n);
    return q;
}

static const char *const slow_new_syms[] = {
    [HS_NEW_PLAIN] = "_Znwm",
    [HS_NEW_ARRAY] = "_Znam",
    [HS_NEW_ALIGNED] = "_ZnwmSt11align_val_t",
    [HS_NEW_ALIGNED_ARRAY] = "_ZnamSt11align_val_t",
};

void *hs_slow_new(hs_new_kind_t kind, size_t align, size_t n)
{
    hs_tls_t *t = &hs_tls;
    void *p = NULL;
    bool aligned = kind == HS_NEW_ALIGNED || kind == HS_NEW_ALIGNED_ARRAY;
    if (aligned) {
        t->allocs++;
        if ((t->countdown -= (int64_t)n) > 0)
            p = hs_real.memalign(align, n);
        else
            p = hs_slow_alloc(HS_OP_MEMALIGN, align, n);
    } else if (t->countdown <= 0) {
        p = hs_slow_alloc(HS_OP_MALLOC, 0, n);
    }
    if (p)
        return p;
    /* Out of memory: the next operator new runs the new_handler and throws. */
    void *f = hs_real_sym(slow_new_syms[kind]);
    if (!f)
        abort();
    if (aligned)
        return ((void *(*)(size_t, size_t))f)(n, align);
    return ((void *(*)(size_t))f)(n);
}

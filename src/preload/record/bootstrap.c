/*
 * Bootstrap: finds the real allocator (the next definition of each entry point in symbol
 * resolution: glibc, or a jemalloc/tcmalloc/mimalloc loaded after heapsift) and serves
 * the allocations made while it looks (dlsym itself calls calloc) from a static pool.
 * Pool blocks are marked in the live filter, so free() sends them to the slow path,
 * which recognises them here: they never reach the real free. Until the lookup is done,
 * hs_real points at trampolines that do it first.
 */
#define _GNU_SOURCE
#include "runtime/core.h"
#include "bootstrap.h"
#include "modules.h"
#include "livetab.h"
#include "slowpath.h"

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

#define HS_BOOT_POOL_SIZE (64 * 1024)
#define HS_BOOT_HDR 16

static _Alignas(64) unsigned char boot_pool[HS_BOOT_POOL_SIZE];
static size_t boot_used;
static int boot_resolved; /* 0 no, 1 in progress, 2 done */

static void *boot_malloc(size_t n);
static void boot_free_tramp(void *p);
static void *boot_calloc(size_t n, size_t m);
static void *boot_realloc(void *p, size_t n);
static int boot_posix_memalign(void **out, size_t a, size_t n);
static void *boot_aligned_alloc(size_t a, size_t n);
static void *boot_memalign(size_t a, size_t n);
static void *boot_valloc(size_t n);
static void *boot_pvalloc(size_t n);
static size_t boot_usable(void *p);
static void boot_sized_delete(void *p, size_t n);
static void *boot_new_plain(size_t n);
static void *boot_new_array(size_t n);

hs_real_t hs_real = {boot_malloc,         boot_free_tramp,    boot_calloc,       boot_realloc,
                     boot_posix_memalign, boot_aligned_alloc, boot_memalign,     boot_valloc,
                     boot_pvalloc,        boot_usable,        boot_sized_delete, boot_sized_delete,
                     boot_new_plain,      boot_new_array};

/* The allocator's own operator new and new[] (same object as free), until judged. */
static void *(*boot_new_cand[2])(size_t);
static int boot_new_state[2]; /* 0 not judged, 1 being judged, 2 judged */

/* Pool allocation: bump pointer, 16-byte header holding the size; zeroed memory. */
static void *boot_pool_alloc(size_t align, size_t n)
{
    if (align < HS_BOOT_HDR)
        align = HS_BOOT_HDR;
    size_t start = (boot_used + HS_BOOT_HDR + align - 1) & ~(align - 1);
    if (n > HS_BOOT_POOL_SIZE || start + n > HS_BOOT_POOL_SIZE)
        return NULL;
    boot_used = start + n;
    unsigned char *p = boot_pool + start;
    memcpy(p - HS_BOOT_HDR, &n, sizeof(n));
    hs_filter_mark((uintptr_t)p);
    return p;
}

/* Blocks of the real allocator's set aside at start for the allocations of a thread
 * started by a signal handler (triggers.c), which must never enter the allocator the
 * signalled thread may be inside. Taken once each, in order, with no lock; the real free
 * takes them back (pthread_create's DTV, freed when that thread ends). */
#define HS_BOOT_ASIDE 2
static void *boot_aside[HS_BOOT_ASIDE];
static size_t boot_aside_size;
static int boot_aside_next;

int hs_boot_set_aside(size_t size)
{
    for (int i = 0; i < HS_BOOT_ASIDE; i++)
        if (!boot_aside[i] && !(boot_aside[i] = hs_real.calloc(1, size)))
            return -ENOMEM;
    boot_aside_size = size;
    return 0;
}

void *hs_boot_aside(size_t align, size_t n)
{
    int i = __atomic_fetch_add(&boot_aside_next, 1, __ATOMIC_RELAXED);
    if (i >= HS_BOOT_ASIDE || n > boot_aside_size || align > 16)
        return NULL;
    return boot_aside[i];
}

bool hs_boot_owns(const void *p)
{
    return (const unsigned char *)p >= boot_pool &&
           (const unsigned char *)p < boot_pool + HS_BOOT_POOL_SIZE;
}

size_t hs_boot_size(const void *p)
{
    size_t n;
    memcpy(&n, (const unsigned char *)p - HS_BOOT_HDR, sizeof(n));
    return n;
}

void hs_boot_free(void *p)
{
    hs_filter_unmark((uintptr_t)p); /* the block itself is never reused */
}

void *hs_real_sym(const char *name)
{
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t);
    void *f = dlsym(RTLD_NEXT, name);
    hs_guard_exit(t);
    return f;
}

/* dlsym(RTLD_NEXT), falling back to glibc's internal names when nothing comes next. */
static void *boot_lookup(const char *name, const char *libc_name)
{
    void *f = dlsym(RTLD_NEXT, name);
    if (!f && libc_name)
        f = dlsym(RTLD_DEFAULT, libc_name);
    return f;
}

/* The next definition of a C++ operator (sized delete, new), if the allocator that
 * provides free defines it too (jemalloc, tcmalloc). libstdc++'s own calls free or malloc,
 * which come back here: for it the way through free or malloc is the shorter one. */
static void *boot_allocator_sym(const char *name, void *allocator_free)
{
    void *f = dlsym(RTLD_NEXT, name);
    /* With dladdr, the four checks cost 1.0M instructions: a third of what heapsift
     * added to a small program's start. */
    const void *o = f && allocator_free ? hs_code_object(f, NULL) : NULL;
    return o && o == hs_code_object(allocator_free, NULL) ? f : NULL;
}

static void boot_do_resolve(void)
{
    hs_real_t r;
    memset(&r, 0, sizeof(r));
    r.malloc = boot_lookup("malloc", "__libc_malloc");
    r.free = boot_lookup("free", "__libc_free");
    r.calloc = boot_lookup("calloc", "__libc_calloc");
    r.realloc = boot_lookup("realloc", "__libc_realloc");
    r.memalign = boot_lookup("memalign", "__libc_memalign");
    r.posix_memalign = boot_lookup("posix_memalign", NULL);
    r.aligned_alloc = boot_lookup("aligned_alloc", NULL);
    r.valloc = boot_lookup("valloc", "__libc_valloc");
    r.pvalloc = boot_lookup("pvalloc", "__libc_pvalloc");
    r.malloc_usable_size = boot_lookup("malloc_usable_size", NULL);
    r.sized_delete = boot_allocator_sym("_ZdlPvm", r.free);
    r.sized_delete_array = boot_allocator_sym("_ZdaPvm", r.free);
    boot_new_cand[0] = (void *(*)(size_t))boot_allocator_sym("_Znwm", r.free);
    boot_new_cand[1] = (void *(*)(size_t))boot_allocator_sym("_Znam", r.free);
    /* Publish one field at a time; each is a complete pointer. */
#define HS_SET(f)                                                                                  \
    if (r.f)                                                                                       \
    __atomic_store_n(&hs_real.f, r.f, __ATOMIC_RELEASE)
    HS_SET(malloc);
    HS_SET(free);
    HS_SET(calloc);
    HS_SET(realloc);
    HS_SET(memalign);
    HS_SET(posix_memalign);
    HS_SET(aligned_alloc);
    HS_SET(valloc);
    HS_SET(pvalloc);
    HS_SET(malloc_usable_size);
    HS_SET(sized_delete);
    HS_SET(sized_delete_array);
#undef HS_SET
}

int hs_bootstrap_resolve(void)
{
    hs_tls_t *t = &hs_tls;
    int s = __atomic_load_n(&boot_resolved, __ATOMIC_ACQUIRE);
    if (s == 2)
        return 0;
    int expected = 0;
    if (__atomic_compare_exchange_n(&boot_resolved, &expected, 1, false, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE)) {
        hs_guard_enter(t);
        t->resolving = 1;
        boot_do_resolve();
        t->resolving = 0;
        hs_guard_exit(t);
        __atomic_store_n(&boot_resolved, 2, __ATOMIC_RELEASE);
    } else if (t->resolving) {
        return -EAGAIN; /* re-entered from dlsym: the caller uses the pool */
    } else {
        while (__atomic_load_n(&boot_resolved, __ATOMIC_ACQUIRE) != 2)
            sched_yield();
    }
    return hs_real.malloc == boot_malloc ? -ENOENT : 0;
}

/* The trampolines: used only until the lookup is done (or for functions nothing
 * defines, where they emulate the function with the ones that exist). */
static void *boot_malloc(size_t n)
{
    if (hs_bootstrap_resolve() != 0)
        return boot_pool_alloc(16, n);
    return hs_real.malloc(n);
}

static void boot_free_tramp(void *p)
{
    if (!p || hs_boot_owns(p))
        return;
    if (hs_bootstrap_resolve() == 0 && hs_real.free != boot_free_tramp)
        hs_real.free(p);
}

static void *boot_calloc(size_t n, size_t m)
{
    size_t total;
    if (__builtin_mul_overflow(n, m, &total))
        return errno = ENOMEM, NULL;
    if (hs_bootstrap_resolve() != 0)
        return boot_pool_alloc(16, total);
    return hs_real.calloc(n, m);
}

static void *boot_realloc(void *p, size_t n)
{
    if (hs_bootstrap_resolve() != 0 || hs_real.realloc == boot_realloc) {
        void *q = boot_pool_alloc(16, n);
        if (q && p)
            memcpy(q, p, hs_boot_owns(p) ? (hs_boot_size(p) < n ? hs_boot_size(p) : n) : 0);
        return q;
    }
    return hs_real.realloc(p, n);
}

static void *boot_memalign(size_t a, size_t n)
{
    if (hs_bootstrap_resolve() != 0 || hs_real.memalign == boot_memalign)
        return boot_pool_alloc(a, n);
    return hs_real.memalign(a, n);
}

static int boot_posix_memalign(void **out, size_t a, size_t n)
{
    if (a < sizeof(void *) || (a & (a - 1)))
        return EINVAL;
    void *p = boot_memalign(a, n);
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

static void *boot_aligned_alloc(size_t a, size_t n)
{
    if (hs_bootstrap_resolve() == 0 && hs_real.aligned_alloc != boot_aligned_alloc)
        return hs_real.aligned_alloc(a, n);
    return boot_memalign(a, n);
}

static void *boot_valloc(size_t n)
{
    if (hs_bootstrap_resolve() == 0 && hs_real.valloc != boot_valloc)
        return hs_real.valloc(n);
    return boot_memalign((size_t)sysconf(_SC_PAGESIZE), n);
}

static void *boot_pvalloc(size_t n)
{
    size_t pg = (size_t)sysconf(_SC_PAGESIZE);
    if (hs_bootstrap_resolve() == 0 && hs_real.pvalloc != boot_pvalloc)
        return hs_real.pvalloc(n);
    return boot_memalign(pg, (n + pg - 1) & ~(pg - 1));
}

static size_t boot_usable(void *p)
{
    if (p && hs_boot_owns(p))
        return hs_boot_size(p);
    if (hs_bootstrap_resolve() == 0 && hs_real.malloc_usable_size != boot_usable)
        return hs_real.malloc_usable_size(p);
    return 0;
}

static void boot_sized_delete(void *p, size_t n)
{
    (void)n;
    hs_real.free(p);
}

/* operator new through malloc: the failure path (new_handler, bad_alloc) is hs_slow_new's. */
static void *boot_new_malloc_plain(size_t n)
{
    void *p = hs_real.malloc(n);
    return p ? p : hs_slow_new(HS_NEW_PLAIN, 0, n);
}

static void *boot_new_malloc_array(size_t n)
{
    void *p = hs_real.malloc(n);
    return p ? p : hs_slow_new(HS_NEW_ARRAY, 0, n);
}

/* Judges the allocator's operator new of kind k (0 plain, 1 array) once: it is used only
 * if one call of it leaves the exact allocation counter as it was, that is, does not come
 * back through malloc (jemalloc's and tcmalloc's do not; one that did would have its
 * blocks counted and sampled twice). The probe runs under the guard, which undoes its
 * counts. Until judged, and on the other threads while it is, calls take malloc. */
static void boot_new_judge(int k)
{
    void *(**slot)(size_t) = k ? &hs_real.new_array : &hs_real.new_plain;
    void *(*fallback)(size_t) = k ? boot_new_malloc_array : boot_new_malloc_plain;
    int expected = 0;
    if (hs_bootstrap_resolve() != 0 ||
        !__atomic_compare_exchange_n(&boot_new_state[k], &expected, 1, false, __ATOMIC_ACQ_REL,
                                     __ATOMIC_ACQUIRE))
        return;
    void *(*cand)(size_t) = boot_new_cand[k];
    bool own = false;
    if (cand) {
        hs_tls_t *t = &hs_tls;
        hs_guard_enter(t);
        uint64_t before = t->allocs;
        void *p = cand(16);
        own = t->allocs == before;
        hs_real.free(p); /* unsampled either way: the guard is held */
        hs_guard_exit(t);
    }
    __atomic_store_n(slot, own ? cand : fallback, __ATOMIC_RELEASE);
    __atomic_store_n(&boot_new_state[k], 2, __ATOMIC_RELEASE);
}

static void *boot_new_plain(size_t n)
{
    boot_new_judge(0);
    if (hs_real.new_plain == boot_new_plain)
        return boot_new_malloc_plain(n);
    return hs_real.new_plain(n);
}

static void *boot_new_array(size_t n)
{
    boot_new_judge(1);
    if (hs_real.new_array == boot_new_array)
        return boot_new_malloc_array(n);
    return hs_real.new_array(n);
}

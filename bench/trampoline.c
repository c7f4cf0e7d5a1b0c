/*
 * trampoline: the least an LD_PRELOAD allocation interposer can cost. libtrampoline.so
 * defines malloc, free, calloc, realloc, posix_memalign, aligned_alloc, memalign and
 * malloc_usable_size as one indirect jump each to the next definition (looked up once
 * with dlsym(RTLD_NEXT); until then the pointers lead to functions that look up first,
 * and dlsym's own calloc is served from a static buffer). No counting, no sampling:
 * bench/floor.sh runs churn under it beside heapsift to show which part of heapsift's
 * overhead any interposer pays (the call into the preloaded library and one indirect jump
 * per call). C++'s operator new and delete (plain, array and sized) are jumps too, to the
 * next definition when one comes after libstdc++'s (an allocator with its own, such as
 * jemalloc, which heapsift must interpose to see them), else to malloc and free: with it
 * preloaded before jemalloc, bench/cppmap shows the least an interposer adds there.
 *
 * Build: cc -O2 -shared -fPIC -o libtrampoline.so trampoline.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

static void *first_malloc(size_t n);
static void first_free(void *p);
static void *first_calloc(size_t n, size_t m);
static void *first_realloc(void *p, size_t n);
static int first_posix_memalign(void **out, size_t a, size_t n);
static void *first_aligned_alloc(size_t a, size_t n);
static void *first_memalign(size_t a, size_t n);
static size_t first_usable(void *p);

static void *(*next_malloc)(size_t) = first_malloc;
static void (*next_free)(void *) = first_free;
static void *(*next_calloc)(size_t, size_t) = first_calloc;
static void *(*next_realloc)(void *, size_t) = first_realloc;
static int (*next_posix_memalign)(void **, size_t, size_t) = first_posix_memalign;
static void *(*next_aligned_alloc)(size_t, size_t) = first_aligned_alloc;
static void *(*next_memalign)(size_t, size_t) = first_memalign;
static size_t (*next_usable)(void *) = first_usable;

/* dlsym's own allocations while the lookup runs: zeroed static memory after a 16-byte
 * header holding the size, never reused. */
static _Alignas(16) unsigned char boot[16384];
static size_t boot_used;
static int looking, found;

static void *boot_alloc(size_t n)
{
    size_t need = 16 + ((n + 15) & ~(size_t)15);
    if (n > sizeof(boot) || boot_used + need > sizeof(boot))
        return NULL;
    unsigned char *p = boot + boot_used + 16;
    memcpy(p - 16, &n, sizeof(n));
    boot_used += need;
    return p;
}

static int in_boot(const void *p)
{
    return (const unsigned char *)p >= boot && (const unsigned char *)p < boot + sizeof(boot);
}

static void *next(const char *name)
{
    return dlsym(RTLD_NEXT, name);
}

/* Sets every pointer, free last (the boot blocks' frees wait for it). */
__attribute__((constructor)) static void lookup(void)
{
    if (found || looking)
        return;
    looking = 1;
    void *c = next("calloc"), *m = next("malloc"), *r = next("realloc");
    void *pm = next("posix_memalign"), *aa = next("aligned_alloc"), *ma = next("memalign");
    void *u = next("malloc_usable_size"), *f = next("free");
    next_calloc = (void *(*)(size_t, size_t))c;
    next_malloc = (void *(*)(size_t))m;
    next_realloc = (void *(*)(void *, size_t))r;
    next_posix_memalign = (int (*)(void **, size_t, size_t))pm;
    next_aligned_alloc = (void *(*)(size_t, size_t))aa;
    next_memalign = (void *(*)(size_t, size_t))ma;
    next_usable = (size_t(*)(void *))u;
    next_free = (void (*)(void *))f;
    looking = 0;
    found = 1;
}

static void *first_malloc(size_t n)
{
    if (looking)
        return boot_alloc(n);
    lookup();
    return next_malloc(n);
}

static void first_free(void *p)
{
    if (looking || in_boot(p))
        return;
    lookup();
    next_free(p);
}

static void *first_calloc(size_t n, size_t m)
{
    if (looking)
        return n && m > SIZE_MAX / n ? NULL : boot_alloc(n * m);
    lookup();
    return next_calloc(n, m);
}

static void *first_realloc(void *p, size_t n)
{
    lookup();
    return next_realloc(p, n);
}

static int first_posix_memalign(void **out, size_t a, size_t n)
{
    lookup();
    return next_posix_memalign(out, a, n);
}

static void *first_aligned_alloc(size_t a, size_t n)
{
    lookup();
    return next_aligned_alloc(a, n);
}

static void *first_memalign(size_t a, size_t n)
{
    lookup();
    return next_memalign(a, n);
}

static size_t first_usable(void *p)
{
    lookup();
    return next_usable(p);
}

void *malloc(size_t n)
{
    return next_malloc(n);
}

/* Boot blocks are never handed to the real allocator; the test costs the free path one
 * compare and branch more than a pure jump (heapsift tests a filter bit instead). */
void free(void *p)
{
    if (__builtin_expect(in_boot(p), 0))
        return;
    next_free(p);
}

void *calloc(size_t n, size_t m)
{
    return next_calloc(n, m);
}

void *realloc(void *p, size_t n)
{
    if (__builtin_expect(in_boot(p), 0)) {
        size_t old;
        memcpy(&old, (unsigned char *)p - 16, sizeof(old));
        void *q = malloc(n);
        if (q)
            memcpy(q, p, old < n ? old : n);
        return q;
    }
    return next_realloc(p, n);
}

int posix_memalign(void **out, size_t a, size_t n)
{
    return next_posix_memalign(out, a, n);
}

void *aligned_alloc(size_t a, size_t n)
{
    return next_aligned_alloc(a, n);
}

void *memalign(size_t a, size_t n)
{
    return next_memalign(a, n);
}

size_t malloc_usable_size(void *p)
{
    if (__builtin_expect(in_boot(p), 0)) {
        size_t n;
        memcpy(&n, (unsigned char *)p - 16, sizeof(n));
        return n;
    }
    return next_usable(p);
}

/* --- C++ operators: one indirect jump each, like the functions above; the pointers lead
 * to the next definition in the allocator's library, or to malloc and free when the
 * operators are libstdc++'s (which would only call them), set on first use. */

typedef void *(*new_fn)(size_t);
typedef void (*del_fn)(void *);
typedef void (*sdel_fn)(void *, size_t);

static void *first_new(size_t n);
static void *first_new_array(size_t n);
static void first_delete(void *p);
static void first_delete_array(void *p);
static void first_sized_delete(void *p, size_t n);
static void first_sized_delete_array(void *p, size_t n);
static new_fn next_new = first_new, next_new_array = first_new_array;
static del_fn next_delete = first_delete, next_delete_array = first_delete_array;
static sdel_fn next_sized_delete = first_sized_delete;
static sdel_fn next_sized_delete_array = first_sized_delete_array;

static void *cxx_malloc(size_t n)
{
    return malloc(n);
}

static void cxx_free(void *p)
{
    free(p);
}

static void cxx_sized_free(void *p, size_t n)
{
    (void)n;
    free(p);
}

/* name's next definition if the object that defines free defines it too, else NULL. */
static void *cxx_next(const char *name)
{
    Dl_info a, b;
    void *f = dlsym(RTLD_NEXT, name), *fr = dlsym(RTLD_NEXT, "free");
    if (!f || !fr || !dladdr(f, &a) || !dladdr(fr, &b) || a.dli_fbase != b.dli_fbase)
        return NULL;
    return f;
}

static void cxx_lookup(void)
{
    void *nw = cxx_next("_Znwm"), *na = cxx_next("_Znam"), *dl = cxx_next("_ZdlPv");
    void *da = cxx_next("_ZdaPv"), *sd = cxx_next("_ZdlPvm"), *sa = cxx_next("_ZdaPvm");
    next_new = nw ? (new_fn)nw : cxx_malloc;
    next_new_array = na ? (new_fn)na : cxx_malloc;
    next_delete = dl ? (del_fn)dl : cxx_free;
    next_delete_array = da ? (del_fn)da : cxx_free;
    next_sized_delete = sd ? (sdel_fn)sd : cxx_sized_free;
    next_sized_delete_array = sa ? (sdel_fn)sa : cxx_sized_free;
}

static void *first_new(size_t n)
{
    cxx_lookup();
    return next_new(n);
}

static void *first_new_array(size_t n)
{
    cxx_lookup();
    return next_new_array(n);
}

static void first_delete(void *p)
{
    cxx_lookup();
    next_delete(p);
}

static void first_delete_array(void *p)
{
    cxx_lookup();
    next_delete_array(p);
}

static void first_sized_delete(void *p, size_t n)
{
    cxx_lookup();
    next_sized_delete(p, n);
}

static void first_sized_delete_array(void *p, size_t n)
{
    cxx_lookup();
    next_sized_delete_array(p, n);
}

void *_Znwm(size_t n)
{
    return next_new(n);
}

void *_Znam(size_t n)
{
    return next_new_array(n);
}

void _ZdlPv(void *p)
{
    next_delete(p);
}

void _ZdaPv(void *p)
{
    next_delete_array(p);
}

void _ZdlPvm(void *p, size_t n)
{
    next_sized_delete(p, n);
}

void _ZdaPvm(void *p, size_t n)
{
    next_sized_delete_array(p, n);
}

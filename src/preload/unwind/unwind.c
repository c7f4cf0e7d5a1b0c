/*
 * Unwinder front end: owns the table of variants (dwarf, libgcc, fp), the variant
 * chosen by HEAPSIFT_UNWIND, the skip range (the profiler's own text, and the allocation
 * wrappers of other objects that call its hooks: hs_unwind_add_wrapper) and
 * hs_unwind_capture, which the sampled allocation path calls with the reentrancy guard
 * held and before taking any profiler lock. It never allocates and takes no lock itself;
 * the variants may allocate on first use (routed to the real allocator by the guard).
 * The selection and the skip range are set once at start-up (the wrappers at start or
 * attach) and read with relaxed atomics.
 */
#include "unwind.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

/* Frames an unwinder may report before reaching our own code (a frame inside an unwinder
 * library, outside the skip range; libgcc reports none today). */
#define HS_UNWIND_MAX_INTERNAL 6
#define HS_UNWIND_SLACK 16

/* clang has no per-function switch: there, build with -fno-omit-frame-pointer. */
#if defined(__clang__)
#define HS_UNWIND_KEEP_FP
#else
#define HS_UNWIND_KEEP_FP __attribute__((optimize("no-omit-frame-pointer")))
#endif

typedef struct {
    const char *name;
    size_t (*capture)(uintptr_t *pcs, size_t max);
} hs_unwind_variant_t;

static const hs_unwind_variant_t hs_unwind_variants[] = {
    {"dwarf", hs_unwind_dwarf}, /* default: CFI with a shared rule cache, no descriptors */
    {"libgcc", hs_unwind_libgcc},
    {"fp", hs_unwind_fp},
};

#define HS_UNWIND_NVARIANTS (sizeof(hs_unwind_variants) / sizeof(hs_unwind_variants[0]))

static unsigned hs_unwind_selected;             /* index into hs_unwind_variants */
uintptr_t hs_unwind_skip_lo, hs_unwind_skip_hi; /* relaxed atomics (unwind.h) */

int hs_unwind_init(const char *method)
{
    if (method == NULL || method[0] == '\0')
        method = hs_unwind_variants[0].name;
    for (unsigned i = 0; i < HS_UNWIND_NVARIANTS; i++) {
        if (strcmp(method, hs_unwind_variants[i].name) == 0) {
            __atomic_store_n(&hs_unwind_selected, i, __ATOMIC_RELAXED);
            return 0;
        }
    }
    return -EINVAL;
}

void hs_unwind_set_skip_range(uintptr_t lo, uintptr_t hi)
{
    __atomic_store_n(&hs_unwind_skip_lo, lo, __ATOMIC_RELAXED);
    __atomic_store_n(&hs_unwind_skip_hi, hi, __ATOMIC_RELAXED);
}

#define HS_UNWIND_WRAPPERS 16
static uintptr_t hs_unwind_wrap[HS_UNWIND_WRAPPERS][2];
static unsigned hs_unwind_nwrap;

void hs_unwind_add_wrapper(uintptr_t lo, uintptr_t hi)
{
    unsigned n = __atomic_load_n(&hs_unwind_nwrap, __ATOMIC_RELAXED);
    for (unsigned i = 0; i < n; i++)
        if (hs_unwind_wrap[i][0] == lo)
            return;
    if (n == HS_UNWIND_WRAPPERS || lo >= hi)
        return;
    hs_unwind_wrap[n][0] = lo;
    hs_unwind_wrap[n][1] = hi;
    __atomic_store_n(&hs_unwind_nwrap, n + 1, __ATOMIC_RELEASE);
}

static bool hs_unwind_in_wrapper(uintptr_t pc)
{
    unsigned n = __atomic_load_n(&hs_unwind_nwrap, __ATOMIC_ACQUIRE);
    for (unsigned i = 0; i < n; i++)
        if (pc > hs_unwind_wrap[i][0] && pc <= hs_unwind_wrap[i][1])
            return true; /* a return address: after a call inside the function */
    return false;
}

/*
 * Number of leading frames to drop: up to HS_UNWIND_MAX_INTERNAL frames of the unwinder
 * itself that precede our first frame, then every frame inside [lo, hi), then the frames
 * of allocation wrappers right after them. When none of the first frames is ours (no skip
 * range, or a variant that starts elsewhere), nothing is dropped rather than guessing.
 */
static size_t hs_unwind_skip_count(const uintptr_t *pcs, size_t n)
{
    uintptr_t lo = __atomic_load_n(&hs_unwind_skip_lo, __ATOMIC_RELAXED);
    uintptr_t hi = __atomic_load_n(&hs_unwind_skip_hi, __ATOMIC_RELAXED);
    size_t i = 0;

    if (lo >= hi)
        return 0;
    while (i < n && i < HS_UNWIND_MAX_INTERNAL && (pcs[i] < lo || pcs[i] >= hi))
        i++;
    if (i == n || i == HS_UNWIND_MAX_INTERNAL)
        return 0;
    while (i < n && pcs[i] >= lo && pcs[i] < hi)
        i++;
    while (i < n && hs_unwind_in_wrapper(pcs[i]))
        i++;
    return i;
}

/*
 * Keeps a frame pointer (and so %rbp intact) even in an -fomit-frame-pointer build:
 * otherwise it may use %rbp as a scratch register and the fp variant's walk would stop
 * right here. Its callers on the sampled path need the same for fp to reach the app.
 */
HS_UNWIND_KEEP_FP size_t hs_unwind_capture(uintptr_t *pcs, size_t max)
{
    /* ~2 KiB of stack: room for the frames we drop without losing the outermost ones. */
    uintptr_t buf[HS_MAX_DEPTH + HS_UNWIND_SLACK];
    unsigned sel = __atomic_load_n(&hs_unwind_selected, __ATOMIC_RELAXED);
    size_t n, skip;

    if (max > HS_MAX_DEPTH)
        max = HS_MAX_DEPTH;
    if (max == 0)
        return 0;
    n = hs_unwind_variants[sel].capture(buf, max + HS_UNWIND_SLACK);
    skip = hs_unwind_skip_count(buf, n);
    n -= skip;
    if (n > max)
        n = max;
    memcpy(pcs, buf + skip, n * sizeof(*pcs));
    return n;
}

void hs_unwind_warmup(void)
{
    uintptr_t pcs[8];

    (void)hs_unwind_capture(pcs, 8);
    /* dwarf's rare fallback is libgcc: resolved now, not inside someone's dlopen (the
     * lookup alone: a whole backtrace through it was 16,000 instructions more). */
    if (hs_unwind_variants[__atomic_load_n(&hs_unwind_selected, __ATOMIC_RELAXED)].capture ==
        hs_unwind_dwarf)
        hs_unwind_libgcc_resolve();
}

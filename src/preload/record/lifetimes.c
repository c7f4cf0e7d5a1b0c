/*
 * Lifetimes of sampled objects, per stack and lifetime bucket (see lifetimes.h), and the
 * clock they are measured with. The table is one MAP_NORESERVE mapping of max_stacks * 10
 * * 2 doubles (pages are only backed once a stack of theirs frees a sample: 160 bytes per
 * stack used). Updates are compare-and-swap loops on the doubles' bits, so the free path
 * of a sampled object takes no lock here; reads are relaxed. Cost on a sampled free: one
 * clock reading and two uncontended CAS.
 *
 * The clock: on x86-64 with an invariant TSC (CPUID 0x80000007, EDX bit 8) a reading is
 * the TSC itself, which touches no memory; clock_gettime reads the vDSO's data page,
 * which a program that fills its caches between samples has evicted (a sampled malloc
 * and its free read the clock once each: 0.4 to 0.8 us of a cold sampled pair,
 * bench/history/2026-11-25.md, notes of 18:30). Ticks become nanoseconds only to pick a
 * lifetime's bucket, at a rate measured against CLOCK_MONOTONIC since hs_lifetimes_init:
 * each conversion in the first 100 ms measures it again (one clock_gettime, as every
 * reading cost before), the first one after fixes it. Elsewhere a reading is
 * CLOCK_MONOTONIC in nanoseconds.
 */
#include "lifetimes.h"
#include "base/monoclock.h"
#include "runtime/core.h"

#include <errno.h>
#include <string.h>
#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>

const int64_t hs_life_bound[HS_LIFE_BUCKETS] = {
    1000ll,      10000ll,      100000ll,      1000000ll,      10000000ll,
    100000000ll, 1000000000ll, 10000000000ll, 100000000000ll, INT64_MAX,
};

static hs_life_t *life_tab;
static uint32_t life_cap;
static int64_t life_epoch; /* objects allocated before this are not counted */

/* Times come from hs_mono_ns, CLOCK_MONOTONIC rather than _COARSE: the coarse clock ticks
 * every 1-4 ms, which would put every lifetime under a millisecond into 0 or one tick and
 * blur the first buckets. */

#define LIFE_CALIBRATE_NS 100000000 /* after this long, ns per tick stops being measured */

static bool life_tsc;                 /* readings are TSC ticks (set once, by init) */
static int64_t life_tsc0, life_mono0; /* a TSC reading and CLOCK_MONOTONIC together */
static uint64_t life_ns_per_tick;     /* the bits of a double; 0 until fixed */

static int64_t life_read_tsc(void)
{
#if defined(__x86_64__)
    return (int64_t)__rdtsc();
#else
    return 0;
#endif
}

/* Invariant TSC: constant rate in every P-, C- and T-state (CPUID 0x80000007, EDX bit 8). */
static bool life_tsc_invariant(void)
{
#if defined(__x86_64__)
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)) != 0;
#else
    return false;
#endif
}

/* A TSC reading and CLOCK_MONOTONIC taken together: the TSC read on both sides of
 * clock_gettime, its midpoint paired with it; of up to 8 tries, the narrowest. A thread
 * preempted between the two reads (a loaded machine) would pair them milliseconds apart:
 * one such pair in the 100 ms calibration put the rate 1.1% off. */
#define LIFE_PAIR_TIGHT 20000 /* ticks: about 10 us, no preemption in between */
static void life_pair(int64_t *tsc, int64_t *mono)
{
    int64_t best = INT64_MAX;
    for (int i = 0; i < 8 && best > LIFE_PAIR_TIGHT; i++) {
        int64_t a = life_read_tsc();
        int64_t m = hs_mono_ns();
        int64_t b = life_read_tsc();
        if (b - a < best) {
            best = b - a;
            *tsc = a + (b - a) / 2;
            *mono = m;
        }
    }
}

/* Chooses the clock and takes the calibration's starting pair. Not the TSC when the
 * program made rdtsc fault (prctl PR_SET_TSC). */
static void life_clock_init(void)
{
    int tsc_mode = PR_TSC_ENABLE;
    if (!life_tsc_invariant() || prctl(PR_GET_TSC, &tsc_mode) != 0 || tsc_mode != PR_TSC_ENABLE)
        return;
    life_pair(&life_tsc0, &life_mono0);
    life_tsc = true;
}

int64_t hs_lifetime_now(void)
{
    return life_tsc ? life_read_tsc() : hs_mono_ns();
}

/* Nanoseconds per tick: the fixed figure, or one measured now (and fixed when the span
 * is long enough). A span too short to measure (a few ticks) counts 1 ns per tick. */
static double life_scale(void)
{
    uint64_t bits = __atomic_load_n(&life_ns_per_tick, __ATOMIC_RELAXED);
    double scale;
    if (bits != 0) {
        memcpy(&scale, &bits, sizeof(scale));
        return scale;
    }
    int64_t tsc = 0, mono = 0;
    life_pair(&tsc, &mono);
    int64_t ns = mono - life_mono0, ticks = tsc - life_tsc0;
    if (ns <= 0 || ticks <= 0)
        return 1.0;
    scale = (double)ns / (double)ticks;
    if (ns >= LIFE_CALIBRATE_NS) {
        memcpy(&bits, &scale, sizeof(bits));
        __atomic_store_n(&life_ns_per_tick, bits, __ATOMIC_RELAXED);
    }
    return scale;
}

int64_t hs_lifetime_ns(int64_t ticks)
{
    if (!life_tsc || ticks <= 0)
        return ticks;
    return (int64_t)((double)ticks * life_scale());
}

int hs_lifetimes_init(uint32_t max_stacks)
{
    size_t bytes = (size_t)(max_stacks ? max_stacks : 1) * sizeof(hs_life_t);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    life_tab = p;
    life_clock_init();
    __atomic_store_n(&life_cap, max_stacks, __ATOMIC_RELEASE);
    return 0;
}

int hs_lifetime_bucket(int64_t ns)
{
    int b = 0;
    while (b < HS_LIFE_BUCKETS - 1 && ns >= hs_life_bound[b])
        b++;
    return b;
}

void hs_lifetimes_freed(const hs_live_t *e)
{
    uint32_t cap = __atomic_load_n(&life_cap, __ATOMIC_ACQUIRE);
    if (e->stack_id < 0 || (uint32_t)e->stack_id >= cap ||
        e->t < __atomic_load_n(&life_epoch, __ATOMIC_RELAXED))
        return;
    int b = hs_lifetime_bucket(hs_lifetime_ns(hs_lifetime_now() - e->t));
    hs_atomic_add_double(&life_tab[e->stack_id][b][0], e->weight);
    hs_atomic_add_double(&life_tab[e->stack_id][b][1], e->weight * (double)e->size);
}

void hs_lifetimes_read(hs_life_t *out, uint32_t n)
{
    uint32_t cap = __atomic_load_n(&life_cap, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++)
        for (int b = 0; b < HS_LIFE_BUCKETS; b++)
            for (int k = 0; k < 2; k++) {
                uint64_t bits =
                    i < cap ? __atomic_load_n((uint64_t *)&life_tab[i][b][k], __ATOMIC_RELAXED) : 0;
                memcpy(&out[i][b][k], &bits, sizeof(double));
            }
}

/* MADV_DONTNEED zeroes the table and gives its pages back. An object allocated between
 * the epoch and the clearing of the stack table's counts is counted freed without its
 * allocation: the dump's split absorbs it (dump.c). */
void hs_lifetimes_reset(void)
{
    uint32_t cap = __atomic_load_n(&life_cap, __ATOMIC_ACQUIRE);
    __atomic_store_n(&life_epoch, hs_lifetime_now(), __ATOMIC_RELAXED);
    if (cap)
        madvise(life_tab, (size_t)cap * sizeof(hs_life_t), MADV_DONTNEED);
}

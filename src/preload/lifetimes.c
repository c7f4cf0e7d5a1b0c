/*
 * Lifetimes of sampled objects, per stack and lifetime bucket (see lifetimes.h). The
 * table is one MAP_NORESERVE mapping of max_stacks * 10 * 2 doubles (pages are only
 * backed once a stack of theirs frees a sample: 160 bytes per stack used). Updates are
 * compare-and-swap loops on the doubles' bits, so the free path of a sampled object takes
 * no lock here; reads are relaxed. Cost on a sampled free: one clock_gettime (vDSO,
 * ~20 ns) and two uncontended CAS.
 */
#include "lifetimes.h"
#include "core.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

const int64_t hs_life_bound[HS_LIFE_BUCKETS] = {
    1000ll,      10000ll,      100000ll,      1000000ll,      10000000ll,
    100000000ll, 1000000000ll, 10000000000ll, 100000000000ll, INT64_MAX,
};

static hs_life_t *life_tab;
static uint32_t life_cap;
static int64_t life_epoch; /* objects allocated before this are not counted */

int hs_lifetimes_init(uint32_t max_stacks)
{
    size_t bytes = (size_t)(max_stacks ? max_stacks : 1) * sizeof(hs_life_t);
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED)
        return -ENOMEM;
    life_tab = p;
    __atomic_store_n(&life_cap, max_stacks, __ATOMIC_RELEASE);
    return 0;
}

/* CLOCK_MONOTONIC rather than _COARSE: the coarse clock ticks every 1-4 ms, which would
 * put every lifetime under a millisecond into 0 or one tick and blur the first buckets. */
int64_t hs_lifetime_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
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
        e->t_ns < __atomic_load_n(&life_epoch, __ATOMIC_RELAXED))
        return;
    int b = hs_lifetime_bucket(hs_lifetime_now() - e->t_ns);
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

/*
 * The live filter's counters and its growth (livefilter.h). The first filter is static
 * (8 KiB of bits, 64 KiB of counters, untouched pages cost nothing); each growth maps a
 * filter at least twice the size, counts every live address into it before publishing it,
 * and keeps the replaced one's bits mapped for frees still reading them.
 *
 * Why a replaced filter stays correct for a free that loaded its pointer: its bits are
 * never cleared after the replacement, so an address marked in it stays marked (a stale
 * set bit only sends a free to the locked path, where the table has the last word). An
 * address marked after the replacement was inserted under a shard lock that the grower
 * also held, so after the new pointer was stored; its free comes after its insert, and so
 * loads that pointer or a later one. Called under the live table's shard locks only.
 */
#include "livefilter.h"

#include <errno.h>
#include <sys/mman.h>

static uint8_t filter0_counts[1u << HS_FILTER_MIN_LOG2];
static hs_filter_t filter0 = {
    .counts = filter0_counts,
    .nbits = 1u << HS_FILTER_MIN_LOG2,
    .words = {[0] = 1u, [(1u << HS_FILTER_MIN_LOG2) / 32 - 1] = 0}, /* counter 0 pinned */
};

uint32_t *hs_filter_words = filter0.words;

static size_t filter_bytes = sizeof(filter0_counts) + (1u << HS_FILTER_MIN_LOG2) / 8;

/* The filter being filled by hs_filter_grow (every shard lock held). */
static hs_filter_t *filter_next;

static void filter_inc_in(hs_filter_t *f, uintptr_t p)
{
    size_t i = hs_filter_index_in(f, p);
    if (i == 0)
        return; /* pinned: its bit is always set */
    uint8_t v = f->counts[i];
    if (v == 0)
        __atomic_fetch_or(&f->words[i / 32], 1u << (i % 32), __ATOMIC_RELAXED);
    if (v != 255)
        f->counts[i] = (uint8_t)(v + 1);
}

void hs_filter_inc(uintptr_t p)
{
    filter_inc_in(hs_filter_current(), p);
}

/* Saturated counters are never decremented: their true count is unknown. Nor is the
 * pinned counter 0. */
void hs_filter_dec(uintptr_t p)
{
    hs_filter_t *f = hs_filter_current();
    size_t i = hs_filter_index_in(f, p);
    uint8_t v = f->counts[i];
    if (i != 0 && v != 0 && v != 255) {
        f->counts[i] = (uint8_t)(v - 1);
        if (v == 1)
            __atomic_fetch_and(&f->words[i / 32], ~(1u << (i % 32)), __ATOMIC_RELAXED);
    }
}

bool hs_filter_wants_growth(uint32_t count)
{
    uint64_t nbits = hs_filter_current()->nbits;
    return nbits < (1ull << HS_FILTER_MAX_LOG2) &&
           ((uint64_t)count << (HS_FILTER_SHARD_BITS + 5)) > nbits;
}

static void filter_mark_next(uintptr_t p)
{
    filter_inc_in(filter_next, p);
}

/* Sized for 64 counters per live entry, so that it takes doubling the live set again
 * before some shard asks for more. */
static unsigned filter_log2_for(uint64_t live, uint64_t nbits)
{
    unsigned l = HS_FILTER_MIN_LOG2;
    while ((1ull << l) <= nbits)
        l++;
    while (l < HS_FILTER_MAX_LOG2 && (live << 6) > (1ull << l))
        l++;
    return l;
}

int hs_filter_grow(uint64_t live, void (*each)(void (*mark)(uintptr_t p)))
{
    hs_filter_t *old = hs_filter_current();
    if (old->nbits >= (1ull << HS_FILTER_MAX_LOG2))
        return 0;
    uint64_t nbits = 1ull << filter_log2_for(live, old->nbits);
    size_t head = sizeof(hs_filter_t) + nbits / 8;
    void *m = mmap(NULL, head, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    void *c = mmap(NULL, nbits, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED || c == MAP_FAILED) {
        if (m != MAP_FAILED)
            munmap(m, head);
        if (c != MAP_FAILED)
            munmap(c, nbits);
        return -ENOMEM;
    }
    filter_next = m;
    filter_next->nbits = nbits;
    filter_next->counts = c;
    filter_next->words[0] = 1u; /* counter 0 pinned, before anyone can read this filter */
    each(filter_mark_next);
    filter_next = NULL;
    /* The counters of the old filter are never read again (every reader of them holds a
     * shard lock and will find the new pointer); its bits are. */
    size_t bytes = __atomic_load_n(&filter_bytes, __ATOMIC_RELAXED) + head + nbits;
    if (old != &filter0) {
        munmap(old->counts, old->nbits);
        bytes -= old->nbits;
    }
    __atomic_store_n(&filter_bytes, bytes, __ATOMIC_RELAXED);
    __atomic_store_n(&hs_filter_words, ((hs_filter_t *)m)->words, __ATOMIC_RELEASE);
    return 0;
}

size_t hs_filter_mem(void)
{
    return __atomic_load_n(&filter_bytes, __ATOMIC_RELAXED);
}

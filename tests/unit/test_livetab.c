/*
 * Unit test of the live table and its counting filter (src/preload/record/livetab.c,
 * livefilter.c): insert, remove and aggregate; a bootstrap-like mark kept across the
 * filter's growth; 8 threads on disjoint addresses, each checking its earlier entries while
 * the others' inserts replace the filter; 1,000,000 inserts (growing every shard and the
 * filter many times) then removes, with the filter never saying "no" for a present
 * address, "maybe" for under 1/16 of absent ones, and every counter back to zero at the
 * end; removes in an order that exercises backward-shift deletion; and the filter's
 * saturation at 255 (run last: it is sticky).
 */
#include "record/livetab.h"

#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Address number i: 16-aligned, spread like heap addresses of mixed sizes. */
static uintptr_t addr_of(uint64_t i)
{
    return 0x10000000ull + i * 48 + (i % 7) * 16 * 1024 * 1024;
}

/* Counters set, leaving out counter 0, which is pinned: its bit set, its count unused. */
static size_t filter_nonzero(void)
{
    const hs_filter_t *f = hs_filter_current();
    size_t n = 0;

    CHECK((f->words[0] & 1) && f->counts[0] == 0, "counter 0 not pinned (count %u)", f->counts[0]);
    CHECK(hs_livetab_maybe(NULL), "NULL not sent to the slow path");
    for (size_t i = 1; i < f->nbits; i++) {
        bool bit = (f->words[i / 32] >> (i % 32)) & 1;
        CHECK(bit == (f->counts[i] != 0), "slot %zu: bit %d, counter %u", i, bit, f->counts[i]);
        n += f->counts[i] != 0;
    }
    return n;
}

static void test_basic(void)
{
    hs_live_t e = {.addr = 0x7f0000001000, .size = 100, .weight = 2.5, .stack_id = 1};
    hs_live_t f = {.addr = 0x7f0000002000, .size = 10, .weight = 1.0, .stack_id = 3};
    hs_live_t g = {.addr = 0x7f0000003000, .size = 7, .weight = 4.0, .stack_id = 9};
    hs_live_t out;
    double obj[4] = {0}, bytes[4] = {0};
    hs_live_totals_t t;

    CHECK(!hs_livetab_maybe((void *)e.addr), "filter set before insert");
    CHECK(hs_livetab_insert(&e) == 0 && hs_livetab_insert(&f) == 0 && hs_livetab_insert(&g) == 0,
          "insert");
    CHECK(hs_livetab_maybe((void *)e.addr) && hs_livetab_maybe((void *)f.addr), "filter");
    CHECK(hs_livetab_count() == 3, "count %lu", (unsigned long)hs_livetab_count());

    hs_livetab_aggregate(obj, bytes, 4, &t);
    CHECK(obj[1] == 2.5 && bytes[1] == 250 && obj[3] == 1 && bytes[3] == 10, "per stack");
    CHECK(obj[0] == 0 && obj[2] == 0, "other stacks touched");
    CHECK(t.samples == 3 && t.objects == 7.5 && t.bytes == 288, "totals %lu %g %g",
          (unsigned long)t.samples, t.objects, t.bytes);

    e.size = 200; /* re-inserting a present address replaces it */
    CHECK(hs_livetab_insert(&e) == 0 && hs_livetab_count() == 3, "replace");
    CHECK(hs_livetab_remove(e.addr, &out) && out.size == 200 && out.weight == 2.5 &&
              out.stack_id == 1,
          "remove e");
    CHECK(!hs_livetab_remove(e.addr, &out), "removed twice");
    CHECK(!hs_livetab_remove(0x7f0000004000, &out), "removed an absent address");
    CHECK(hs_livetab_remove(f.addr, NULL) && hs_livetab_remove(g.addr, &out), "remove f, g");
    CHECK(hs_livetab_count() == 0, "count %lu", (unsigned long)hs_livetab_count());
    CHECK(filter_nonzero() == 0, "filter not clear");
}

static void test_million(void)
{
    enum { N = 1000000 };
    size_t fails = 0;
    hs_live_totals_t t;

    for (uint64_t i = 0; i < N; i++) {
        hs_live_t e = {.addr = addr_of(i), .size = i % 1000, .weight = 1, .stack_id = 0};
        if (hs_livetab_insert(&e) != 0 || !hs_livetab_maybe((void *)e.addr))
            fails++;
    }
    CHECK(fails == 0, "%zu inserts failed", fails);
    CHECK(hs_livetab_count() == N, "count %lu", (unsigned long)hs_livetab_count());
    /* The tables' mmap'd bytes: whole pages, at least the entries, at most 70% full. */
    size_t mem = hs_livetab_mem(), page = (size_t)sysconf(_SC_PAGESIZE);
    CHECK(mem % page == 0 && mem >= N * sizeof(hs_live_t) * 10 / 7, "mem %zu", mem);
    for (uint64_t i = 0; i < N; i++)
        fails += !hs_livetab_maybe((void *)addr_of(i));
    CHECK(fails == 0, "filter said no for %zu present addresses", fails);
    /* The filter grew with the table: a 2^16-bit one would say "maybe" to almost every
     * address here; at 32 counters or more per entry, to at most 1 - e^-(1/32), 3.1%. */
    CHECK(hs_filter_current()->nbits >= (1u << 24), "filter of %lu bits for %d entries",
          (unsigned long)hs_filter_current()->nbits, N);
    size_t maybes = 0;
    for (uint64_t i = 0; i < N; i++)
        maybes += hs_livetab_maybe((void *)(addr_of(i) + 8));
    CHECK(maybes < N / 20, "filter said maybe for %zu of %d absent addresses", maybes, N);
    hs_livetab_aggregate(NULL, NULL, 0, &t);
    CHECK(t.samples == N && t.objects == N, "totals %lu %g", (unsigned long)t.samples, t.objects);

    /* Remove the odd ones first (holes in the middle of runs), then the rest backwards;
     * every remaining entry must stay reachable. */
    for (int pass = 0; pass < 2; pass++) {
        for (uint64_t k = 0; k < N; k++) {
            uint64_t i = pass == 0 ? k : N - 1 - k;
            hs_live_t out;
            if ((i & 1) != (uint64_t)(pass == 0))
                continue;
            if (!hs_livetab_remove(addr_of(i), &out) || out.addr != addr_of(i) ||
                out.size != i % 1000)
                fails++;
        }
        CHECK(fails == 0, "pass %d: %zu removes failed", pass, fails);
        CHECK(hs_livetab_count() == (pass == 0 ? N / 2 : 0), "pass %d: count %lu", pass,
              (unsigned long)hs_livetab_count());
    }
    CHECK(filter_nonzero() == 0, "%zu filter counters not zero", filter_nonzero());
}

/* ---- 8 threads, disjoint addresses -------------------------------------------------- */

enum { NTHREADS = 8, PER_THREAD = 100000 };

static void *thread_main(void *arg)
{
    uint64_t t = (uint64_t)(uintptr_t)arg;
    uint64_t base = t * PER_THREAD;
    size_t bad = 0;

    /* Insert all, remove every third, re-insert and remove half of those: what stays is
     * exactly the entries with i % 3 != 0. */
    for (uint64_t i = 0; i < PER_THREAD; i++) {
        hs_live_t e = {.addr = addr_of(base + i), .size = 8, .weight = 1, .stack_id = (int)t};
        bad += hs_livetab_insert(&e) != 0;
        /* While other threads' inserts replace the filter: an earlier entry of this
         * thread must never read as absent. */
        bad += i > 0 && !hs_livetab_maybe((void *)addr_of(base + (i * 7919) % i));
    }
    for (uint64_t i = 0; i < PER_THREAD; i += 3)
        bad += !hs_livetab_remove(addr_of(base + i), NULL);
    for (uint64_t i = 0; i < PER_THREAD; i += 6) {
        hs_live_t e = {.addr = addr_of(base + i), .size = 8, .weight = 1, .stack_id = (int)t};
        bad += hs_livetab_insert(&e) != 0;
        bad += !hs_livetab_remove(e.addr, NULL);
    }
    for (uint64_t i = 0; i < PER_THREAD; i++)
        bad += (i % 3 != 0) && !hs_livetab_maybe((void *)addr_of(base + i));
    return (void *)(uintptr_t)bad;
}

static void test_threads(void)
{
    pthread_t th[NTHREADS];
    double obj[NTHREADS] = {0}, bytes[NTHREADS] = {0};
    uint64_t per = PER_THREAD - (PER_THREAD + 2) / 3;
    hs_live_totals_t t;
    size_t bad = 0;

    for (uintptr_t i = 0; i < NTHREADS; i++)
        pthread_create(&th[i], NULL, thread_main, (void *)i);
    for (int i = 0; i < NTHREADS; i++) {
        void *r;
        pthread_join(th[i], &r);
        bad += (size_t)(uintptr_t)r;
    }
    CHECK(bad == 0, "%zu operations failed in threads", bad);
    CHECK(hs_livetab_count() == per * NTHREADS, "count %lu, want %lu",
          (unsigned long)hs_livetab_count(), (unsigned long)(per * NTHREADS));
    hs_livetab_aggregate(obj, bytes, NTHREADS, &t);
    for (int i = 0; i < NTHREADS; i++)
        CHECK(obj[i] == (double)per && bytes[i] == 8.0 * per, "thread %d: %g objects", i, obj[i]);
    CHECK(t.samples == per * NTHREADS, "totals %lu", (unsigned long)t.samples);
    for (uint64_t i = 0; i < (uint64_t)NTHREADS * PER_THREAD; i++)
        if (i % PER_THREAD % 3 != 0)
            bad += !hs_livetab_remove(addr_of(i), NULL);
    CHECK(bad == 0 && hs_livetab_count() == 0, "cleanup: %zu failed", bad);
    CHECK(filter_nonzero() == 0, "%zu filter counters not zero", filter_nonzero());
}

/* A mark outside the table (a bootstrap block) survives the filter's growth and leaves
 * with its unmark. */
static void test_pins_grow(void)
{
    enum { N = 200000 };
    uintptr_t pin = 0x7e0000000010;
    size_t bad = 0;

    hs_filter_mark(pin);
    uint64_t before = hs_filter_current()->nbits;
    for (uint64_t i = 0; i < N; i++) {
        hs_live_t e = {.addr = addr_of(i), .size = 1, .weight = 1, .stack_id = 0};
        bad += hs_livetab_insert(&e) != 0;
    }
    CHECK(hs_filter_current()->nbits > before, "the filter did not grow (%lu bits)",
          (unsigned long)before);
    CHECK(hs_livetab_maybe((void *)pin), "the mark was lost when the filter grew");
    for (uint64_t i = 0; i < N; i++)
        bad += !hs_livetab_remove(addr_of(i), NULL);
    CHECK(bad == 0, "%zu inserts or removes failed", bad);
    CHECK(filter_nonzero() == 1, "%zu counters set with only the mark", filter_nonzero());
    hs_filter_unmark(pin);
    CHECK(filter_nonzero() == 0, "%zu counters set after the unmark", filter_nonzero());
}

/* An address whose low 32 bits are zero hashes to the pinned counter 0, as NULL does:
 * inserted and removed like any other, its bit stays set, and the table has the word. */
static void test_pinned(void)
{
    hs_live_t e = {.addr = 0x7f0100000000, .size = 64, .weight = 1.0, .stack_id = 2};
    hs_live_t out;

    CHECK(hs_filter_index_in(hs_filter_current(), e.addr) == 0, "not counter 0's address");
    CHECK(hs_livetab_insert(&e) == 0, "insert");
    CHECK(hs_livetab_maybe((void *)e.addr) && filter_nonzero() == 0, "pinned counter counted");
    CHECK(hs_livetab_remove(e.addr, &out) && out.size == 64, "remove");
    CHECK(!hs_livetab_remove(e.addr, &out), "removed twice");
    CHECK(hs_livetab_maybe((void *)e.addr) && hs_livetab_maybe(NULL), "pinned bit cleared");
    CHECK(filter_nonzero() == 0, "%zu counters set", filter_nonzero());
}

static void test_lock_all(void)
{
    hs_live_t e = {.addr = 0x5000, .size = 1, .weight = 1, .stack_id = 0};

    hs_livetab_lock_all();
    hs_livetab_unlock_all();
    CHECK(hs_livetab_insert(&e) == 0 && hs_livetab_remove(e.addr, NULL), "after lock_all");
}

static void test_saturation(void)
{
    uintptr_t p = 0x123450;
    const hs_filter_t *f = hs_filter_current();
    const uint8_t *count = &f->counts[hs_filter_index_in(f, p)];

    for (int i = 0; i < 300; i++)
        hs_filter_mark(p);
    CHECK(*count == 255, "counter %u after 300 marks", *count);
    CHECK(hs_livetab_maybe((void *)p), "saturated counter, bit clear");
    for (int i = 0; i < 300; i++)
        hs_filter_unmark(p);
    CHECK(*count == 255, "saturated counter went down to %u", *count);
    hs_filter_mark(p + 16 * 7919);
    hs_filter_unmark(p + 16 * 7919);
    CHECK(filter_nonzero() == 1, "%zu counters set", filter_nonzero());
}

int main(void)
{
    test_basic();
    test_pinned();
    test_pins_grow();
    test_threads();
    test_million();
    test_lock_all();
    test_saturation();
    return hs_check_done("test_livetab");
}

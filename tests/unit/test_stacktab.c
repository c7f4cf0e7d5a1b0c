/*
 * Unit test of the stack table (src/preload/record/stacktab.c): interning gives one id per
 * distinct stack, dense from 0 (the same PCs under another label set are another
 * stack); counters accumulate and clear; a full table or a full PC arena drops samples
 * and counts them; many stacks survive hash collisions; and 8 threads interning
 * overlapping stacks agree on ids and totals.
 */
#include "record/stacktab.h"

#include "check.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Deterministic pseudo-random stack number k: depth 1..40, PCs that look like text. */
static uint32_t make_stack(uint32_t k, uintptr_t *pcs)
{
    uint64_t x = k * 0x9E3779B97F4A7C15ull + 1;
    uint32_t depth = 1 + k % 40;

    for (uint32_t i = 0; i < depth; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        pcs[i] = 0x400000 + (x & 0xfffff);
    }
    return depth;
}

static void test_basic(void)
{
    uintptr_t a[3] = {0x1000, 0x2000, 0x3000};
    uintptr_t b[3] = {0x1000, 0x2000, 0x3001};
    hs_stack_t s;
    int32_t ia, ib, ip, ie;

    CHECK(hs_stacktab_init(100) == 0, "init");
    ia = hs_stacktab_record(a, 3, 1.5, 10);
    CHECK(ia == 0, "first id is %d", ia);
    CHECK(hs_stacktab_record(a, 3, 2.5, 20) == ia, "same stack, other id");
    ib = hs_stacktab_record(b, 3, 1, 1);
    ip = hs_stacktab_record(a, 2, 1, 1); /* a prefix is another stack */
    ie = hs_stacktab_record(a, 0, 1, 1); /* so is the empty one */
    CHECK(ib == 1 && ip == 2 && ie == 3, "ids %d %d %d not dense", ib, ip, ie);
    CHECK(hs_stacktab_record(a, 0, 1, 1) == ie, "empty stack not interned");
    CHECK(hs_stacktab_count() == 4, "count %u", hs_stacktab_count());
    CHECK(hs_stacktab_dropped() == 0, "dropped %lu", (unsigned long)hs_stacktab_dropped());

    CHECK(hs_stacktab_get(ia, &s), "get");
    CHECK(s.depth == 3 && memcmp(s.pcs, a, sizeof(a)) == 0, "pcs differ");
    CHECK(s.alloc_objects == 4.0 && s.alloc_bytes == 30.0, "counts %g %g", s.alloc_objects,
          s.alloc_bytes);
    CHECK(hs_stacktab_get(ip, &s) && s.depth == 2 && s.pcs[1] == 0x2000, "prefix entry");
    CHECK(!hs_stacktab_get(-1, &s) && !hs_stacktab_get(4, &s), "bad id accepted");

    hs_stacktab_clear_counts();
    CHECK(hs_stacktab_get(ia, &s) && s.alloc_objects == 0 && s.alloc_bytes == 0, "clear");
    CHECK(hs_stacktab_count() == 4, "clear dropped stacks");
    CHECK(hs_stacktab_record(a, 3, 1, 8) == ia, "id changed after clear");
}

static void test_overflow(void)
{
    uintptr_t pcs[64];
    hs_stack_t s;

    /* Entry capacity: 4 stacks. */
    CHECK(hs_stacktab_init(4) == 0, "init(4)");
    for (uint32_t k = 0; k < 4; k++) {
        uint32_t d = make_stack(k, pcs);
        CHECK(hs_stacktab_record(pcs, d, 1, 1) == (int32_t)k, "stack %u", k);
    }
    for (uint32_t k = 4; k < 10; k++) {
        uint32_t d = make_stack(k, pcs);
        CHECK(hs_stacktab_record(pcs, d, 1, 1) == -1, "stack %u fit a full table", k);
    }
    CHECK(hs_stacktab_dropped() == 6, "dropped %lu", (unsigned long)hs_stacktab_dropped());
    CHECK(hs_stacktab_record(pcs, make_stack(2, pcs), 1, 1) == 2, "known stack when full");
    CHECK(hs_stacktab_get(2, &s) && s.alloc_objects == 2, "counts when full");

    /* PC arena: 2 stacks * 32 PCs = 64 PCs. */
    CHECK(hs_stacktab_init(2) == 0, "init(2)");
    for (uint32_t i = 0; i < 64; i++)
        pcs[i] = 0x5000 + i;
    CHECK(hs_stacktab_record(pcs, 60, 1, 1) == 0, "deep stack");
    CHECK(hs_stacktab_record(pcs + 1, 10, 1, 1) == -1, "arena overflow accepted");
    CHECK(hs_stacktab_record(pcs + 2, 4, 1, 1) == 1, "small stack after a refusal");
    CHECK(hs_stacktab_dropped() == 1, "dropped %lu", (unsigned long)hs_stacktab_dropped());

    CHECK(hs_stacktab_init(0) == 0, "init(0)");
    CHECK(hs_stacktab_record(pcs, 1, 1, 1) == -1 && hs_stacktab_dropped() == 1, "init(0)");
}

static void test_many(void)
{
    enum { N = 50000 };
    uintptr_t pcs[64];

    CHECK(hs_stacktab_init(N) == 0, "init(%d)", N);
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t k = 0; k < N; k++) {
            uint32_t d = make_stack(k, pcs);
            int32_t id = hs_stacktab_record(pcs, d, 1, d);
            if (id != (int32_t)k) {
                CHECK(0, "pass %d: stack %u got id %d", pass, k, id);
                return;
            }
        }
    }
    CHECK(hs_stacktab_count() == N, "count %u", hs_stacktab_count());
    for (uint32_t k = 0; k < N; k += 997) {
        hs_stack_t s;
        uint32_t d = make_stack(k, pcs);
        CHECK(hs_stacktab_get((int32_t)k, &s) && s.depth == d &&
                  memcmp(s.pcs, pcs, d * sizeof(*pcs)) == 0 && s.alloc_objects == 2 &&
                  s.alloc_bytes == 2.0 * d,
              "stack %u entry", k);
    }
}

/* ---- 8 threads over 1000 shared stacks --------------------------------------------- */

enum { NTHREADS = 8, NSTACKS = 1000, ROUNDS = 50000 };

static int32_t seen[NTHREADS][NSTACKS];

static void *thread_main(void *arg)
{
    uint32_t t = (uint32_t)(uintptr_t)arg;
    uintptr_t pcs[64];

    for (uint32_t i = 0; i < ROUNDS; i++) {
        uint32_t k = (i * 7 + t * 131) % NSTACKS;
        uint32_t d = make_stack(k, pcs);
        int32_t id = hs_stacktab_record(pcs, d, 1, k);
        if (id < 0 || (seen[t][k] >= 0 && seen[t][k] != id)) {
            seen[t][k] = -2;
            break;
        }
        seen[t][k] = id;
    }
    return NULL;
}

static void test_threads(void)
{
    pthread_t th[NTHREADS];
    double objects = 0, bytes = 0, want_bytes = 0;
    char *used = calloc(NSTACKS, 1);

    CHECK(hs_stacktab_init(NSTACKS) == 0, "init");
    memset(seen, 0xff, sizeof(seen));
    for (uintptr_t t = 0; t < NTHREADS; t++)
        pthread_create(&th[t], NULL, thread_main, (void *)t);
    for (int t = 0; t < NTHREADS; t++)
        pthread_join(th[t], NULL);

    CHECK(hs_stacktab_count() == NSTACKS, "count %u", hs_stacktab_count());
    CHECK(hs_stacktab_dropped() == 0, "dropped %lu", (unsigned long)hs_stacktab_dropped());
    for (uint32_t k = 0; k < NSTACKS; k++) {
        int32_t id = seen[0][k];
        hs_stack_t s;
        uintptr_t pcs[64];
        uint32_t d = make_stack(k, pcs);

        for (int t = 1; t < NTHREADS; t++)
            CHECK(seen[t][k] == id, "stack %u: thread %d saw id %d, thread 0 %d", k, t, seen[t][k],
                  id);
        CHECK(id >= 0 && id < NSTACKS && !used[id], "stack %u: id %d", k, id);
        if (id < 0 || id >= NSTACKS)
            continue;
        used[id] = 1;
        CHECK(hs_stacktab_get(id, &s) && s.depth == d && memcmp(s.pcs, pcs, d * sizeof(*pcs)) == 0,
              "stack %u: wrong PCs under id %d", k, id);
        CHECK(s.alloc_objects == (double)NTHREADS * ROUNDS / NSTACKS, "stack %u: %g objects", k,
              s.alloc_objects);
        objects += s.alloc_objects;
        bytes += s.alloc_bytes;
        want_bytes += s.alloc_objects * k;
    }
    CHECK(objects == (double)NTHREADS * ROUNDS, "objects %g", objects);
    CHECK(bytes == want_bytes, "bytes %g, want %g", bytes, want_bytes);
    free(used);
}

/* The label set is part of the key: same PCs, other labels, other entry. */
static void test_labels(void)
{
    uintptr_t a[2] = {0x1000, 0x2000};
    uint32_t mask;
    hs_stack_t s;

    CHECK(hs_stacktab_init(16) == 0, "init");
    int32_t plain = hs_stacktab_record(a, 2, 1, 10);
    int32_t l1 = hs_stacktab_record_labeled(a, 2, 1, 2, 20, &mask);
    int32_t l2 = hs_stacktab_record_labeled(a, 2, 2, 3, 30, &mask);
    CHECK(plain == 0 && l1 == 1 && l2 == 2, "ids %d %d %d", plain, l1, l2);
    CHECK(hs_stacktab_record_labeled(a, 2, 1, 1, 1, &mask) == l1 && mask == 0, "label 1 again");
    CHECK(hs_stacktab_record_labeled(a, 2, 0, 1, 1, &mask) == plain, "label 0 is no label");
    CHECK(hs_stacktab_get(l2, &s) && s.labels == 2 && s.alloc_bytes == 30, "entry of label 2");
    CHECK(hs_stacktab_get(l1, &s) && s.labels == 1 && s.alloc_objects == 3, "entry of label 1");
}

int main(void)
{
    test_basic();
    test_labels();
    test_overflow();
    test_many();
    test_threads();
    return hs_check_done("test_stacktab");
}

/*
 * Unit test of the slow free and realloc paths (src/preload/record/slowpath.c) against the live
 * table: a free or realloc of the program's takes the block's entry out; one inside the
 * guard (the profiler's own, whose filter bit can only be a false positive) leaves the
 * table alone, even with a lock ranked above its shards held, as the symbol cache frees
 * its old table under its lock. In the builds with debug checks, asking the table there
 * aborts on the rank order (a sanitizer CI run caught it, one run in 20 of a Rust
 * program at rate 1).
 */
#include "runtime/core.h"
#include "runtime/debugcheck.h"
#include "record/livetab.h"
#include "record/slowpath.h"

#include "check.h"

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

static hs_live_t entry_of(const void *p, size_t n)
{
    hs_live_t e = {.addr = (uintptr_t)p, .size = n, .weight = 1.0, .stack_id = -1};
    return e;
}

static void test_guarded(void)
{
    static pthread_mutex_t above = PTHREAD_MUTEX_INITIALIZER;
    void *p = malloc(64), *q = malloc(64);
    hs_live_t e = entry_of(p, 64), f = entry_of(q, 64);

    CHECK(p && q && hs_livetab_insert(&e) == 0 && hs_livetab_insert(&f) == 0, "insert");
    hs_guard_enter(&hs_tls);
    hs_lock(&above, HS_RANK_SYMCACHE);
    hs_slow_free(p);
    void *q2 = hs_slow_realloc(q, 4096);
    hs_unlock(&above, HS_RANK_SYMCACHE);
    hs_guard_exit(&hs_tls);
    CHECK(q2 != NULL, "realloc under the guard failed");
    CHECK(hs_livetab_count() == 2, "the profiler's own free or realloc took an entry out: %lu left",
          (unsigned long)hs_livetab_count());
    CHECK(hs_livetab_remove(e.addr, NULL) && hs_livetab_remove(f.addr, NULL), "entries gone");
    free(q2);
}

static void test_program(void)
{
    void *p = malloc(64), *q = malloc(64);
    hs_live_t e = entry_of(p, 64), f = entry_of(q, 64);

    CHECK(p && q && hs_livetab_insert(&e) == 0 && hs_livetab_insert(&f) == 0, "insert");
    hs_slow_free(p);
    void *q2 = hs_slow_realloc(q, 4096);
    CHECK(q2 != NULL, "realloc failed");
    CHECK(hs_livetab_count() == 0, "a program's free or realloc left %lu entries",
          (unsigned long)hs_livetab_count());
    free(q2);
}

int main(void)
{
    /* No allocation of the test's is sampled (a realloc with its countdown spent would
     * be, and its block would be a third entry). */
    hs_tls.countdown = INT64_MAX / 2;
    test_guarded();
    test_program();
    return hs_check_done("test_slowpath");
}

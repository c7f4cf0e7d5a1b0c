/*
 * Unit test of trackers (src/preload/record/trackers.c, tracker_resolve.c) on this executable's
 * own functions: resolution (a static function, an unknown name, bad arguments); live
 * samples taken before the registration are counted by its walk; a sample whose stack
 * was recorded before the registration but inserted after it catches up (the race the
 * re-read in hs_trackers_inserted closes); new stacks get the bit from the address
 * table; two trackers covering one stack; weights; frees take back exactly what was
 * added; the 32-tracker bound.
 */
#include "check.h"
#include "record/livetab.h"
#include "record/stacktab.h"
#include "record/trackers.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static volatile int sink;

/* Static, noinline, with a body of some size, so pc + 8 lies inside each. */
static __attribute__((noinline)) void trk_target(int n)
{
    for (int i = 0; i < n; i++)
        sink += i * 3;
}

static __attribute__((noinline)) void trk_other(int n)
{
    for (int i = 0; i < n; i++)
        sink += i * 5;
}

static uintptr_t in(void (*f)(int))
{
    return (uintptr_t)f + 8;
}

/* What the recorder does with a sample of stack pcs (recorder.c: record, then insert). */
static void sample(uintptr_t addr, const uintptr_t *pcs, uint32_t depth, uint64_t size, double w)
{
    uint32_t mask;
    int32_t id = hs_stacktab_record_labeled(pcs, depth, 0, w, w * (double)size, &mask);
    hs_live_t e = {.addr = addr, .size = size, .weight = w, .stack_id = id, .trackers = mask};
    CHECK(id >= 0 && hs_livetab_insert(&e) == 0, "insert %lx", (unsigned long)addr);
    hs_trackers_inserted(&e);
}

static void forget(uintptr_t addr)
{
    hs_live_t e;
    CHECK(hs_livetab_remove(addr, &e), "remove %lx", (unsigned long)addr);
    hs_trackers_removed(&e);
}

int main(void)
{
    hs_tracker_value_t v;
    uintptr_t s_target[2] = {in(trk_target), (uintptr_t)&main + 8};
    uintptr_t s_both[2] = {in(trk_other), in(trk_target)};
    uintptr_t s_other[1] = {in(trk_other)};
    uintptr_t s_late[2] = {in(trk_target) + 4, (uintptr_t)&main + 8};

    trk_target(3);
    trk_other(3);
    CHECK(hs_stacktab_init(1024) == 0);
    sample(0x10000, s_target, 2, 100, 1); /* live before the tracker exists */
    uint32_t late_mask;
    int32_t late = hs_stacktab_record_labeled(s_late, 2, 0, 1, 300, &late_mask);
    CHECK(late_mask == 0, "a mask before any tracker");

    CHECK(hs_trackers_new("", "trk_target") == -EINVAL, "empty name accepted");
    CHECK(hs_trackers_new("x", "") == -EINVAL, "empty function accepted");
    CHECK(hs_trackers_new("x", "no_such_function_here") == -ENOENT, "unknown function found");
    int t = hs_trackers_new("target", "trk_target");
    CHECK(t == 0, "first handle %d", t);
    CHECK(hs_trackers_bytes(t) == 100, "walk: %lld, want 100", (long long)hs_trackers_bytes(t));
    CHECK(hs_trackers_read(t, &v) && v.ranges >= 1 && v.samples == 1, "ranges %llu samples %llu",
          (unsigned long long)v.ranges, (unsigned long long)v.samples);

    /* Recorded before, inserted after the registration: caught up, once. */
    hs_live_t e = {.addr = 0x20000, .size = 300, .weight = 1, .stack_id = late};
    e.trackers = late_mask;
    CHECK(hs_livetab_insert(&e) == 0);
    hs_trackers_inserted(&e);
    CHECK(hs_trackers_bytes(t) == 400, "catch-up: %lld, want 400", (long long)hs_trackers_bytes(t));

    int o = hs_trackers_new("other", "trk_other");
    CHECK(o == 1, "second handle %d", o);
    sample(0x30000, s_both, 2, 1000, 2.5); /* new stack: both bits from the table */
    sample(0x40000, s_other, 1, 50, 1);
    CHECK(hs_trackers_bytes(t) == 2900, "target %lld, want 2900", (long long)hs_trackers_bytes(t));
    CHECK(hs_trackers_bytes(o) == 2550, "other %lld, want 2550", (long long)hs_trackers_bytes(o));
    CHECK(hs_trackers_read(o, &v) && fabs(v.objects - 3.5) < 1e-3, "objects %g", v.objects);
    CHECK(fabs(v.variance - 2500.0 * 1000 * 1.5) < 1, "variance %g", v.variance);

    forget(0x10000);
    forget(0x20000);
    forget(0x30000);
    CHECK(hs_trackers_bytes(t) == 0, "target after frees %lld", (long long)hs_trackers_bytes(t));
    CHECK(hs_trackers_bytes(o) == 50, "other after frees %lld", (long long)hs_trackers_bytes(o));
    forget(0x40000);
    CHECK(hs_trackers_read(o, &v) && v.bytes == 0 && v.samples == 0 && v.variance < 1e-6,
          "other empty: %g %llu %g", v.bytes, (unsigned long long)v.samples, v.variance);

    int n = 2, rc;
    while ((rc = hs_trackers_new("more", "trk_other")) >= 0)
        n++;
    CHECK(rc == -ENOSPC && n == HS_TRACKERS_MAX, "bound: rc %d after %d", rc, n);
    CHECK(hs_trackers_bytes(-1) == -1 && hs_trackers_bytes(n) == -1, "bad handles accepted");
    char lines[HS_TRACKERS_MAX][200];
    CHECK(hs_trackers_format(lines, HS_TRACKERS_MAX) == n, "one comment per tracker");
    CHECK(strncmp(lines[0], "tracker: name=target function=trk_target bytes=0", 48) == 0, "%s",
          lines[0]);
    return hs_check_done("test_trackers");
}

/*
 * Unit test of the unwinder's variant selection (src/preload/unwind/unwind.c): after
 * hs_unwind_init(name), hs_unwind_capture must call that variant and no other; NULL and
 * "" select dwarf; an unknown name is refused. The variants are replaced, at link time
 * (ld --wrap, tests/CMakeLists.txt), by stand-ins that count their calls and return one
 * frame, a mark of their own, so the test sees the selection as the sampled path uses it,
 * without a call the library would carry for the tests alone. The variants themselves are
 * test_unwind's.
 */
#include "unwind/unwind.h"

#include "check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

enum { V_DWARF, V_LIBGCC, V_FP, NV };

static const char *const names[NV] = {"dwarf", "libgcc", "fp"};
static unsigned calls[NV];

/* A return address no real frame has: the variant's index, in an unmapped page. */
#define MARK(v) ((uintptr_t)0x5e1ec7000 + (uintptr_t)(v))

static size_t stand_in(int v, uintptr_t *pcs, size_t max)
{
    calls[v]++;
    if (max == 0)
        return 0;
    pcs[0] = MARK(v);
    return 1;
}

/* ld --wrap=hs_unwind_X sends the library's calls of hs_unwind_X here. */
size_t __wrap_hs_unwind_dwarf(uintptr_t *pcs, size_t max);
size_t __wrap_hs_unwind_libgcc(uintptr_t *pcs, size_t max);
size_t __wrap_hs_unwind_fp(uintptr_t *pcs, size_t max);

size_t __wrap_hs_unwind_dwarf(uintptr_t *pcs, size_t max)
{
    return stand_in(V_DWARF, pcs, max);
}

size_t __wrap_hs_unwind_libgcc(uintptr_t *pcs, size_t max)
{
    return stand_in(V_LIBGCC, pcs, max);
}

size_t __wrap_hs_unwind_fp(uintptr_t *pcs, size_t max)
{
    return stand_in(V_FP, pcs, max);
}

/* One capture: true when exactly variant v ran, once, and its frame came back. */
static bool captured_by(int v)
{
    uintptr_t pcs[8] = {0};
    memset(calls, 0, sizeof(calls));
    size_t n = hs_unwind_capture(pcs, 8);
    for (int i = 0; i < NV; i++)
        if (calls[i] != (i == v ? 1u : 0u))
            return false;
    return n == 1 && pcs[0] == MARK(v);
}

int main(void)
{
    hs_unwind_set_skip_range(0, 0); /* no skip range: the stand-in's frame is kept */
    CHECK(hs_unwind_init(NULL) == 0 && captured_by(V_DWARF), "NULL does not select dwarf");
    for (int v = 0; v < NV; v++) {
        CHECK(hs_unwind_init(names[v]) == 0, "init(%s) failed", names[v]);
        CHECK(captured_by(v), "after init(%s): calls dwarf %u libgcc %u fp %u", names[v],
              calls[V_DWARF], calls[V_LIBGCC], calls[V_FP]);
    }
    CHECK(hs_unwind_init("") == 0 && captured_by(V_DWARF), "\"\" does not select dwarf");
    CHECK(hs_unwind_init("nonsense") == -EINVAL, "unknown method accepted");
    CHECK(hs_unwind_init("FP") == -EINVAL, "names are matched exactly");
    return hs_check_done("test_unwind_select");
}

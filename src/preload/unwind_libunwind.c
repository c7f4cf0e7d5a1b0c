/*
 * Unwinder variant "libunwind" (the default): unw_backtrace from libunwind, which walks
 * DWARF CFI (so it is right for code built without frame pointers) and caches the
 * per-address unwind rules in a per-thread trace cache, which makes repeated captures
 * of the same call sites cheap. Local unwinding only. Called by hs_unwind_capture with
 * the reentrancy guard held: libunwind may allocate its cache on a thread's first use.
 */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "unwind.h"

#include <limits.h>

size_t hs_unwind_libunwind(uintptr_t *pcs, size_t max)
{
    int n;

    if (max > INT_MAX)
        max = INT_MAX;
    /* The first address reported is in this function (libunwind 1.6 starts the walk
     * from unw_backtrace's caller); the front end's skip range drops our frames. */
    n = unw_backtrace((void **)pcs, (int)max);
    return n > 0 ? (size_t)n : 0;
}

/*
 * Unwinder variant "libgcc": _Unwind_Backtrace from libgcc_s, the DWARF CFI unwinder
 * that C++ exceptions use. Debian's libunwind.so also exports _Unwind_Backtrace, and
 * whichever library comes first in symbol lookup would win, so the functions are looked
 * up in libgcc_s.so.1 itself with dlopen/dlsym on first use (with the reentrancy guard
 * held, as dlopen allocates). If that fails, the linked _Unwind_Backtrace is used.
 *
 * gcc's <unwind.h> is shadowed by our own "unwind.h" on the include path, so the few
 * declarations needed are written here; they are the Itanium C++ ABI's (level 1 base
 * ABI, which every libgcc_s and libunwind implements): an enum return is an int.
 */
#include "unwind.h"

#include <dlfcn.h>

struct _Unwind_Context;
enum { HS_URC_NO_REASON = 0, HS_URC_END_OF_STACK = 5 };
typedef int (*hs_ugcc_trace_fn)(struct _Unwind_Context *, void *);
typedef int (*hs_ugcc_backtrace_fn)(hs_ugcc_trace_fn, void *);
typedef uintptr_t (*hs_ugcc_getip_fn)(struct _Unwind_Context *);

extern int _Unwind_Backtrace(hs_ugcc_trace_fn, void *);
extern uintptr_t _Unwind_GetIP(struct _Unwind_Context *);

typedef struct {
    uintptr_t *pcs;
    size_t max, n;
    hs_ugcc_getip_fn getip;
} hs_ugcc_state_t;

static hs_ugcc_backtrace_fn hs_ugcc_backtrace;
static hs_ugcc_getip_fn hs_ugcc_getip;

/* Racing first calls both resolve; dlopen only bumps a reference count, so it is benign. */
static void hs_ugcc_resolve(void)
{
    hs_ugcc_backtrace_fn bt = _Unwind_Backtrace;
    hs_ugcc_getip_fn ip = _Unwind_GetIP;
    void *h = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_LOCAL);

    if (h != NULL) {
        void *b = dlsym(h, "_Unwind_Backtrace");
        void *g = dlsym(h, "_Unwind_GetIP");
        if (b != NULL && g != NULL) {
            bt = (hs_ugcc_backtrace_fn)b;
            ip = (hs_ugcc_getip_fn)g;
        }
    }
    __atomic_store_n(&hs_ugcc_getip, ip, __ATOMIC_RELAXED);
    __atomic_store_n(&hs_ugcc_backtrace, bt, __ATOMIC_RELEASE);
}

void hs_unwind_libgcc_resolve(void)
{
    if (!__atomic_load_n(&hs_ugcc_backtrace, __ATOMIC_ACQUIRE))
        hs_ugcc_resolve();
}

static int hs_ugcc_frame(struct _Unwind_Context *ctx, void *arg)
{
    hs_ugcc_state_t *st = arg;
    uintptr_t ip = (uintptr_t)st->getip(ctx);

    if (ip == 0)
        return HS_URC_END_OF_STACK;
    st->pcs[st->n++] = ip;
    return st->n < st->max ? HS_URC_NO_REASON : HS_URC_END_OF_STACK;
}

size_t hs_unwind_libgcc(uintptr_t *pcs, size_t max)
{
    hs_ugcc_backtrace_fn bt = __atomic_load_n(&hs_ugcc_backtrace, __ATOMIC_ACQUIRE);
    hs_ugcc_state_t st = {.pcs = pcs, .max = max, .n = 0};

    if (max == 0)
        return 0;
    if (bt == NULL) {
        hs_ugcc_resolve();
        bt = __atomic_load_n(&hs_ugcc_backtrace, __ATOMIC_ACQUIRE);
    }
    st.getip = __atomic_load_n(&hs_ugcc_getip, __ATOMIC_RELAXED);
    /* The first frame reported is this function's own. */
    bt(hs_ugcc_frame, &st);
    return st.n;
}

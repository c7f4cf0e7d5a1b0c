/*
 * Unwinder variant "fp": follows the frame-pointer chain. It is the fastest variant and
 * the least right: through code built without frame pointers (Debian's libraries) it
 * loses or invents frames. What it must never do is fault, so every saved frame pointer
 * is checked before it is read: it must stay inside the current thread's stack (bounds
 * from pthread_getattr_np, cached per thread on first use, with the reentrancy guard
 * held since glibc may allocate there), strictly increase, and be 8-byte aligned. Every
 * address between our own frame and the top of the stack is mapped, so those checks
 * make the walk safe. On a stack we do not know (sigaltstack, coroutines) it returns
 * only its caller.
 */
#define _GNU_SOURCE
#include "unwind.h"

#include <pthread.h>

#define HS_UFP_TLS __attribute__((tls_model("initial-exec")))

static __thread uintptr_t hs_ufp_lo HS_UFP_TLS, hs_ufp_hi HS_UFP_TLS;
static __thread int hs_ufp_state HS_UFP_TLS; /* 0 unknown, 1 bounds known, -1 failed */

static __attribute__((noinline, cold)) void hs_ufp_find_bounds(void)
{
    pthread_attr_t attr;
    void *addr = NULL;
    size_t size = 0;

    hs_ufp_state = -1;
    if (pthread_getattr_np(pthread_self(), &attr) != 0)
        return;
    if (pthread_attr_getstack(&attr, &addr, &size) == 0 && addr != NULL && size != 0) {
        hs_ufp_lo = (uintptr_t)addr;
        hs_ufp_hi = (uintptr_t)addr + size;
        hs_ufp_state = 1;
    }
    pthread_attr_destroy(&attr);
}

/* Cost: two loads, four compares and a store per frame. */
size_t hs_unwind_fp(uintptr_t *pcs, size_t max)
{
    uintptr_t fp = (uintptr_t)__builtin_frame_address(0);
    const uintptr_t limit = 2 * sizeof(uintptr_t);
    size_t n = 0;

    if (max == 0)
        return 0;
    pcs[n++] = (uintptr_t)__builtin_return_address(0);
    if (__builtin_expect(hs_ufp_state == 0, 0))
        hs_ufp_find_bounds();
    if (hs_ufp_state != 1 || fp < hs_ufp_lo || fp > hs_ufp_hi - limit)
        return n;
    /* fp[0] is the caller's saved frame pointer, fp[1] our return address (stored). */
    while (n < max) {
        uintptr_t next = *(const uintptr_t *)fp;
        uintptr_t ra;

        if (next <= fp || (next & (sizeof(uintptr_t) - 1)) != 0 || next > hs_ufp_hi - limit)
            break;
        fp = next;
        ra = ((const uintptr_t *)fp)[1];
        if (ra < 4096)
            break;
        pcs[n++] = ra;
    }
    return n;
}

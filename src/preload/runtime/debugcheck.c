/*
 * The lock-rank checker and hs_assert's failure path (debugcheck.h), compiled in only with
 * HS_DEBUG_CHECKS. The held ranks live in the thread's TLS block (core.h), so checking
 * takes no lock and allocates nothing; a failure logs once (hs_log, one write) and aborts.
 * Called from every hs_lock/hs_unlock of the library in those builds, and nowhere else.
 */
#include "debugcheck.h"

#ifdef HS_DEBUG_CHECKS
#include "log.h"

#include <stdlib.h>
#include <string.h>

/* A rank and its sub-order in one comparable key. */
#define CHECK_KEY(rank, sub) ((uint16_t)((rank) << 8 | ((sub)&0xff)))

void hs_check_fail(const char *what, const char *file, int line)
{
    static int logged;
    hs_log_once(logged, "check failed: %s (%s:%d)", what, file, line);
    abort();
}

void hs_rank_acquire(unsigned rank, unsigned sub, const char *file, int line)
{
    hs_tls_t *t = &hs_tls;
    uint16_t key = CHECK_KEY(rank, sub);
    if (t->nheld && t->held[t->nheld - 1] >= key)
        hs_check_fail("lock rank not above every rank held", file, line);
    if (t->nheld >= HS_HELD_MAX)
        hs_check_fail("too many locks held", file, line);
    t->held[t->nheld++] = key;
}

/* Not always the last one taken: fork handlers and a few paths release out of order. */
void hs_rank_release(unsigned rank, unsigned sub, const char *file, int line)
{
    hs_tls_t *t = &hs_tls;
    uint16_t key = CHECK_KEY(rank, sub);
    for (unsigned i = t->nheld; i-- > 0;) {
        if (t->held[i] != key)
            continue;
        for (unsigned j = i + 1; j < t->nheld; j++)
            t->held[j - 1] = t->held[j];
        t->nheld--;
        return;
    }
    hs_check_fail("releasing a lock not held", file, line);
}

bool hs_rank_held(unsigned rank)
{
    hs_tls_t *t = &hs_tls;
    for (unsigned i = 0; i < t->nheld; i++)
        if (t->held[i] >> 8 == rank)
            return true;
    return false;
}

void hs_rank_save(hs_held_t *out)
{
    out->n = hs_tls.nheld;
    memcpy(out->held, hs_tls.held, sizeof(out->held));
}

void hs_rank_restore(const hs_held_t *in)
{
    hs_tls.nheld = in->n;
    memcpy(hs_tls.held, in->held, sizeof(hs_tls.held));
}
#endif

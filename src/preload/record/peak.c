/*
 * The kept peak (HEAPSIFT_PEAK): the running estimate of the sampled live heap that the
 * sampled paths keep (hs_live_add, peak.h), the threshold that wakes the trigger thread,
 * and the copy of the live set per stack at its highest, which the "peak" profile is
 * written from. Crossing the threshold calls the waker the trigger thread registered
 * (hs_peak_set_waker): the recorder does not know the triggers. The trigger thread builds snapshots
 * (hs_peak_check) when woken; dumps copy the kept one (hs_peak_copy); heapsift_reset forgets it.
 * The copy is guarded by peak_lock (HS_RANK_PEAK), a leaf that is only held to swap or copy:
 * snapshots are built, and old copies freed, outside it. Never called on the non-sampled path.
 */
#define _GNU_SOURCE
#include "runtime/debugcheck.h"
#include "runtime/core.h"
#include "livetab.h"
#include "runtime/options.h"
#include "peak.h"
#include "stacktab.h"
#include "runtime/threads.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int64_t hs_live_est;
int64_t hs_peak_arm = INT64_MAX;

static pthread_mutex_t peak_lock = PTHREAD_MUTEX_INITIALIZER;
static hs_peak_t peak_kept;
static int64_t peak_bytes;       /* peak_kept.bytes rounded; atomic, read without the lock */
static void (*peak_waker)(void); /* the trigger thread's wake-up (triggers.c) */

void hs_peak_set_waker(void (*wake)(void))
{
    __atomic_store_n(&peak_waker, wake, __ATOMIC_RELEASE);
}

void hs_peak_poke(void)
{
    void (*wake)(void) = __atomic_load_n(&peak_waker, __ATOMIC_ACQUIRE);
    if (__atomic_exchange_n(&hs_peak_arm, INT64_MAX, __ATOMIC_RELAXED) != INT64_MAX && wake)
        wake();
}

static int64_t peak_wall_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Builds a snapshot of the live set now; false on ENOMEM. */
static bool peak_build(hs_peak_t *p)
{
    uint32_t n = hs_stacktab_count();
    double *obj = calloc(n ? n : 1, sizeof(double));
    double *bytes = calloc(n ? n : 1, sizeof(double));
    hs_live_totals_t tot = {0, 0, 0};
    memset(p, 0, sizeof(*p));
    p->v = calloc(n ? n : 1, sizeof(*p->v));
    if (!obj || !bytes || !p->v) {
        free(p->v);
        p->v = NULL;
        free(obj);
        free(bytes);
        return false;
    }
    hs_livetab_aggregate(obj, bytes, n, &tot);
    hs_counters_read(&p->counters);
    for (uint32_t i = 0; i < n; i++) {
        hs_stack_t st;
        if (obj[i] == 0 && bytes[i] == 0)
            continue;
        if (hs_stacktab_get((int32_t)i, &st)) {
            p->v[i][0] = st.alloc_objects;
            p->v[i][1] = st.alloc_bytes;
        }
        p->v[i][2] = obj[i];
        p->v[i][3] = bytes[i];
    }
    p->n = n;
    p->samples = tot.samples;
    p->objects = tot.objects;
    p->bytes = tot.bytes;
    p->time_ns = peak_wall_ns();
    free(obj);
    free(bytes);
    return true;
}

/* Re-arms the sampled path's wake-up a little above the kept peak: a new snapshot only
 * pays off once the heap grew by 1/64 or one sampling period. */
void hs_peak_rearm(void)
{
    int64_t rate = (int64_t)__atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED);
    int64_t kept = __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
    int64_t arm = kept + (kept / 64 > rate ? kept / 64 : rate);
    __atomic_store_n(&hs_peak_arm, arm, __ATOMIC_RELAXED);
    if (__atomic_load_n(&hs_live_est, __ATOMIC_RELAXED) > arm)
        hs_peak_poke();
}

/* The live estimate passed the arm: snapshot, keep the snapshot if it is a new peak, and
 * resynchronise the running estimate with the table (a realloc's removal may be missed). */
void hs_peak_check(void)
{
    hs_peak_t p, old;
    int64_t before = __atomic_load_n(&hs_live_est, __ATOMIC_RELAXED);
    if (!peak_build(&p))
        return;
    __atomic_add_fetch(&hs_live_est, (int64_t)p.bytes - before, __ATOMIC_RELAXED);
    hs_lock(&peak_lock, HS_RANK_PEAK); /* compared under the lock: any thread may check */
    bool higher = !peak_kept.v || p.bytes > peak_kept.bytes;
    old = higher ? peak_kept : p;
    if (higher) {
        peak_kept = p;
        __atomic_store_n(&peak_bytes, (int64_t)p.bytes, __ATOMIC_RELAXED);
    }
    hs_unlock(&peak_lock, HS_RANK_PEAK);
    free(old.v);
}

void hs_peak_now(void)
{
    if (hs_opt.peak)
        hs_peak_check();
}

bool hs_peak_copy(hs_peak_t *out)
{
    hs_assert_guard();
    for (int tries = 0; tries < 8; tries++) {
        uint32_t n = __atomic_load_n(&peak_kept.n, __ATOMIC_RELAXED);
        double(*v)[4] = malloc((n ? n : 1) * sizeof(*v));
        if (!v)
            return false;
        hs_lock(&peak_lock, HS_RANK_PEAK);
        bool ok = peak_kept.v && peak_kept.n == n;
        if (ok) {
            *out = peak_kept;
            out->v = v;
            memcpy(v, peak_kept.v, n * sizeof(*v));
        }
        bool none = !peak_kept.v;
        hs_unlock(&peak_lock, HS_RANK_PEAK);
        if (ok)
            return true;
        free(v);
        if (none)
            return false;
    }
    return false;
}

void hs_peak_reset(void)
{
    hs_peak_t old;
    hs_lock(&peak_lock, HS_RANK_PEAK);
    old = peak_kept;
    memset(&peak_kept, 0, sizeof(peak_kept));
    __atomic_store_n(&peak_bytes, 0, __ATOMIC_RELAXED);
    hs_unlock(&peak_lock, HS_RANK_PEAK);
    free(old.v);
    if (hs_opt.peak)
        __atomic_store_n(&hs_peak_arm, 0, __ATOMIC_RELAXED);
}

int64_t hs_peak_bytes(void)
{
    return __atomic_load_n(&peak_bytes, __ATOMIC_RELAXED);
}

uint64_t hs_peak_mem(void)
{
    uint64_t n = __atomic_load_n(&peak_kept.n, __ATOMIC_RELAXED);
    return n * sizeof(*peak_kept.v);
}

void hs_peak_lock(void)
{
    hs_lock(&peak_lock, HS_RANK_PEAK);
}

void hs_peak_unlock(void)
{
    hs_unlock(&peak_lock, HS_RANK_PEAK);
}

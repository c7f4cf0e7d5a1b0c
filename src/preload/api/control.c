/*
 * The public runtime API (include/heapsift.h): dump, write to a descriptor, switch
 * sampling on and off, reset the cumulative counts, change the rate, read statistics,
 * label the calling thread's samples, register and read trackers.
 * Every function may be called from any thread at any time (not from a signal handler):
 * each initialises the library if nothing else did, answers -ENOTSUP when profiling is
 * off, and runs whatever may allocate under the reentrancy guard. Changes reach the
 * sampled path through plain atomics it reads (hs_inactive, hs_opt.rate); the
 * non-sampled paths never look at them.
 */
#define _GNU_SOURCE
#include "runtime/core.h"
#include "output/accounting.h"
#include "output/dump.h"
#include "runtime/options.h"
#include "record/peak.h"
#include "record/recorder.h"
#include "record/sampler.h"
#include "runtime/threads.h"
#include "hs_version.h"
#include "record/labels.h"
#include "record/lifetimes.h"
#include "reports/report.h"
#include "record/livetab.h"
#include "record/stacktab.h"
#include "record/trackers.h"

#include "heapsift.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define CONTROL_MAX_RATE (1ull << 40)

/* True when the library is initialised and sampling is set up. */
static bool control_on(void)
{
    if (__atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_UNINIT)
        hs_init();
    return __atomic_load_n(&hs_state, __ATOMIC_ACQUIRE) == HS_STATE_ON;
}

/* The dumping calls write files, so like write(2) they are cancellation points; but a
 * dump is never cancelled half-way (it would keep its lock): a pending cancellation acts
 * once the dump is complete. */
static int control_cancel_point(int rc)
{
    pthread_testcancel();
    return rc;
}

HS_EXPORT int heapsift_dump(const char *path)
{
    return control_cancel_point(control_on() ? hs_dump(path, "heap") : -ENOTSUP);
}

HS_EXPORT int heapsift_dump_peak(const char *path)
{
    return control_cancel_point(control_on() ? hs_dump(path, "peak") : -ENOTSUP);
}

HS_EXPORT int heapsift_leak_check(const char *path)
{
    return control_cancel_point(control_on() ? hs_dump_leakcheck(path, NULL) : -ENOTSUP);
}

HS_EXPORT int heapsift_write(int fd, int format)
{
    if (!control_on())
        return -ENOTSUP;
    if (fd < 0)
        return -EBADF;
    return control_cancel_point(hs_dump_fd(fd, format));
}

HS_EXPORT int heapsift_set_active(int active)
{
    if (!control_on())
        return -ENOTSUP;
    __atomic_store_n(&hs_inactive, !active, __ATOMIC_RELAXED);
    return 0;
}

HS_EXPORT int heapsift_reset(void)
{
    if (!control_on())
        return -ENOTSUP;
    hs_lifetimes_reset(); /* first: objects allocated from now on are the ones counted */
    hs_stacktab_clear_counts();
    hs_peak_reset();
    return 0;
}

HS_EXPORT int heapsift_set_rate(unsigned long long bytes)
{
    if (!control_on())
        return -ENOTSUP;
    if (bytes < 1 || bytes > CONTROL_MAX_RATE)
        return -EINVAL;
    uint64_t was = __atomic_exchange_n(&hs_opt.rate, (uint64_t)bytes, __ATOMIC_RELAXED);
    uint64_t top = was > bytes ? was : bytes;
    uint64_t max = __atomic_load_n(&hs_rate_max, __ATOMIC_RELAXED);
    while (top > max && !__atomic_compare_exchange_n(&hs_rate_max, &max, top, true,
                                                     __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
    return 0;
}

/* The live estimate and its 95% half-width, from one pass over the live table (the same
 * per-stack approximation as the profiles, docs/accounting.md). Guard held. */
static void control_live(struct heapsift_stats *out)
{
    uint32_t n = hs_stacktab_count();
    double *obj = calloc(n ? n : 1, sizeof(double));
    double *bytes = calloc(n ? n : 1, sizeof(double));
    hs_live_totals_t tot = {0, 0, 0};
    double var = 0;
    uint64_t rate = hs_ci_rate();
    if (obj && bytes) {
        hs_livetab_aggregate(obj, bytes, n, &tot);
        for (uint32_t i = 0; i < n && rate > 1; i++) {
            if (obj[i] <= 0 || bytes[i] <= 0)
                continue;
            double size = bytes[i] / obj[i];
            var += bytes[i] * size * (hs_sampler_weight((uint64_t)(size + 0.5), rate) - 1);
        }
    }
    out->live_bytes = tot.bytes;
    out->live_objects = tot.objects;
    out->live_samples = tot.samples;
    hs_report_interval(tot.bytes, var, &out->live_bytes_lo95, &out->live_bytes_hi95);
    out->live_bytes_ci95 = out->live_bytes_hi95 - tot.bytes;
    free(obj);
    free(bytes);
}

/* Around an API call's own work: cancellation is off (a cancellation point inside cannot
 * end it halfway) and the calling thread's allocations are not sampled. */
static int control_enter(void)
{
    int cancel;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cancel);
    hs_guard_enter(&hs_tls);
    return cancel;
}

static void control_leave(int cancel)
{
    hs_guard_exit(&hs_tls);
    pthread_setcancelstate(cancel, NULL);
}

HS_EXPORT int heapsift_stats(struct heapsift_stats *out)
{
    hs_counters_t k;
    hs_acct_t a;
    uint64_t written, failed;
    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    if (!control_on())
        return -ENOTSUP;
    int cancel = control_enter();
    hs_counters_read(&k);
    out->allocs = k.allocs;
    out->frees = k.frees;
    out->bytes_allocated = k.bytes;
    out->threads = k.threads;
    control_live(out);
    hs_peak_t pk;
    if (hs_peak_copy(&pk)) {
        out->peak_bytes = pk.bytes;
        free(pk.v);
    }
    out->rate = __atomic_load_n(&hs_opt.rate, __ATOMIC_RELAXED);
    out->rss = hs_acct_rss_fast();
    memset(&a, 0, sizeof(a));
    hs_acct_profiler(&a);
    out->profiler_bytes = a.prof_maps + a.prof_heap;
    hs_dump_counts(&written, &failed);
    out->dumps = written;
    out->dump_failures = failed;
    out->active = !__atomic_load_n(&hs_inactive, __ATOMIC_RELAXED);
    control_leave(cancel);
    return 0;
}

/* Moves the calling thread to its label set with key = value (value NULL: key removed,
 * key NULL: no labels). A label set that cannot be interned any more puts the thread in
 * the fallback set (labels.h). One or two lock-free probes when the set exists. */
static int control_labels(const char *key, const char *value)
{
    hs_tls_t *t = &hs_tls;
    int64_t id = hs_labels_with(t->labels, key, value);
    if (id == -ENOSPC)
        t->labels = HS_LABELS_OVERFLOW;
    if (id < 0)
        return (int)id;
    t->labels = (uint32_t)id;
    return 0;
}

HS_EXPORT int heapsift_label_set(const char *key, const char *value)
{
    if (!control_on())
        return -ENOTSUP;
    if (!key || !value)
        return -EINVAL;
    return control_labels(key, value);
}

HS_EXPORT int heapsift_label_clear(const char *key)
{
    if (!control_on())
        return -ENOTSUP;
    return control_labels(key, NULL);
}

HS_EXPORT int heapsift_tracker_new(const char *name, const char *function)
{
    if (!control_on())
        return -ENOTSUP;
    int cancel = control_enter();
    int rc = hs_trackers_new(name, function);
    control_leave(cancel);
    return rc;
}

HS_EXPORT long long heapsift_tracker_bytes(int tracker)
{
    if (!control_on())
        return -ENOTSUP;
    int64_t b = hs_trackers_bytes(tracker);
    return b < 0 ? -EINVAL : (long long)b;
}

HS_EXPORT int heapsift_tracker_stats(int tracker, struct heapsift_tracker_stats *out)
{
    hs_tracker_value_t v;
    if (!out)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    if (!control_on())
        return -ENOTSUP;
    if (!hs_trackers_read(tracker, &v))
        return -EINVAL;
    out->bytes = v.bytes;
    hs_report_interval(v.bytes, v.variance, &out->bytes_lo95, &out->bytes_hi95);
    out->bytes_ci95 = out->bytes_hi95 - v.bytes;
    out->objects = v.objects;
    out->samples = v.samples;
    out->ranges = v.ranges;
    return 0;
}

HS_EXPORT const char *heapsift_version(void)
{
    return HS_VERSION;
}

/*
 * GET /metrics: heapsift's figures in Prometheus' text exposition format (version 0.0.4;
 * docs/fleet.md, docs/http.md). The counters, the live estimate with its 95% interval and
 * the RSS parts come from heapsift_stats and the accounting, without building a profile;
 * the top sites come from the heap profile the endpoint caches for a second (passed in by
 * http_routes.c) and are formatted once per build of that profile, so a scrape every
 * second costs one report over a profile at most. Runs on the serving thread only (guard
 * held); no locking. Owns what it appends.
 */
#define _GNU_SOURCE
#include "output/accounting.h"
#include "output/dump.h"
#include "http.h"
#include "reports/report.h"
#include "runtime/options.h"
#include "runtime/threads.h"

#include "heapsift.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The site series of the last profile they were made of (its build number). */
static hs_buf_t metrics_sites;
static uint64_t metrics_sites_build;
static bool metrics_sites_ok;

static int metrics_head(hs_buf_t *b, const char *name, const char *type, const char *help)
{
    return hs_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* One series without labels, its HELP and TYPE first. */
static int metrics_one(hs_buf_t *b, const char *name, const char *type, const char *help, double v)
{
    int rc = metrics_head(b, name, type, help);
    return rc ? rc : hs_buf_printf(b, "%s %.0f\n", name, v);
}

/* A label value as the format wants it: backslash, double quote and newline escaped. */
static int metrics_label(hs_buf_t *b, const char *v)
{
    int rc = 0;
    for (; rc == 0 && *v; v++) {
        if (*v == '\\' || *v == '"')
            rc = hs_buf_printf(b, "\\%c", *v);
        else if (*v == '\n')
            rc = hs_buf_printf(b, "\\n");
        else
            rc = hs_buf_append(b, v, 1);
    }
    return rc;
}

/* The rows of `heapsift stats` (report_stats.c's reconciliation, same arithmetic): the
 * parts under "heap_" split part="heap"; the others with it add up to the RSS. */
static int metrics_rss(hs_buf_t *b, const struct heapsift_stats *s)
{
    hs_acct_t a;
    memset(&a, 0, sizeof(a));
    hs_acct_read(&a);
    hs_acct_profiler(&a);
    bool glibc = a.allocator == HS_ALLOC_GLIBC, je = a.allocator == HS_ALLOC_JEMALLOC;
    bool tc = a.allocator == HS_ALLOC_TCMALLOC; /* allocated is a[0], as jemalloc's */
    double heap = (double)a.heap, live = s->live_bytes, ph = (double)a.prof_heap;
    double allocated = glibc ? (double)(a.a[3] + a.a[1]) : (double)a.a[0];
    double meta = je ? (double)a.a[2] : 0;
    struct {
        const char *part;
        double v;
        bool split; /* only when the allocator's figures split the heap */
    } rows[] = {
        {"heap", heap, false},
        {"heap_live", live, true},
        {"heap_allocator_overhead", allocated - live - ph, true},
        {"heap_profiler", ph, true},
        {"heap_allocator_free", heap - allocated - meta, true},
        {"heap_allocator_metadata", meta, true},
        {"profiler_tables", (double)a.prof_maps, false},
        {"stacks", (double)a.stacks, false},
        {"code", (double)a.code, false},
        {"other_anon", (double)a.other_anon, false},
    };
    int rc = metrics_head(b, "heapsift_rss_bytes", "gauge",
                          "Resident memory by part, the rows of heapsift stats (parts heap_* "
                          "split part heap; the others add up to the RSS).");
    for (size_t i = 0; rc == 0 && i < sizeof(rows) / sizeof(rows[0]); i++)
        if (!rows[i].split || glibc || je || tc)
            rc =
                hs_buf_printf(b, "heapsift_rss_bytes{part=\"%s\"} %.0f\n", rows[i].part, rows[i].v);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_process_rss_bytes", "gauge",
                         "Resident set size of the process (smaps_rollup).", (double)a.rss);
    return rc;
}

/* The counters and the live estimate: heapsift_stats, no profile built. */
static int metrics_counts(hs_buf_t *b, const struct heapsift_stats *s)
{
    uint64_t kinds[HS_DUMP_KINDS];
    hs_counters_t k;
    hs_dump_counts_by_kind(kinds);
    hs_counters_read(&k);
    int rc = metrics_one(b, "heapsift_heap_live_bytes", "gauge",
                         "Live heap, the sampled estimate (requested bytes).", s->live_bytes);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_heap_live_lo95_bytes", "gauge",
                         "Lower end of the live heap estimate's 95% interval.", s->live_bytes_lo95);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_heap_live_hi95_bytes", "gauge",
                         "Upper end of the live heap estimate's 95% interval.", s->live_bytes_hi95);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_allocated_bytes_total", "counter",
                         "Bytes requested since start (exact).", (double)s->bytes_allocated);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_allocations_total", "counter",
                         "Allocation calls since start (exact).", (double)s->allocs);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_frees_total", "counter",
                         "Free calls of non-NULL pointers since start (exact).", (double)s->frees);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_samples_total", "counter", "Allocations sampled since start.",
                         (double)k.samples);
    if (rc == 0)
        rc = metrics_head(b, "heapsift_profiles_written_total", "counter",
                          "Profiles written to files, by kind.");
    for (int i = 0; rc == 0 && i < HS_DUMP_KINDS; i++)
        rc = hs_buf_printf(b, "heapsift_profiles_written_total{kind=\"%s\"} %llu\n",
                           hs_dump_kind_name(i), (unsigned long long)kinds[i]);
    if (rc == 0)
        rc = metrics_one(b, "heapsift_profile_failures_total", "counter", "Dumps that failed.",
                         (double)s->dump_failures);
    double leak;
    if (rc == 0 && hs_dump_last_leakcheck(&leak))
        rc = metrics_one(b, "heapsift_leak_unreachable_bytes", "gauge",
                         "Live bytes no pointer reached at the last leak check (estimate).", leak);
    return rc;
}

/* One series of a site: which 0 its estimate, 1 and 2 the ends of its 95% interval. */
static int metrics_site(hs_buf_t *b, int which, const char *name, double v, double var)
{
    static const char *const series[3] = {"heapsift_site_live_bytes",
                                          "heapsift_site_live_lo95_bytes",
                                          "heapsift_site_live_hi95_bytes"};
    double val[3] = {v, v, v};
    hs_report_interval(v, var, &val[1], &val[2]);
    int rc = hs_buf_printf(b, "%s{function=\"", series[which]);
    if (rc == 0)
        rc = metrics_label(b, name);
    return rc ? rc : hs_buf_printf(b, "\"} %.0f\n", val[which]);
}

/* The top sites of p (functions by flat inuse_space, pprof's order: by value, then by
 * name) into b: each of the three families, its HELP and TYPE, then its series. */
static int metrics_sites_make(hs_buf_t *b, const hs_profile_t *p, long n)
{
    static const char *const heads[3][2] = {
        {"heapsift_site_live_bytes",
         "Live bytes allocated by a function (the allocation site), the top "
         "HEAPSIFT_METRICS_SITES of the heap profile (sampled estimate)."},
        {"heapsift_site_live_lo95_bytes", "Lower end of a site's 95% interval."},
        {"heapsift_site_live_hi95_bytes", "Upper end of a site's 95% interval."}};
    hs_report_t r;
    hs_report_opts_t o = {.sample_type = "inuse_space"};
    int sign = 1;
    char err[256];
    size_t shown = 0, orig, dropped;
    int rc = hs_report_build(&r, &p, &sign, 1, &o, err, sizeof(err));
    if (rc != 0)
        return rc;
    uint32_t *sel = hs_report_select(&r, false, 0, n, &shown, &orig, &dropped);
    rc = sel ? 0 : -ENOMEM;
    for (int w = 0; rc == 0 && w < 3; w++) {
        rc = metrics_head(b, heads[w][0], "gauge", heads[w][1]);
        for (size_t i = 0; rc == 0 && i < shown; i++) {
            const hs_rnode_t *nd = &r.nodes[sel[i]];
            if (nd->flat > 0)
                rc = metrics_site(b, w, nd->name, (double)nd->flat, nd->flat_var);
        }
    }
    free(sel);
    hs_report_free(&r);
    return rc;
}

int hs_http_metrics(hs_buf_t *out, const hs_profile_t *heap, uint64_t build)
{
    struct heapsift_stats s;
    if (heapsift_stats(&s) != 0)
        return -EIO;
    int rc = metrics_counts(out, &s);
    if (rc == 0)
        rc = metrics_rss(out, &s);
    if (rc == 0 && heap && hs_opt.metrics_sites > 0 &&
        (!metrics_sites_ok || metrics_sites_build != build)) {
        hs_buf_free(&metrics_sites);
        metrics_sites_ok = metrics_sites_make(&metrics_sites, heap, hs_opt.metrics_sites) == 0;
        metrics_sites_build = build;
    }
    if (rc == 0 && heap && metrics_sites_ok && metrics_sites.len)
        rc = hs_buf_append(out, metrics_sites.data, metrics_sites.len);
    return rc;
}

void hs_http_metrics_forget(void)
{
    memset(&metrics_sites, 0, sizeof(metrics_sites));
    metrics_sites_ok = false;
}

/*
 * The bodies the endpoint answers besides profiles: the /debug/pprof/ index (Go's page,
 * plus heapsift's paths and views), /debug/heapsift/stats (heapsift_stats, the accounting
 * of accounting.c and the endpoint's own counters, as JSON), pprof's remote symbolization
 * (/debug/pprof/symbol: names from the in-process symbolizer) and the quick views of
 * ?display= (the call graph of display=svg laid out by report_graphsvg.c, never by running
 * Graphviz from inside the process). Runs on the serving thread only (guard held); owns
 * what it appends.
 */
#define _GNU_SOURCE
#include "output/accounting.h"
#include "http.h"
#include "reports/report.h"
#include "symbolize/symbolize.h"

#include "heapsift.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int hs_http_index(hs_buf_t *out)
{
    static const struct {
        const char *href, *name, *what;
    } rows[] = {
        {"allocs", "allocs", "A sampling of all past memory allocations (alloc_space by default)"},
        {"heap", "heap",
         "A sampling of memory allocations of live objects (inuse_space by "
         "default). ?seconds=N: a delta profile of the next N seconds; ?debug=1: "
         "Go's text format"},
        {"peak", "peak", "The live set at the highest live heap seen (HEAPSIFT_PEAK=1)"},
        {"symbol", "symbol", "pprof's remote symbolization (POST 0xADDR+0xADDR...)"},
        {"../heapsift/stats", "heapsift/stats", "What the process holds, as JSON"},
        {"heap?display=text", "heap?display=text", "Top allocation sites, as text"},
        {"heap?display=svg", "heap?display=svg", "Call graph (SVG)"},
        {"heap?display=flamegraph", "heap?display=flamegraph", "Flame graph (SVG in a page)"},
        {"heap?display=stats", "heap?display=stats", "Where the RSS went, as text"},
    };
    int rc = hs_buf_printf(out,
                           "<html>\n<head><title>/debug/pprof/</title></head>\n<body>\n"
                           "/debug/pprof/ (heapsift %s, pid %ld)<br>\n<br>\nTypes of "
                           "profiles available:\n<table>\n",
                           heapsift_version(), (long)getpid());
    for (size_t i = 0; rc == 0 && i < sizeof(rows) / sizeof(rows[0]); i++)
        rc = hs_buf_printf(out, "<tr><td><a href=\"%s\">%s</a></td><td>%s</td></tr>\n",
                           rows[i].href, rows[i].name, rows[i].what);
    if (rc == 0)
        rc = hs_buf_printf(out, "</table>\n<p>Control (POST, 'Authorization: Bearer' "
                                "HEAPSIFT_HTTP_TOKEN): /debug/heapsift/active, rate, reset, "
                                "dump.</p>\n</body>\n</html>\n");
    return rc;
}

int hs_http_stats_json(hs_buf_t *out)
{
    struct heapsift_stats s;
    hs_acct_t a;
    static const char *const keys[4][6] = {
        {""},
        {"arena", "mmap", "mmap_chunks", "in_use", "free", "releasable"},
        {"allocated", "active", "metadata", "resident", "retained", "mapped"},
        {"allocated", "heap_size", "pageheap_free", "unmapped", "central_free", "thread_free"}};
    memset(&a, 0, sizeof(a));
    if (heapsift_stats(&s) != 0)
        return -EIO;
    hs_acct_read(&a);
    hs_acct_profiler(&a);
    int rc = hs_buf_printf(
        out,
        "{\"pid\":%ld,\"version\":\"%s\",\"active\":%s,\"rate\":%llu,\n"
        "\"exact\":{\"allocs\":%llu,\"frees\":%llu,\"bytes\":%llu,\"threads\":%llu},\n"
        "\"estimate\":{\"live_bytes\":%.0f,\"live_bytes_ci95\":%.0f,\"live_bytes_lo95\":%.0f,"
        "\"live_bytes_hi95\":%.0f,\"live_objects\":%.0f,"
        "\"live_samples\":%llu,\"peak_bytes\":%.0f},\n"
        "\"rss\":{\"rss\":%" PRIu64 ",\"anon\":%" PRIu64 ",\"file\":%" PRIu64 ",\"swap\":%" PRIu64
        "},\n\"maps\":{\"heap\":%" PRIu64 ",\"stacks\":%" PRIu64 ",\"code\":%" PRIu64
        ",\"other_anon\":%" PRIu64 "},\n\"profiler\":{\"maps\":%" PRIu64 ",\"heap\":%" PRIu64
        "},\n\"allocator\":{\"name\":\"%s\"",
        (long)getpid(), heapsift_version(), s.active ? "true" : "false", s.rate, s.allocs, s.frees,
        s.bytes_allocated, s.threads, s.live_bytes, s.live_bytes_ci95, s.live_bytes_lo95,
        s.live_bytes_hi95, s.live_objects, s.live_samples, s.peak_bytes, a.rss, a.anon, a.file,
        a.swap, a.heap, a.stacks, a.code, a.other_anon, a.prof_maps, a.prof_heap,
        hs_alloc_names[a.allocator % 4]);
    for (int i = 0; rc == 0 && a.allocator != HS_ALLOC_UNKNOWN && i < 6; i++)
        rc = hs_buf_printf(out, ",\"%s\":%" PRIu64, keys[a.allocator % 4][i], a.a[i]);
    if (rc == 0)
        rc = hs_buf_printf(out,
                           "},\n\"dumps\":{\"written\":%llu,\"failed\":%llu},\n"
                           "\"http\":{\"requests\":%" PRIu64 ",\"rejected\":%" PRIu64
                           ",\"builds\":%" PRIu64 ",\"deltas\":%" PRIu64
                           ",\"throttled_ms\":%" PRIu64 ",\"delta_windows_open\":%d}}\n",
                           s.dumps, s.dump_failures, hs_http_count.requests, hs_http_count.rejected,
                           hs_http_count.builds, hs_http_count.deltas, hs_http_count.throttled_ms,
                           hs_http_windows_open());
    return rc;
}

/* pprof's symbolz protocol: the body is addresses joined by '+'; each one known is
 * answered "0xADDR name" (the function containing it, from the symbol tables). */
int hs_http_symbols(const char *body, size_t len, hs_buf_t *out)
{
    hs_symbolizer_t *sym = hs_symbolizer_new_pid(0);
    int rc = 0;
    if (!sym)
        return -ENOMEM;
    hs_symbolizer_names_only(sym, true);
    for (size_t i = 0; rc == 0 && i < len;) {
        char tok[32];
        size_t n = 0;
        while (i < len && (body[i] == '+' || body[i] == ' ' || body[i] == '\n'))
            i++;
        while (i < len && body[i] != '+' && body[i] != ' ' && body[i] != '\n') {
            if (n + 1 < sizeof(tok))
                tok[n++] = body[i];
            i++;
        }
        tok[n] = '\0';
        char *end;
        uint64_t addr = strtoull(tok, &end, 0);
        hs_symbol_t s[16];
        size_t k = n && !*end ? hs_symbolize(sym, addr, s, 16) : 0;
        const char *name = k ? (s[k - 1].name ? s[k - 1].name : s[k - 1].system_name) : NULL;
        if (name)
            rc = hs_buf_printf(out, "%#" PRIx64 " %s\n", addr, name);
    }
    hs_symbolizer_free(sym);
    return rc;
}

/* The flame graph inside an HTML page that names the process and links the other sample
 * types and views (hsFlame.init() runs once whether or not the inline SVG's onload fires). */
static int http_flame_page(const hs_report_t *r, FILE *f)
{
    static const char *const types[] = {"inuse_space", "inuse_objects", "alloc_space",
                                        "alloc_objects"};
    fprintf(f,
            "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>heapsift: pid %ld, "
            "%s</title></head>\n<body style=\"font-family:sans-serif\">\n<p>pid %ld, %s.",
            (long)getpid(), r->sample_type, (long)getpid(), r->sample_type);
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        fprintf(f, " <a href=\"?display=flamegraph&amp;sample_index=%s\">%s</a>", types[i],
                types[i]);
    fprintf(f, " | <a href=\"?display=text\">top</a> <a href=\"?display=stats\">stats</a> "
               "<a href=\"/debug/pprof/\">index</a></p>\n");
    int rc = hs_report_flamegraph(r, false, f);
    fprintf(f, "<script>hsFlame.init()</script>\n</body></html>\n");
    return rc;
}

/* The call graph, laid out here (report_graphsvg.c): no Graphviz is run from inside the
 * profiled process. */
static int http_graph(hs_report_t *r, FILE *f)
{
    hs_graph_opts_t o;
    hs_graph_t g;
    hs_graph_opts_default(&o);
    int rc = hs_graph_build(r, &o, &g);
    if (rc == 0) {
        rc = hs_graph_write_svg(r, &g, &o, f);
        hs_graph_free(&g);
    }
    return rc;
}

/* A report of p (one profile, sample type st) drawn by view. */
static int http_report_view(const hs_profile_t *p, const char *view, const char *st, FILE *f)
{
    hs_report_t r;
    hs_report_opts_t o = {.sample_type = st};
    hs_top_opts_t top = {.count = 0};
    int sign = 1;
    char err[256];
    int rc = hs_report_build(&r, &p, &sign, 1, &o, err, sizeof(err));
    if (rc != 0) {
        fprintf(f, "%s\n", err);
        return rc;
    }
    if (strcmp(view, "text") == 0)
        rc = hs_report_top(&r, &top, NULL, f);
    else if (strcmp(view, "svg") == 0)
        rc = http_graph(&r, f);
    else if (strcmp(view, "flamegraph_svg") == 0)
        rc = hs_report_flamegraph(&r, false, f);
    else
        rc = http_flame_page(&r, f);
    hs_report_free(&r);
    return rc;
}

int hs_http_display(const hs_profile_t *p, const char *display, const char *st, hs_buf_t *out,
                    const char **type)
{
    static const struct {
        const char *name, *type;
    } views[] = {{"text", "text/plain; charset=utf-8"},
                 {"svg", "image/svg+xml"},
                 {"flamegraph_svg", "image/svg+xml"},
                 {"flamegraph", "text/html; charset=utf-8"},
                 {"stats", "text/plain; charset=utf-8"}};
    char *mem = NULL, name[64];
    size_t len = 0, v = 0;
    while (v < sizeof(views) / sizeof(views[0]) && strcmp(display, views[v].name) != 0)
        v++;
    if (v == sizeof(views) / sizeof(views[0]))
        return -EINVAL;
    FILE *f = open_memstream(&mem, &len);
    if (!f)
        return -ENOMEM;
    snprintf(name, sizeof(name), "pid %ld", (long)getpid());
    int rc = strcmp(display, "stats") == 0 ? hs_report_stats(p, name, false, f)
                                           : http_report_view(p, display, st, f);
    if (fclose(f) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc == 0)
        rc = hs_buf_append(out, mem, len);
    free(mem);
    *type = views[v].type;
    return rc == -EINVAL ? -EPROTO : rc; /* -EINVAL means an unknown display */
}

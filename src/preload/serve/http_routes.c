/*
 * What each path of the endpoint answers (docs/http.md): Go's /debug/pprof/ paths
 * (index, heap, allocs, symbol; ?debug=1 text, ?seconds=N delta, ?gc ignored), heapsift's
 * own (/debug/pprof/peak, /debug/heapsift/stats and the token-guarded control POSTs),
 * and the quick views (?display=). Runs only on the serving thread (http.c), which holds
 * the guard, so there is no locking here. A built profile is kept HS_HTTP_CACHE_MS and
 * its encodings are MHD responses shared by every request in that time, so a flood of
 * requests costs sends, not builds. A ?seconds=N request takes a copy of the counts, is
 * suspended (no thread waits, other clients are served), and resumed by hs_http_tick
 * when its window is over; at most HS_HTTP_MAX_DELTAS are open at once.
 */
#define _GNU_SOURCE
#include "output/dump.h"
#include "http.h"
#include "runtime/options.h"
#include "model/pprof.h"
#include "model/write_gotext.h"

#include "heapsift.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

hs_http_counters_t hs_http_count;

/* One request's state (MHD's con_cls): its POST body, its delta window. */
typedef struct http_req {
    hs_buf_t body;
    bool too_big;
    hs_dump_base_t *base; /* a delta window is open */
    int64_t due_ms;
    bool suspended, resumed;
    struct MHD_Connection *c;
    struct http_req *next; /* open windows */
} http_req_t;

static http_req_t *http_windows;
static int http_nwindows;
static bool http_stopping;

/* The last profile built of each kind, and its gzipped encodings (one MHD response each,
 * default sample type inuse_space and alloc_space). */
enum { HTTP_HEAP, HTTP_PEAK, HTTP_KINDS };
static struct {
    hs_profile_t *prof;
    int64_t built_ms;
    struct MHD_Response *gz[2];
} http_cache[HTTP_KINDS];

/* ---- replies ----------------------------------------------------------------------- */

static enum MHD_Result http_queue(struct MHD_Connection *c, unsigned status, const char *type,
                                  struct MHD_Response *r)
{
    if (!r)
        return MHD_NO;
    hs_mhd.add_header(r, "Content-Type", type);
    hs_mhd.add_header(r, "X-Content-Type-Options", "nosniff");
    hs_mhd.add_header(r, "Cache-Control", "no-store");
    enum MHD_Result rc = hs_mhd.queue(c, status, r);
    hs_mhd.destroy_response(r);
    return rc;
}

enum MHD_Result hs_http_reply(struct MHD_Connection *c, unsigned status, const char *type,
                              const void *data, size_t len)
{
    return http_queue(c, status, type,
                      hs_mhd.from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY));
}

enum MHD_Result hs_http_reply_buf(struct MHD_Connection *c, unsigned status, const char *type,
                                  hs_buf_t *b)
{
    struct MHD_Response *r = hs_mhd.from_buffer(b->len, b->data, MHD_RESPMEM_MUST_FREE);
    if (!r)
        hs_buf_free(b);
    memset(b, 0, sizeof(*b));
    return http_queue(c, status, type, r);
}

static enum MHD_Result http_error(struct MHD_Connection *c, unsigned status, const char *msg)
{
    char line[300];
    int n = snprintf(line, sizeof(line), "%s\n", msg);
    hs_http_count.rejected++;
    return hs_http_reply(c, status, "text/plain; charset=utf-8", line, (size_t)n);
}

/* ---- the profile cache ------------------------------------------------------------- */

static void http_cache_drop(int k)
{
    for (int i = 0; i < 2; i++)
        if (http_cache[k].gz[i])
            hs_mhd.destroy_response(http_cache[k].gz[i]);
    if (http_cache[k].prof)
        hs_profile_free(http_cache[k].prof);
    memset(&http_cache[k], 0, sizeof(http_cache[k]));
}

/* The profile of kind k, built at most HS_HTTP_CACHE_MS ago; NULL on failure. */
static hs_profile_t *http_profile(int k)
{
    int64_t now = hs_http_now_ms();
    if (http_cache[k].prof && now - http_cache[k].built_ms < HS_HTTP_CACHE_MS)
        return http_cache[k].prof;
    http_cache_drop(k);
    if (hs_dump_profile(k == HTTP_PEAK ? "peak" : "heap", NULL, &http_cache[k].prof) != 0)
        return NULL;
    hs_http_count.builds++;
    http_cache[k].built_ms = now;
    return http_cache[k].prof;
}

/* p gzipped, its default sample type alloc_space when allocs; NULL on failure. */
static struct MHD_Response *http_encode(hs_profile_t *p, bool allocs)
{
    hs_buf_t raw = HS_BUF_INIT, gz = HS_BUF_INIT;
    int64_t def = p->default_sample_type;
    if (allocs)
        p->default_sample_type = hs_profile_str(p, "alloc_space");
    int rc = hs_pprof_encode(p, &raw);
    p->default_sample_type = def;
    if (rc == 0)
        rc = hs_gzip(raw.data, raw.len, HS_GZIP_PROCESS_LEVEL, &gz);
    hs_buf_free(&raw);
    struct MHD_Response *r =
        rc == 0 ? hs_mhd.from_buffer(gz.len, gz.data, MHD_RESPMEM_MUST_FREE) : NULL;
    if (!r)
        hs_buf_free(&gz);
    if (r) {
        hs_mhd.add_header(r, "Content-Type", "application/octet-stream");
        hs_mhd.add_header(r, "Content-Disposition",
                          allocs ? "attachment; filename=\"allocs\""
                                 : "attachment; filename=\"heap\"");
        hs_mhd.add_header(r, "X-Content-Type-Options", "nosniff");
    }
    return r;
}

/* ---- query helpers ----------------------------------------------------------------- */

static const char *http_arg(struct MHD_Connection *c, const char *key)
{
    return hs_mhd.lookup(c, MHD_GET_ARGUMENT_KIND, key);
}

/* A positive decimal, else -1 (missing: 0). */
static long http_arg_num(struct MHD_Connection *c, const char *key)
{
    const char *v = http_arg(c, key);
    if (!v)
        return 0;
    char *end;
    long n = strtol(v, &end, 10);
    return (*v && !*end && n >= 0) ? n : -1;
}

/* ---- profiles ---------------------------------------------------------------------- */

static const char http_sample_index_want[] = "sample_index: want inuse_space, inuse_objects, "
                                             "alloc_space, alloc_objects or an index 0 to 3";

/* Whether the request names a sample type a heap profile does not have (checked with or
 * without a display, as docs/http.md says). */
static bool http_sample_index_bad(struct MHD_Connection *c)
{
    static const char *const names[] = {
        "alloc_objects", "alloc_space", "inuse_objects", "inuse_space", "0", "1", "2", "3"};
    const char *st = http_arg(c, "sample_index");
    for (size_t i = 0; st && i < sizeof(names) / sizeof(names[0]); i++)
        if (strcmp(st, names[i]) == 0)
            return false;
    return st != NULL;
}

static enum MHD_Result http_send_profile(struct MHD_Connection *c, hs_profile_t *p, bool allocs,
                                         long debug, const char *display)
{
    hs_buf_t b = HS_BUF_INIT;
    const char *st = http_arg(c, "sample_index");
    if (http_sample_index_bad(c))
        return http_error(c, 400, http_sample_index_want);
    if (display) {
        const char *type = NULL;
        int rc = hs_http_display(p, display, st ? st : allocs ? "alloc_space" : NULL, &b, &type);
        if (rc == -EINVAL) {
            hs_buf_free(&b);
            return http_error(c, 400,
                              "display: want text, svg, flamegraph, flamegraph_svg or stats");
        }
        if (rc == -EPROTO) {
            hs_buf_free(&b);
            return http_error(c, 400,
                              "sample_index: want inuse_space, inuse_objects, "
                              "alloc_space, alloc_objects or an index");
        }
        if (rc != 0) {
            hs_buf_free(&b);
            return http_error(c, 500, "cannot build the view");
        }
        return hs_http_reply_buf(c, 200, type, &b);
    }
    if (debug > 0) {
        if (hs_write_gotext(p, &b) != 0) {
            hs_buf_free(&b);
            return http_error(c, 500, "cannot write the profile");
        }
        return hs_http_reply_buf(c, 200, "text/plain; charset=utf-8", &b);
    }
    struct MHD_Response *r = http_encode(p, allocs);
    if (!r)
        return http_error(c, 500, "cannot encode the profile");
    enum MHD_Result rc = hs_mhd.queue(c, 200, r);
    hs_mhd.destroy_response(r);
    return rc;
}

/* The cached kind k, its encoding shared. */
static enum MHD_Result http_send_cached(struct MHD_Connection *c, int k, bool allocs, long debug,
                                        const char *display)
{
    if (http_sample_index_bad(c))
        return http_error(c, 400, http_sample_index_want);
    hs_profile_t *p = http_profile(k);
    if (!p)
        return http_error(c, 500, "cannot build the profile");
    if (debug > 0 || display)
        return http_send_profile(c, p, allocs, debug, display);
    struct MHD_Response **r = &http_cache[k].gz[allocs];
    if (!*r && !(*r = http_encode(p, allocs)))
        return http_error(c, 500, "cannot encode the profile");
    return hs_mhd.queue(c, 200, *r);
}

/* ?seconds=N: first call opens the window (suspends), the call after resumption answers. */
static enum MHD_Result http_delta(struct MHD_Connection *c, http_req_t *q, long secs, bool allocs,
                                  const char *display)
{
    if (q->resumed) {
        hs_profile_t *p = NULL;
        if (http_stopping)
            return http_error(c, 503, "the endpoint is stopping (exit or detach)");
        int rc = hs_dump_profile("heap", q->base, &p);
        hs_dump_base_free(q->base);
        q->base = NULL;
        if (rc != 0)
            return http_error(c, 500, "cannot build the delta profile");
        hs_http_count.deltas++;
        enum MHD_Result r = http_send_profile(c, p, allocs, 0, display);
        hs_profile_free(p);
        return r;
    }
    if (secs <= 0 || secs > HS_HTTP_MAX_SECONDS)
        return http_error(c, 400,
                          "invalid value for \"seconds\" - must be a positive integer "
                          "(at most 3600)");
    if (http_nwindows >= HS_HTTP_MAX_DELTAS)
        return http_error(c, 503, "too many ?seconds windows open; retry later");
    if (hs_dump_base_take(&q->base) != 0)
        return http_error(c, 500, "cannot copy the counts");
    q->due_ms = hs_http_now_ms() + secs * 1000;
    q->c = c;
    q->suspended = true;
    q->next = http_windows;
    http_windows = q;
    http_nwindows++;
    hs_mhd.suspend(c);
    return MHD_YES;
}

static enum MHD_Result http_profile_path(struct MHD_Connection *c, http_req_t *q, int k,
                                         bool allocs)
{
    long debug = http_arg_num(c, "debug"), secs = http_arg_num(c, "seconds");
    const char *display = http_arg(c, "display");
    if (debug < 0)
        return http_error(c, 400, "invalid value for \"debug\"");
    if (http_arg(c, "seconds") || q->resumed) {
        if (k == HTTP_PEAK)
            return http_error(c, 400,
                              "\"seconds\" parameter is not supported for this profile type");
        if (debug != 0)
            return http_error(c, 400, "seconds and debug params are incompatible");
        return http_delta(c, q, secs, allocs, display);
    }
    return http_send_cached(c, k, allocs, debug, display);
}

/* ---- control ----------------------------------------------------------------------- */

/* Constant time in the token's length: the comparison leaks no prefix. */
static bool http_authorized(struct MHD_Connection *c)
{
    const char *tok = hs_http_token();
    const char *h = hs_mhd.lookup(c, MHD_HEADER_KIND, "Authorization");
    if (!tok || !h || strncasecmp(h, "Bearer ", 7) != 0)
        return false;
    h += 7;
    size_t n = strlen(tok), m = strlen(h);
    unsigned diff = n != m;
    for (size_t i = 0; i < n; i++)
        diff |= (unsigned)(tok[i] ^ h[i < m ? i : 0]);
    return diff == 0;
}

/* The value of a control request: ?value=, else the body (blanks trimmed). */
static const char *http_value(struct MHD_Connection *c, http_req_t *q, char *buf, size_t cap)
{
    const char *v = http_arg(c, "value");
    if (v)
        return v;
    size_t n = q->body.len < cap - 1 ? q->body.len : cap - 1;
    memcpy(buf, q->body.data ? (const char *)q->body.data : "", n);
    buf[n] = '\0';
    while (n > 0 && strchr(" \t\r\n", buf[n - 1]))
        buf[--n] = '\0';
    return buf + strspn(buf, " \t\r\n");
}

static int http_control_do(const char *what, const char *v, struct MHD_Connection *c)
{
    char *end;
    if (strcmp(what, "active") == 0) {
        if (strcmp(v, "0") != 0 && strcmp(v, "1") != 0)
            return -EINVAL;
        return heapsift_set_active(v[0] == '1');
    }
    if (strcmp(what, "rate") == 0) {
        unsigned long long r = strtoull(v, &end, 10);
        return (*v && !*end) ? heapsift_set_rate(r) : -EINVAL;
    }
    if (strcmp(what, "reset") == 0)
        return heapsift_reset();
    if (strcmp(what, "dump") == 0) {
        const char *kind = http_arg(c, "kind");
        if (kind && strcmp(kind, "heap") != 0 && strcmp(kind, "peak") != 0)
            return -EINVAL;
        if (kind && strcmp(kind, "peak") == 0 && !hs_opt.peak)
            return -ENOTSUP; /* no kept peak: an empty profile would say nothing */
        return hs_dump(NULL, kind ? kind : "heap");
    }
    return -ENOENT;
}

/* A leak check (dump.c): the threads stopped for a reachability scan, then the heap
 * profile with reachable=yes|no labels; ?debug=1 and ?display= as for /debug/pprof/heap. */
static enum MHD_Result http_leakcheck(struct MHD_Connection *c)
{
    hs_profile_t *p = NULL;
    long debug = http_arg_num(c, "debug");
    if (debug < 0)
        return http_error(c, 400, "invalid value for \"debug\"");
    int rc = hs_dump_leakcheck(NULL, &p);
    if (rc == -EBUSY)
        return http_error(c, 409, "a reachability scan is running already");
    if (rc != 0) {
        char msg[128];
        snprintf(msg, sizeof(msg), "leak check failed: %s", strerror(-rc));
        return http_error(c, 500, msg);
    }
    enum MHD_Result r = http_send_profile(c, p, false, debug, http_arg(c, "display"));
    hs_profile_free(p);
    return r;
}

static enum MHD_Result http_control(struct MHD_Connection *c, http_req_t *q, const char *what)
{
    char buf[HS_HTTP_MAX_CONTROL_BODY + 1], msg[128];
    if (!hs_http_token())
        return http_error(c, 403, "control is off: start the program with HEAPSIFT_HTTP_TOKEN");
    if (!http_authorized(c))
        return http_error(c, 403, "forbidden: send the header 'Authorization: Bearer TOKEN'");
    if (q->too_big)
        return http_error(c, 413, "request body too large");
    if (strcmp(what, "leakcheck") == 0)
        return http_leakcheck(c);
    int rc = http_control_do(what, http_value(c, q, buf, sizeof(buf)), c);
    if (rc == -ENOENT)
        return http_error(c, 404, "unknown control: want active, rate, reset, dump or leakcheck");
    if (rc == -EINVAL)
        return http_error(c, 400,
                          "bad value: active takes 0 or 1, rate a number of bytes, "
                          "dump ?kind=heap or peak");
    if (rc == -ENOTSUP)
        return http_error(c, 409, "no peak is kept: start the program with HEAPSIFT_PEAK=1");
    if (rc != 0) {
        snprintf(msg, sizeof(msg), "failed: %s", strerror(-rc));
        return http_error(c, 500, msg);
    }
    for (int k = 0; k < HTTP_KINDS; k++)
        http_cache_drop(k); /* what the next request sees must reflect the change */
    return hs_http_reply(c, 200, "text/plain; charset=utf-8", "ok\n", 3);
}

/* ---- symbols ----------------------------------------------------------------------- */

/* Each query key ("0xA+0xB" arrives as the key "0xA 0xB") appended to the body. */
static enum MHD_Result http_symbol_key(void *cls, enum MHD_ValueKind kind, const char *key,
                                       const char *value)
{
    http_req_t *q = cls;
    (void)kind;
    (void)value;
    if (q->body.len + strlen(key) + 1 > HS_HTTP_MAX_BODY)
        q->too_big = true;
    else if (hs_buf_append(&q->body, key, strlen(key)) != 0 || hs_buf_append(&q->body, "+", 1))
        q->too_big = true;
    return MHD_YES;
}

/* GET: Go's answer, "num_symbols: 1", or with a query of addresses (Go's GET form) the
 * same lines as a POST. */
static enum MHD_Result http_symbol_get(struct MHD_Connection *c, http_req_t *q)
{
    hs_buf_t b = HS_BUF_INIT;
    hs_mhd.values(c, MHD_GET_ARGUMENT_KIND, http_symbol_key, q);
    if (q->too_big)
        return http_error(c, 413, "query too large");
    if (q->body.len == 0)
        return hs_http_reply(c, 200, "text/plain; charset=utf-8", "num_symbols: 1\n", 15);
    int rc = hs_http_symbols((const char *)q->body.data, q->body.len, &b);
    if (rc != 0) {
        hs_buf_free(&b);
        return http_error(c, 500, "cannot symbolize");
    }
    return hs_http_reply_buf(c, 200, "text/plain; charset=utf-8", &b);
}

/* ---- Prometheus ------------------------------------------------------------------- */

/* The sites come from the cached heap profile (no profile: the other series alone). */
static enum MHD_Result http_metrics(struct MHD_Connection *c)
{
    hs_buf_t b = HS_BUF_INIT;
    hs_profile_t *p = hs_opt.metrics_sites > 0 ? http_profile(HTTP_HEAP) : NULL;
    int rc = hs_http_metrics(&b, p, hs_http_count.builds);
    if (rc != 0) {
        hs_buf_free(&b);
        return http_error(c, 500, "cannot build the metrics");
    }
    return hs_http_reply_buf(c, 200, "text/plain; version=0.0.4; charset=utf-8", &b);
}

/* ---- dispatch ---------------------------------------------------------------------- */

static enum MHD_Result http_body_reply(struct MHD_Connection *c, int rc, hs_buf_t *b,
                                       const char *type)
{
    if (rc != 0) {
        hs_buf_free(b);
        return http_error(c, 500, "cannot build the answer");
    }
    return hs_http_reply_buf(c, 200, type, b);
}

static enum MHD_Result http_route(struct MHD_Connection *c, http_req_t *q, const char *url,
                                  bool get, bool post)
{
    hs_buf_t b = HS_BUF_INIT;
    static const char pp[] = "/debug/pprof/", hs[] = "/debug/heapsift/";
    if (strncmp(url, hs, sizeof(hs) - 1) == 0 && strcmp(url + sizeof(hs) - 1, "stats") != 0) {
        if (!post)
            return http_error(c, 405, "control paths take POST");
        return http_control(c, q, url + sizeof(hs) - 1);
    }
    if (post && strcmp(url, "/debug/pprof/symbol") == 0) {
        if (q->too_big)
            return http_error(c, 413, "request body too large");
        return http_body_reply(c, hs_http_symbols((const char *)q->body.data, q->body.len, &b), &b,
                               "text/plain; charset=utf-8");
    }
    if (!get)
        return http_error(c, 405, "method not allowed");
    if (strcmp(url, "/debug/pprof") == 0 || strcmp(url, pp) == 0)
        return http_body_reply(c, hs_http_index(&b), &b, "text/html; charset=utf-8");
    if (strcmp(url, "/debug/heapsift/stats") == 0)
        return http_body_reply(c, hs_http_stats_json(&b), &b, "application/json");
    if (strcmp(url, "/debug/pprof/symbol") == 0)
        return http_symbol_get(c, q);
    if (strcmp(url, "/metrics") == 0)
        return http_metrics(c);
    if (strcmp(url, "/debug/pprof/heap") == 0)
        return http_profile_path(c, q, HTTP_HEAP, false);
    if (strcmp(url, "/debug/pprof/allocs") == 0)
        return http_profile_path(c, q, HTTP_HEAP, true);
    if (strcmp(url, "/debug/pprof/peak") == 0)
        return http_profile_path(c, q, HTTP_PEAK, false);
    return http_error(c, 404, "unknown path: see /debug/pprof/");
}

enum MHD_Result hs_http_handle(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls)
{
    (void)cls;
    (void)version;
    http_req_t *q = *con_cls;
    if (!q) {
        if (!(q = calloc(1, sizeof(*q))))
            return MHD_NO;
        *con_cls = q;
        hs_http_count.requests++;
        return MHD_YES;
    }
    bool post = strcmp(method, "POST") == 0;
    if (*upload_size) {
        size_t cap =
            strcmp(url, "/debug/pprof/symbol") == 0 ? HS_HTTP_MAX_BODY : HS_HTTP_MAX_CONTROL_BODY;
        if (q->body.len + *upload_size > cap)
            q->too_big = true;
        else if (hs_buf_append(&q->body, upload, *upload_size) != 0)
            return MHD_NO;
        *upload_size = 0;
        return MHD_YES;
    }
    if (q->suspended)
        return MHD_YES; /* resumed spuriously: wait for the window */
    bool get = strcmp(method, "GET") == 0 || strcmp(method, "HEAD") == 0;
    return http_route(c, q, url, get, post);
}

static void http_window_remove(http_req_t *q)
{
    for (http_req_t **p = &http_windows; *p; p = &(*p)->next) {
        if (*p == q) {
            *p = q->next;
            http_nwindows--;
            return;
        }
    }
}

void hs_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                       enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)c;
    (void)toe;
    http_req_t *q = *con_cls;
    if (!q)
        return;
    if (q->suspended)
        http_window_remove(q);
    hs_dump_base_free(q->base);
    hs_buf_free(&q->body);
    free(q);
    *con_cls = NULL;
}

static void http_resume(http_req_t *q)
{
    http_window_remove(q);
    q->suspended = false;
    q->resumed = true;
    hs_mhd.resume(q->c);
}

int64_t hs_http_tick(int64_t now_ms)
{
    int64_t next = -1;
    for (http_req_t *q = http_windows, *n; q; q = n) {
        n = q->next;
        if (q->due_ms <= now_ms) {
            http_resume(q);
            next = 0; /* MHD takes it back in the next round */
        } else if (next < 0 || q->due_ms - now_ms < next)
            next = q->due_ms - now_ms;
    }
    for (int k = 0; k < HTTP_KINDS; k++) {
        int64_t age = now_ms - http_cache[k].built_ms;
        if (http_cache[k].prof && age >= HS_HTTP_CACHE_MS)
            http_cache_drop(k); /* the memory goes back while nobody asks */
        else if (http_cache[k].prof && (next < 0 || HS_HTTP_CACHE_MS - age < next))
            next = HS_HTTP_CACHE_MS - age;
    }
    return next;
}

void hs_http_resume_all(void)
{
    http_stopping = true;
    while (http_windows)
        http_resume(http_windows);
    for (int k = 0; k < HTTP_KINDS; k++)
        http_cache_drop(k);
}

int hs_http_windows_open(void)
{
    return http_nwindows;
}

void hs_http_routes_forget(void)
{
    http_windows = NULL;
    http_nwindows = 0;
    memset(http_cache, 0, sizeof(http_cache));
    hs_http_metrics_forget();
}

void hs_http_routes_restart(void)
{
    http_stopping = false;
}

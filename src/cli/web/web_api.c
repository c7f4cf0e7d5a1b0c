/*
 * `heapsift web`'s JSON API (web.h): dispatches /api/ paths and answers the ones about
 * targets and their rings; the profile views are in web_views.c.
 *
 *   /api/targets                       the targets, their state and last error
 *   /api/profiles?target=T             the ring: ids, labels, times, live heap, RSS, the
 *                                      sample types and accounting comments of each
 *   /api/top?target=T&id=I             `heapsift top` rows           (web_views.c)
 *   /api/diff?target=T&a=A&b=B         `heapsift diff A B` rows      (web_views.c)
 *   /api/flame?target=T&id=I[&base=A]  the call tree                 (web_views.c)
 *   /api/series?target=T               live heap (with its 95% interval) and RSS of
 *                                      each profile over time
 *   /api/history?target=T[&n=N&site=S] per-site history of the top sites (web_history.c)
 *   /api/stats?target=T&id=I           `heapsift stats` of profile I, as text
 *   /api/suspects?target=T[&from=A&to=B] leak suspects over the ring (web_views.c)
 *   /api/diagnose?target=T             `heapsift diagnose --json` over the kept profiles,
 *                                      oldest first: a series when there are several
 *   /api/source?target=T&id=I&fn=RE   `heapsift list` of profile I, as text (web_graph.c)
 *   /api/peek?target=T&id=I&fn=RE     `heapsift peek` of profile I: callers, callees (web_graph.c)
 *   /api/raw?target=T&id=I             the profile itself, gzipped pprof (web_views.c)
 *   POST /api/upload?name=FILE[&target=T] a profile sent by the page   (web_upload.c)
 *   POST /api/pin?target=T&id=I        pins profile I: kept past the ring (web_store.c)
 *   POST /api/unpin?target=T&id=I      unpins it
 *   POST /api/close?target=T           closes an uploaded target: its profiles are
 *                                      freed, and its place goes to the next upload
 *
 * Takes the store lock for the whole request; errors are {"error": "..."} with a 4xx/5xx
 * status.
 */
#include "web.h"

#include "reports/diagnose.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int hs_web_error(hs_web_req_t *q, int status, const char *msg)
{
    q->out->len = 0;
    hs_buf_append(q->out, "{\"error\":", 9);
    hs_json_str(q->out, msg);
    hs_buf_append(q->out, "}", 1);
    return status;
}

const hs_web_prof_t *hs_web_req_prof(hs_web_req_t *q, const char *name)
{
    const char *v = q->arg(q->ctx, name);
    char *end;
    unsigned long long id = v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end)
        return NULL;
    for (size_t i = 0; i < q->t->n; i++)
        if (q->t->ring[i].id == id)
            return &q->t->ring[i];
    return NULL;
}

static int api_target(hs_web_req_t *q)
{
    const char *v = q->arg(q->ctx, "target");
    char *end;
    unsigned long i = v ? strtoul(v, &end, 10) : 0;
    if (!v || !*v || *end || i >= q->s->ntargets)
        return hs_web_error(q, 404, "no such target");
    if (q->s->targets[i].closed)
        return hs_web_error(q, 404, "no such target (closed)");
    q->ti = i;
    q->t = &q->s->targets[i];
    return 0;
}

static const char *const api_kinds[] = {"file", "dir", "url", "upload"};

static int api_targets(hs_web_req_t *q)
{
    hs_buf_t *b = q->out;
    hs_buf_printf(b,
                  "{\"interval\":%g,\"ring\":%d,\"max_pins\":%d,\"upload_max\":%u,\"now\":%" PRId64
                  ",\"targets\":[",
                  q->s->interval, HS_WEB_RING, HS_WEB_PINS, HS_WEB_UPLOAD_MAX, hs_web_now_ms());
    bool first = true;
    for (size_t i = 0; i < q->s->ntargets; i++) {
        const hs_web_target_t *t = &q->s->targets[i];
        if (t->closed)
            continue;
        hs_buf_printf(b, "%s{\"index\":%zu,\"spec\":", first ? "" : ",", i);
        first = false;
        hs_json_str(b, t->spec);
        hs_buf_printf(b, ",\"kind\":\"%s\",\"heap_url\":", api_kinds[t->kind]);
        hs_json_str(b, t->heap_url);
        hs_buf_printf(b, ",\"profiles\":%zu,\"pins\":%zu,\"last_id\":", t->n, hs_web_store_pins(t));
        hs_json_int_or_null(b, t->n ? (int64_t)t->ring[t->n - 1].id : -1);
        hs_buf_printf(b, ",\"error\":");
        hs_json_str(b, t->error[0] ? t->error : NULL);
        hs_buf_printf(b, ",\"error_time\":");
        hs_json_int_or_null(b, t->error[0] ? t->error_ms : -1);
        hs_buf_printf(b, ",\"last_ok\":");
        hs_json_int_or_null(b, t->last_ok_ms ? t->last_ok_ms : -1);
        hs_buf_printf(b, ",\"polls\":%" PRIu64 ",\"failures\":%" PRIu64 "}", t->polls, t->failures);
    }
    return hs_buf_append(b, "]}", 2) ? 500 : 0;
}

/* The fields a profile and a series point share, from the opening brace on (left open). */
static void api_point(hs_buf_t *b, const hs_web_prof_t *p)
{
    hs_buf_printf(b, "{\"id\":%" PRIu64 ",\"time\":%" PRId64 ",\"label\":", p->id, p->time_ms);
    hs_json_str(b, p->label);
    hs_buf_printf(b, ",\"inuse\":");
    hs_json_int_or_null(b, p->inuse);
    hs_buf_printf(b, ",\"rss\":");
    hs_json_int_or_null(b, p->rss);
    hs_buf_printf(b, ",\"rss_from\":");
    hs_json_str(b, p->rss_from);
    hs_buf_printf(b, ",\"pinned\":%s", p->pinned ? "true" : "false");
}

static void api_profile(hs_buf_t *b, const hs_web_prof_t *p)
{
    const hs_profile_t *pr = p->prof;
    api_point(b, p);
    hs_buf_printf(b,
                  ",\"samples\":%zu,\"period\":%" PRId64 ",\"default_sample_type\":", pr->nsamples,
                  pr->period);
    hs_json_str(b, hs_profile_get_str(pr, pr->default_sample_type));
    hs_buf_printf(b, ",\"sample_types\":[");
    for (size_t i = 0; i < pr->ntypes; i++) {
        if (i)
            hs_buf_append(b, ",", 1);
        hs_json_str(b, hs_profile_get_str(pr, pr->sample_types[i].type));
    }
    hs_buf_printf(b, "],\"comments\":[");
    for (size_t i = 0; i < pr->ncomments; i++) {
        if (i)
            hs_buf_append(b, ",", 1);
        hs_json_str(b, hs_profile_get_str(pr, pr->comments[i]));
    }
    /* The endpoint's stats as text: the page parses it, a bad body cannot break ours. */
    hs_buf_printf(b, "],\"stats\":");
    hs_json_str(b, p->stats);
    hs_buf_append(b, "}", 1);
}

static int api_profiles(hs_web_req_t *q)
{
    hs_buf_t *b = q->out;
    hs_buf_printf(b, "{\"target\":%zu,\"profiles\":[", q->ti);
    for (size_t i = 0; i < q->t->n; i++) {
        if (i)
            hs_buf_append(b, ",", 1);
        api_profile(b, &q->t->ring[i]);
    }
    return hs_buf_append(b, "]}", 2) ? 500 : 0;
}

static int api_series(hs_web_req_t *q)
{
    hs_buf_t *b = q->out;
    hs_buf_printf(b, "{\"target\":%zu,\"points\":[", q->ti);
    for (size_t i = 0; i < q->t->n; i++) {
        if (i)
            hs_buf_append(b, ",", 1);
        double lo, hi;
        api_point(b, &q->t->ring[i]);
        hs_web_history_inuse(q->ti, &q->t->ring[i], &lo, &hi);
        hs_buf_printf(b, ",\"inuse_lo\":");
        hs_json_int_or_null(b, (int64_t)lo); /* null with inuse */
        hs_buf_printf(b, ",\"inuse_hi\":");
        hs_json_int_or_null(b, (int64_t)hi);
        hs_buf_append(b, "}", 1);
    }
    return hs_buf_append(b, "]}", 2) ? 500 : 0;
}

/* ?id=I[&bytes=1]: where the RSS went when profile I was written, the text `heapsift stats
 * [--bytes]` prints (hs_report_stats), headed by the profile's label; "available": false
 * (and no text) for a profile without heapsift's accounting comments. */
static int api_stats(hs_web_req_t *q)
{
    const hs_web_prof_t *p = hs_web_req_prof(q, "id");
    const char *bv = q->arg(q->ctx, "bytes");
    if (!p)
        return hs_web_error(q, 404, "no such profile (evicted from the ring?)");
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    int rc = m ? hs_report_stats(p->prof, p->label, bv && !strcmp(bv, "1"), m) : -ENOMEM;
    if (m && fclose(m) != 0 && rc == 0)
        rc = -ENOMEM;
    if (rc == 0 || rc == -ENOENT) {
        hs_buf_printf(q->out, "{\"id\":%" PRIu64 ",\"available\":%s,\"text\":", p->id,
                      rc == 0 ? "true" : "false");
        hs_json_str(q->out, rc == 0 ? text : NULL);
        rc = hs_buf_append(q->out, "}", 1) ? hs_web_error(q, 500, strerror(ENOMEM)) : 0;
    } else {
        rc = hs_web_error(q, 500, strerror(-rc));
    }
    free(text);
    return rc;
}

/* The findings engine (reports/diagnose.h) over every kept profile of the target, oldest
 * first (one profile, or the series of them), answered in its JSON contract
 * (docs/diagnose.md) with the target's spec as "target". */
static int api_diagnose(hs_web_req_t *q)
{
    const hs_profile_t *profs[HS_WEB_KEEP];
    hs_diagnosis_t d = {0};
    char err[512], *text = NULL;
    size_t len = 0;
    if (q->t->n == 0)
        return hs_web_error(q, 404, "no profile loaded yet");
    for (size_t i = 0; i < q->t->n; i++)
        profs[i] = q->t->ring[i].prof;
    int rc = hs_diagnose_profiles(&d, profs, q->t->n, err, sizeof(err));
    if (rc) {
        hs_diagnosis_free(&d);
        return hs_web_error(q, rc == -ENOMEM ? 500 : 400, err);
    }
    FILE *m = open_memstream(&text, &len);
    rc = m ? hs_diagnosis_write_json(&d, q->t->spec, m) : -ENOMEM;
    if (m && fclose(m) != 0 && rc == 0)
        rc = -ENOMEM;
    hs_diagnosis_free(&d);
    if (rc == 0 && hs_buf_append(q->out, text, len))
        rc = -ENOMEM;
    free(text);
    return rc ? hs_web_error(q, 500, strerror(-rc)) : 0;
}

/* POST ?id=I: pins or unpins profile I; {"id", "pinned", "pins", "max_pins"}. 409 when
 * HS_WEB_PINS are pinned already. */
static int api_pin_set(hs_web_req_t *q, bool pin)
{
    const char *v = q->arg(q->ctx, "id");
    char *end, err[160];
    unsigned long long id = v ? strtoull(v, &end, 10) : 0;
    if (!v || !*v || *end)
        return hs_web_error(q, 400, "id: a profile id");
    int rc = hs_web_store_pin(q->t, id, pin, err, sizeof(err));
    if (rc)
        return hs_web_error(q, rc == -ENOSPC ? 409 : 404, err);
    hs_buf_printf(q->out, "{\"id\":%llu,\"pinned\":%s,\"pins\":%zu,\"max_pins\":%d}", id,
                  pin ? "true" : "false", hs_web_store_pins(q->t), HS_WEB_PINS);
    return 0;
}

static int api_pin(hs_web_req_t *q)
{
    return api_pin_set(q, true);
}

static int api_unpin(hs_web_req_t *q)
{
    return api_pin_set(q, false);
}

/* POST: closes the target, an uploaded one; {"target", "closed"}. */
static int api_close(hs_web_req_t *q)
{
    if (q->t->kind != HS_WEB_UPLOAD)
        return hs_web_error(q, 400, "only an uploaded target can be closed");
    fprintf(stderr, "heapsift web: %s: closed (target %zu, %zu profiles)\n", q->t->spec, q->ti,
            q->t->n);
    hs_web_store_close(q->t);
    hs_buf_printf(q->out, "{\"target\":%zu,\"closed\":true}", q->ti);
    return 0;
}

typedef struct {
    const char *path;
    int (*fn)(hs_web_req_t *);
    bool needs_target;
    const char *type; /* NULL: application/json */
} api_route_t;

static const api_route_t api_routes[] = {
    {"/api/targets", api_targets, false, NULL},
    {"/api/profiles", api_profiles, true, NULL},
    {"/api/top", hs_web_view_top, true, NULL},
    {"/api/diff", hs_web_view_diff, true, NULL},
    {"/api/flame", hs_web_view_flame, true, NULL},
    {"/api/series", api_series, true, NULL},
    {"/api/suspects", hs_web_view_suspects, true, NULL},
    {"/api/diagnose", api_diagnose, true, NULL},
    {"/api/graph", hs_web_view_graph, true, NULL},
    {"/api/source", hs_web_view_source, true, NULL},
    {"/api/peek", hs_web_view_peek, true, NULL},
    {"/api/stats", api_stats, true, NULL},
    {"/api/history", hs_web_view_history, true, NULL},
    {"/api/raw", hs_web_view_raw, true, "application/octet-stream"},
};

static const api_route_t api_posts[] = {
    {"/api/pin", api_pin, true, NULL},
    {"/api/unpin", api_unpin, true, NULL},
    {"/api/close", api_close, true, NULL},
};

static const api_route_t *api_find(const api_route_t *routes, size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(path, routes[i].path) == 0)
            return &routes[i];
    return NULL;
}

bool hs_web_api_is_post(const char *path)
{
    return api_find(api_posts, sizeof(api_posts) / sizeof(api_posts[0]), path) != NULL;
}

/* Answers path by its route (NULL: unknown), under the store lock. */
static int api_answer(hs_web_req_t *q, const api_route_t *route, const char *path,
                      const char **type)
{
    int rc = 404;
    hs_web_store_lock();
    if (route) {
        rc = route->needs_target ? api_target(q) : 0;
        rc = rc ? rc : route->fn(q);
        if (rc == 0 && route->type)
            *type = route->type;
    } else if (hs_web_api_is_post(path)) {
        rc = hs_web_error(q, 405, "POST only");
    }
    if (rc == 404 && !q->t && q->out->len == 0)
        hs_web_error(q, 404, "no such API path");
    hs_web_store_unlock();
    if (rc == 0 && q->out->len == 0)
        rc = 500;
    return rc == 0 ? 200 : rc;
}

int hs_web_api(hs_web_store_t *s, const char *path, hs_web_arg_fn arg, void *ctx, hs_buf_t *out,
               const char **type)
{
    hs_web_req_t q = {s, arg, ctx, out, NULL, 0};
    *type = "application/json";
    return api_answer(&q, api_find(api_routes, sizeof(api_routes) / sizeof(api_routes[0]), path),
                      path, type);
}

int hs_web_api_post(hs_web_store_t *s, const char *path, hs_web_arg_fn arg, void *ctx,
                    hs_buf_t *out)
{
    hs_web_req_t q = {s, arg, ctx, out, NULL, 0};
    const char *type = "application/json";
    return api_answer(&q, api_find(api_posts, sizeof(api_posts) / sizeof(api_posts[0]), path), path,
                      &type);
}

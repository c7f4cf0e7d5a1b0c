/*
 * `heapsift web`'s internals, shared by its files: web.c (the verb: options, listening
 * socket, HTTP server, poll loop), web_store.c (the targets and their rings of profiles,
 * filled from files, directories and HTTP endpoints), web_api.c (the JSON API over the
 * common report model); the JSON writer is json.c. The page itself is
 * src/cli/web/index.html with the scripts and style sheet beside it, embedded at build time
 * as hs_web_page (web_page.c, generated).
 *
 * Threads: the HTTP server's thread runs the API, the main thread polls the targets. The
 * store's lock (hs_web_store_lock) guards every target and profile: the poller fetches
 * and parses without it and takes it only to add, evict or set an error; the API holds
 * it while it reads profiles.
 */
#ifndef HS_WEB_H
#define HS_WEB_H

#include "base/buf.h"
#include "kit/json.h"
#include "model/profile.h"
#include "reports/report.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HS_WEB_RING 32 /* profiles kept per target, the oldest evicted first */
#define HS_WEB_PINS 8  /* pinned profiles per target: kept past the ring until unpinned */
#define HS_WEB_KEEP (HS_WEB_RING + HS_WEB_PINS)

/* HS_WEB_UPLOAD: profiles sent by the page (POST /api/upload, web_upload.c), never polled. */
typedef enum { HS_WEB_FILE, HS_WEB_DIR, HS_WEB_URL, HS_WEB_UPLOAD } hs_web_kind_t;

/* One profile of a target's ring. */
typedef struct {
    uint64_t id;     /* per target, from 1, increasing; never reused */
    int64_t time_ms; /* the profile's time, else the file's mtime or the fetch time */
    char label[160]; /* file name, or "fetch N" */
    hs_profile_t *prof;
    int64_t inuse;        /* inuse_space total (bytes), -1 when the profile has no such type */
    int64_t rss;          /* bytes, -1 when unknown */
    const char *rss_from; /* "stats" (the endpoint's JSON), "profile" (its comments), "" */
    char *stats;          /* the endpoint's /debug/heapsift/stats body (JSON), or NULL */
    bool pinned;          /* never evicted (hs_web_store_pin) */
} hs_web_prof_t;

/* What was seen of a directory entry or a file: reloaded when it changes. */
typedef struct {
    char *name;
    int64_t mtime_ns, size;
} hs_web_seen_t;

typedef struct hs_web_fetcher hs_web_fetcher_t;

typedef struct {
    char *spec; /* as given on the command line */
    hs_web_kind_t kind;
    char *heap_url, *stats_url; /* HS_WEB_URL */
    /* The kept profiles, oldest first: the newest HS_WEB_RING unpinned ones and, wherever
     * they fall among them, up to HS_WEB_PINS pinned ones. */
    hs_web_prof_t ring[HS_WEB_KEEP];
    size_t n;
    uint64_t next_id;
    char error[512];              /* the last poll's error, "" when it went well */
    int64_t error_ms, last_ok_ms; /* when the current error began; the last profile */
    uint64_t polls, failures;
    hs_web_seen_t *seen; /* HS_WEB_FILE (one entry) and HS_WEB_DIR */
    size_t nseen;
    hs_web_fetcher_t *fetcher; /* HS_WEB_URL */
    /* HS_WEB_UPLOAD closed by the page (POST /api/close): no profiles, not listed, no
     * request finds it; the next new upload takes its place, its ids going on. */
    bool closed;
} hs_web_target_t;

typedef struct {
    hs_web_target_t *targets;
    size_t ntargets;
    double interval; /* seconds */
    size_t cap;      /* targets allocated (hs_web_store_reserve): uploads add up to it */
} hs_web_store_t;

/* ---- web_store.c -------------------------------------------------------------------- */

/* Classifies spec (an http:// or https:// URL, a profile file, a directory of them) and
 * adds it. Returns 0, or -ENOENT/-EINVAL with a message in err (the CLI's exit 2). */
int hs_web_store_add(hs_web_store_t *s, const char *spec, char *err, size_t errlen);
/* Polls every target once: new files, a new fetch. Never fails; errors are kept per
 * target and logged on stderr when they change. */
void hs_web_store_poll(hs_web_store_t *s);
void hs_web_store_free(hs_web_store_t *s);
/* Pins (pin true) or unpins profile id of t, with the store lock held. A pinned profile
 * stays while the ring rolls on; an unpinned one goes back to the ring's rule (evicted at
 * the next profile when HS_WEB_RING newer unpinned ones are kept). Returns 0, -ENOENT (no
 * such profile) or -ENOSPC (HS_WEB_PINS already pinned), with a message in err. */
int hs_web_store_pin(hs_web_target_t *t, uint64_t id, bool pin, char *err, size_t errlen);
/* Closes the uploaded target t, with the store lock held: frees its profiles. */
void hs_web_store_close(hs_web_target_t *t);
/* How many of t's profiles are pinned. */
size_t hs_web_store_pins(const hs_web_target_t *t);
void hs_web_store_lock(void);
void hs_web_store_unlock(void);
int64_t hs_web_now_ms(void);
/* Makes room for extra more targets once the command line's are added, so that an upload
 * adds one (under the lock) without moving the others. 0 or -ENOMEM. */
int hs_web_store_reserve(hs_web_store_t *s, size_t extra);
/* Adds a parsed profile (taking it and stats) to t's ring, evicting the oldest when full;
 * takes the lock. */
void hs_web_store_push(hs_web_target_t *t, hs_profile_t *prof, char *stats, int64_t time_ms,
                       const char *label);

/* ---- web_fetch.c -------------------------------------------------------------------- */

/* A reusable HTTP(S) client (libcurl). GETs url into out (cleared first), following
 * redirects, bounded in time and size. Returns 0, else -1 with a message in err (HTTP
 * status, connection refused, timeout...). */
hs_web_fetcher_t *hs_web_fetcher_new(void);
int hs_web_fetch(hs_web_fetcher_t *f, const char *url, double timeout, hs_buf_t *out, char *err,
                 size_t errlen);
void hs_web_fetcher_free(hs_web_fetcher_t *f);
int hs_web_fetch_global_init(void);

/* ---- web_api.c, web_views.c ---------------------------------------------------------- */

/* The argument named name of the current request, or NULL. */
typedef const char *(*hs_web_arg_fn)(void *ctx, const char *name);

/* Answers GET path (an /api/ path) into out, JSON unless *type says otherwise. Returns
 * the HTTP status (200, 400 bad argument, 404 unknown path/target/profile, 500 out of
 * memory). Takes the store lock. */
int hs_web_api(hs_web_store_t *s, const char *path, hs_web_arg_fn arg, void *ctx, hs_buf_t *out,
               const char **type);
/* Whether path is an API path answered to POST (/api/pin, /api/unpin), and its answer:
 * as hs_web_api, JSON. */
bool hs_web_api_is_post(const char *path);
int hs_web_api_post(hs_web_store_t *s, const char *path, hs_web_arg_fn arg, void *ctx,
                    hs_buf_t *out);

/* One API request, for the views. */
typedef struct {
    hs_web_store_t *s;
    hs_web_arg_fn arg;
    void *ctx;
    hs_buf_t *out;
    hs_web_target_t *t; /* the target argument's, once checked */
    size_t ti;
} hs_web_req_t;

/* Replaces the output with {"error": msg}; returns status. */
int hs_web_error(hs_web_req_t *q, int status, const char *msg);
/* The profile of q->t's ring whose id is the argument name, or NULL. */
const hs_web_prof_t *hs_web_req_prof(hs_web_req_t *q, const char *name);
/* The views (web_views.c): 0 with JSON in q->out, else the HTTP status of an error. */
/* The report options of q's view arguments (sample, focus, ignore, hide, granularity):
 * 0, or the status after answering 400. */
int hs_web_report_opts(hs_web_req_t *q, hs_report_opts_t *o);
/* Builds the report over profs (a second one is the diff base) with o: 0, or the status
 * after answering the error. */
int hs_web_report(hs_web_req_t *q, hs_report_t *r, const hs_profile_t *const *profs, size_t n,
                  const hs_report_opts_t *o);
/* The output unit of q's unit argument (B, kB, MB, GB, TB, PB: the page's one unit for every
 * byte figure) for values in sample_unit: that unit when they are bytes, else "minimum"
 * (pprof's choice, also when the argument is absent or "auto"); NULL for a bad unit. */
const char *hs_web_unit(hs_web_req_t *q, const char *sample_unit);
int hs_web_view_top(hs_web_req_t *q);
int hs_web_view_diff(hs_web_req_t *q);
int hs_web_view_flame(hs_web_req_t *q);
int hs_web_view_suspects(hs_web_req_t *q);
int hs_web_view_raw(hs_web_req_t *q);
/* The call graph (web_graph.c): {"svg", "names", "layout"}; the source listing {"text"} of
 * `heapsift list`, and the callers and callees {"text"} of `heapsift peek`. */
int hs_web_view_graph(hs_web_req_t *q);
int hs_web_view_source(hs_web_req_t *q);
int hs_web_view_peek(hs_web_req_t *q);
/* Per-site history (web_history.c): the top sites of B and their flat in every kept profile
 * with 95% intervals, and a chosen site's stacks. */
int hs_web_view_history(hs_web_req_t *q);
/* The 95% interval of p's live heap (p->inuse; p of target ti) from the report model's
 * sampling variance; [inuse, inuse] when exact or unknown. Store lock held. */
void hs_web_history_inuse(size_t ti, const hs_web_prof_t *p, double *lo, double *hi);

/* ---- web_upload.c: POST /api/upload?name=FILE[&target=T] ----------------------------- */

#define HS_WEB_UPLOAD_MAX (256u << 20) /* bytes of one uploaded profile */
#define HS_WEB_UPLOAD_TARGETS 16       /* uploaded targets at most */

typedef struct hs_web_upload hs_web_upload_t;

/* A new upload whose Content-Length header is length (NULL when chunked). */
hs_web_upload_t *hs_web_upload_new(const char *length);
/* True when the declared length is over HS_WEB_UPLOAD_MAX: answer 413 without reading. */
bool hs_web_upload_too_big(const hs_web_upload_t *u);
/* Keeps len more bytes of the body (dropped past HS_WEB_UPLOAD_MAX or out of memory). */
void hs_web_upload_feed(hs_web_upload_t *u, const char *data, size_t len);
/* The body is complete: parses it and adds it to the uploaded target of the target
 * argument, else to the uploaded target named after the name argument (a new one when
 * there is none). Returns the HTTP status
 * with JSON in out ({"target", "id", "spec", "label"} or {"error"}). */
int hs_web_upload_finish(hs_web_store_t *s, hs_web_upload_t *u, hs_web_arg_fn arg, void *ctx,
                         hs_buf_t *out);
void hs_web_upload_free(hs_web_upload_t *u);

/* ---- web_page.c (generated from src/cli/web/index.html) ----------------------------- */

extern const unsigned char hs_web_page[];
extern const size_t hs_web_page_len;

/* heapsift web (web.c): argv[0] is "web"; returns the process exit status. */
int hs_cmd_web(int argc, char **argv);

#endif

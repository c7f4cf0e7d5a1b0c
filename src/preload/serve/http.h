/*
 * The HTTP endpoint's internals, shared by http.c (lifecycle: libmicrohttpd loaded with
 * dlopen, the serving thread, limits, fork and exit), http_routes.c (what each path
 * answers, delta windows, the profile cache) and http_views.c (the bodies: index, JSON
 * statistics, symbols, quick views). Everything here runs on the one serving thread,
 * which holds the reentrancy guard for life; nothing here is ever called on an
 * application thread except hs_http_start (constructor), the fork/exit hooks, and
 * hs_http_pause/hs_http_restart (heapsift attach's calls, with the thread gone).
 */
#ifndef HS_HTTP_H
#define HS_HTTP_H

#include "base/buf.h"
#include "model/profile.h"

#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

/* Limits (docs/http.md). */
#define HS_HTTP_MAX_CONN 32         /* connections at once, all clients */
#define HS_HTTP_MAX_PER_IP 16       /* connections at once from one address */
#define HS_HTTP_IDLE_SECONDS 10     /* a connection idle this long is closed */
#define HS_HTTP_CONN_MEMORY 32768   /* bytes per connection for the request head */
#define HS_HTTP_MAX_BODY 1048576    /* POST body of /debug/pprof/symbol */
#define HS_HTTP_MAX_CONTROL_BODY 64 /* POST body of the control paths */
#define HS_HTTP_MAX_DELTAS 4        /* ?seconds=N windows open at once */
#define HS_HTTP_MAX_SECONDS 3600    /* longest ?seconds=N */
#define HS_HTTP_CACHE_MS 1000       /* a built profile is reused this long */
#define HS_HTTP_CPU_SHARE 0.25      /* the serving thread's CPU use, at most (of one core) */
#define HS_HTTP_ROUND_MS 2          /* at most one serving round per this many ms */

/* The libmicrohttpd functions used, resolved by dlsym (http.c). */
typedef struct {
    struct MHD_Daemon *(*start_daemon)(unsigned int, uint16_t, MHD_AcceptPolicyCallback, void *,
                                       MHD_AccessHandlerCallback, void *, ...);
    void (*stop_daemon)(struct MHD_Daemon *);
    enum MHD_Result (*run)(struct MHD_Daemon *);
    enum MHD_Result (*get_timeout)(struct MHD_Daemon *, MHD_UNSIGNED_LONG_LONG *);
    const union MHD_DaemonInfo *(*get_daemon_info)(struct MHD_Daemon *, enum MHD_DaemonInfoType,
                                                   ...);
    const union MHD_ConnectionInfo *(*get_connection_info)(struct MHD_Connection *,
                                                           enum MHD_ConnectionInfoType, ...);
    const char *(*lookup)(struct MHD_Connection *, enum MHD_ValueKind, const char *);
    struct MHD_Response *(*from_buffer)(size_t, void *, enum MHD_ResponseMemoryMode);
    enum MHD_Result (*add_header)(struct MHD_Response *, const char *, const char *);
    enum MHD_Result (*queue)(struct MHD_Connection *, unsigned int, struct MHD_Response *);
    void (*destroy_response)(struct MHD_Response *);
    void (*suspend)(struct MHD_Connection *);
    void (*resume)(struct MHD_Connection *);
    int (*values)(struct MHD_Connection *, enum MHD_ValueKind, MHD_KeyValueIterator, void *);
} hs_mhd_t;

extern hs_mhd_t hs_mhd;

/* ---- http.c ---------------------------------------------------------------------------- */

/* Starts the endpoint when HEAPSIFT_HTTP is set (constructor; profiling on). Failures
 * are logged once; profiling goes on without the endpoint. */
void hs_http_start(void);
/* heapsift detach: the serving thread stops the daemon (the listening socket and every
 * connection closed) and ends; waited for (at most 5 s, logged beyond). */
void hs_http_pause(void);
/* A re-attach: serves again on addr (NULL: this attach asked for no endpoint, none runs),
 * with that attach's port file and token (NULL: none). Also starts an endpoint the first
 * attach did not ask for. Logs why not. */
void hs_http_restart(const char *addr, const char *portfile, const char *token);
/* HEAPSIFT_HTTP_TOKEN, or NULL when unset. */
const char *hs_http_token(void);
/* Milliseconds on the monotonic clock. */
int64_t hs_http_now_ms(void);

/* ---- http_routes.c --------------------------------------------------------------------- */

/* The access handler and the request-completed callback given to MHD. */
enum MHD_Result hs_http_handle(void *cls, struct MHD_Connection *c, const char *url,
                               const char *method, const char *version, const char *upload,
                               size_t *upload_size, void **con_cls);
void hs_http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                       enum MHD_RequestTerminationCode toe);
/* Resumes the delta windows that are due and drops a stale cache. Returns the ms until
 * the next window is due, or -1 when none is open. */
int64_t hs_http_tick(int64_t now_ms);
/* Resumes every open window (before MHD_stop_daemon, which must not see one suspended). */
void hs_http_resume_all(void);
/* Before a restart after heapsift detach: requests are served again. */
void hs_http_routes_restart(void);
/* In a forked child: forget the parent's windows and cache (leaked, never touched). */
void hs_http_routes_forget(void);
/* The ?seconds=N windows open now (requests suspended, not yet answered). Serving thread. */
int hs_http_windows_open(void);

/* Queues a response of len bytes copied from data. Returns MHD_YES or MHD_NO. */
enum MHD_Result hs_http_reply(struct MHD_Connection *c, unsigned status, const char *type,
                              const void *data, size_t len);
/* Same, taking ownership of b's bytes (freed by MHD once sent). */
enum MHD_Result hs_http_reply_buf(struct MHD_Connection *c, unsigned status, const char *type,
                                  hs_buf_t *b);

/* ---- http_views.c ---------------------------------------------------------------------- */

/* The /debug/pprof/ index page. */
int hs_http_index(hs_buf_t *out);
/* /debug/heapsift/stats: heapsift_stats, the accounting and the endpoint's own counters. */
int hs_http_stats_json(hs_buf_t *out);
/* /debug/pprof/symbol POST: "0xADDR+0xADDR..." -> "0xADDR name" lines. */
int hs_http_symbols(const char *body, size_t len, hs_buf_t *out);
/* ?display=text|svg|flamegraph|stats of a profile (sample type st, NULL = default); sets
 * *type to the content type. -EINVAL for an unknown display. */
int hs_http_display(const hs_profile_t *p, const char *display, const char *st, hs_buf_t *out,
                    const char **type);

/* ---- http_metrics.c -------------------------------------------------------------------- */

/* GET /metrics in Prometheus' text format: counters and estimate from heapsift_stats, the
 * RSS parts, and the top sites of heap (the cached profile, NULL: none) whose build
 * number is build (the sites are formatted once per build). 0 or -errno. */
int hs_http_metrics(hs_buf_t *out, const hs_profile_t *heap, uint64_t build);
/* In a forked child: forget the parent's formatted sites (leaked, never touched). */
void hs_http_metrics_forget(void);

/* Counters of the endpoint, for the statistics. */
typedef struct {
    uint64_t requests, rejected, builds, deltas, throttled_ms;
} hs_http_counters_t;
extern hs_http_counters_t hs_http_count;

#endif

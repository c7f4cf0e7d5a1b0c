/*
 * `heapsift web [--listen ADDR] [--interval N] TARGET...`: a live web UI over profiles
 * and processes. One self-contained page (src/cli/web/index.html, embedded at build
 * time: no network needed) with the top table, a flame graph, a diff between any two
 * profiles, live heap and RSS over time and the leak suspects, over a JSON API
 * (web_api.c). TARGETs are polled every N seconds (web_store.c), keeping the last
 * HS_WEB_RING profiles of each.
 *
 * This file owns the verb: options, the listening socket (bound here, so a bad address
 * or a port in use is a clear error before anything starts), the HTTP server
 * (libmicrohttpd, one internal thread: requests are served one at a time, each short)
 * and the poll loop on the main thread until SIGINT or SIGTERM. The one request that is
 * not a GET, POST /api/upload (a profile file sent by the page), is fed to web_upload.c
 * as its body arrives. After start nothing is fatal: a target that fails is shown failing in the
 * page and logged on stderr. Exit codes: 0 (stopped by a signal), 1 usage or bad --listen, 2 bad
 * TARGET, 3 I/O (cannot listen: port in use, no permission).
 */
#define _GNU_SOURCE
#include "kit/netlib.h"
#include "kit/cli.h"
#include "web.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t web_stop;

static void web_on_signal(int sig)
{
    (void)sig;
    web_stop = 1;
}

static void web_usage(FILE *f)
{
    fprintf(f,
            "usage: heapsift web [--listen ADDR] [--interval N] TARGET...\n"
            "\n"
            "Serves a live web UI over heap profiles: the top table, a flame graph, the\n"
            "call graph, source lines, the diff between any two profiles, live heap and\n"
            "RSS over time, each top site's history, leak suspects; refinements as chips\n"
            "and the whole view in the URL.\n"
            "The page is self-contained (no network needed). Each TARGET is polled every\n"
            "N seconds and its last %d profiles are kept (and up to %d pinned ones):\n"
            "  http://HOST:PORT    a process serving /debug/pprof/heap (HEAPSIFT_HTTP, or\n"
            "                      any Go program); /debug/heapsift/stats gives RSS\n"
            "  FILE                a profile (any format heapsift reads), reloaded when it\n"
            "                      changes\n"
            "  DIR                 a directory of dumps, loaded in time order; new files\n"
            "                      are picked up at each poll\n"
            "The page also opens a profile file from the browser (\"Open profile...\" or a\n"
            "file dropped on it, up to %u MiB): it becomes a new target.\n"
            "\n"
            "  --listen ADDR       HOST:PORT, [IPV6]:PORT or PORT (default 127.0.0.1:8080;\n"
            "                      port 0 picks a free one). The URL is printed on stdout.\n"
            "  --interval N        seconds between polls (default 5; fractions allowed)\n"
            "  --help              show this help\n"
            "\nStops on SIGINT or SIGTERM.\n"
            "Exit status: 0 stopped, 1 usage or bad --listen, 2 bad TARGET, 3 cannot listen\n"
            "(port in use, no permission).\n",
            HS_WEB_RING, HS_WEB_PINS, HS_WEB_UPLOAD_MAX >> 20);
}

typedef struct {
    char host[256], port[16];
} web_addr_t;

/* Splits --listen into host and port. False when it is not HOST:PORT, [V6]:PORT, PORT. */
static bool web_parse_listen(const char *s, web_addr_t *a)
{
    const char *colon = strrchr(s, ':'), *port = s;
    size_t hl = 0;
    snprintf(a->host, sizeof(a->host), "127.0.0.1");
    if (colon) {
        const char *h = s;
        hl = (size_t)(colon - s);
        if (hl >= 2 && s[0] == '[' && s[hl - 1] == ']')
            h++, hl -= 2;
        else if (memchr(s, ':', hl))
            return false; /* a bare IPv6 address needs brackets */
        if (hl == 0 || hl >= sizeof(a->host))
            return false;
        snprintf(a->host, sizeof(a->host), "%.*s", (int)hl, h);
        port = colon + 1;
    }
    char *end;
    long p = strtol(port, &end, 10);
    if (!*port || *end || p < 0 || p > 65535)
        return false;
    snprintf(a->port, sizeof(a->port), "%ld", p);
    return true;
}

/* Binds and listens on a; prints the error and returns -1 on failure (*exit_code set). */
static int web_listen(const web_addr_t *a, const char *spec, int *family, int *exit_code)
{
    struct addrinfo hints = {0}, *res = NULL;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    int rc = getaddrinfo(a->host, a->port, &hints, &res), fd = -1, err = 0;
    if (rc != 0) {
        hs_cli_error("web: --listen %s: %s", spec, gai_strerror(rc));
        *exit_code = 1;
        return -1;
    }
    for (struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
        int one = 1;
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            err = errno;
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 64) != 0) {
            err = errno;
            close(fd);
            fd = -1;
        } else {
            *family = ai->ai_family;
        }
    }
    freeaddrinfo(res);
    if (fd < 0) {
        hs_cli_error("web: cannot listen on %s: %s%s", spec, strerror(err),
                     err == EADDRINUSE ? " (the port is in use: pick another with --listen)" : "");
        *exit_code = err == EADDRNOTAVAIL ? 1 : 3;
    }
    return fd;
}

/* "http://HOST:PORT/" of the bound socket (the real port when 0 was asked). */
static void web_url(int fd, char *out, size_t len)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;
    getsockname(fd, (struct sockaddr *)&ss, &sl);
    if (ss.ss_family == AF_INET6) {
        struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
        inet_ntop(AF_INET6, &s6->sin6_addr, host, sizeof(host));
        port = ntohs(s6->sin6_port);
        snprintf(out, len, "http://[%s]:%d/", host, port);
        return;
    }
    struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
    inet_ntop(AF_INET, &s4->sin_addr, host, sizeof(host));
    port = ntohs(s4->sin_port);
    snprintf(out, len, "http://%s:%d/", host, port);
}

static const char *web_arg(void *ctx, const char *name)
{
    return MHD_lookup_connection_value(ctx, MHD_GET_ARGUMENT_KIND, name);
}

static enum MHD_Result web_send(struct MHD_Connection *c, int status, const char *type,
                                const void *data, size_t len)
{
    struct MHD_Response *r =
        MHD_create_response_from_buffer(len, (void *)data, MHD_RESPMEM_MUST_COPY);
    if (!r)
        return MHD_NO;
    MHD_add_response_header(r, "Content-Type", type);
    MHD_add_response_header(r, "Cache-Control", "no-store");
    MHD_add_response_header(r, "X-Content-Type-Options", "nosniff");
    /* The page may load nothing from anywhere: it is self-contained by construction. */
    MHD_add_response_header(r, "Content-Security-Policy",
                            "default-src 'none'; script-src 'unsafe-inline'; style-src "
                            "'unsafe-inline'; connect-src 'self'; img-src data:");
    enum MHD_Result ret = MHD_queue_response(c, (unsigned)status, r);
    MHD_destroy_response(r);
    return ret;
}

/* *req of a POST that is not an upload (web_post): web_completed has nothing to free. */
static int web_post_mark;

/* POST /api/upload (web_upload.c): called with the headers (*req NULL), then with each
 * part of the body, then with none to answer. */
static enum MHD_Result web_upload(hs_web_store_t *s, struct MHD_Connection *c, const char *data,
                                  size_t *size, void **req)
{
    hs_web_upload_t *u = *req;
    hs_buf_t out = HS_BUF_INIT;
    int status;
    if (!u) {
        *req = u = hs_web_upload_new(
            MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH));
        if (u && !hs_web_upload_too_big(u))
            return MHD_YES;
        /* Too big or out of memory: answered before reading the body. */
    } else if (*size) {
        hs_web_upload_feed(u, data, *size);
        *size = 0;
        return MHD_YES;
    }
    if (u)
        status = hs_web_upload_finish(s, u, web_arg, c, &out);
    else
        status = 500, hs_buf_printf(&out, "{\"error\":\"out of memory\"}");
    enum MHD_Result ret = web_send(c, status, "application/json", out.data, out.len);
    hs_buf_free(&out);
    return ret;
}

/* A POST to the API (pin, unpin): its arguments are in the URL, a body is read and
 * dropped; answered once the request is complete. */
static enum MHD_Result web_post(struct MHD_Connection *c, hs_web_store_t *s, const char *url,
                                size_t *upload_size, void **req)
{
    if (!*req) {
        *req = &web_post_mark;
        return MHD_YES;
    }
    if (*upload_size) {
        *upload_size = 0;
        return MHD_YES;
    }
    hs_buf_t out = HS_BUF_INIT;
    int status = hs_web_api_post(s, url, web_arg, c, &out);
    enum MHD_Result ret =
        web_send(c, status, "application/json", out.data ? (const void *)out.data : "", out.len);
    hs_buf_free(&out);
    return ret;
}

/* Frees an upload's state when its request ends, answered or cut. */
static void web_completed(void *cls, struct MHD_Connection *c, void **req,
                          enum MHD_RequestTerminationCode code)
{
    (void)cls;
    (void)c;
    (void)code;
    if (*req != &web_post_mark)
        hs_web_upload_free(*req);
    *req = NULL;
}

static enum MHD_Result web_handle(void *cls, struct MHD_Connection *c, const char *url,
                                  const char *method, const char *version, const char *upload,
                                  size_t *upload_size, void **req)
{
    (void)version;
    hs_web_store_t *s = cls;
    if (strcmp(method, "POST") == 0 && strcmp(url, "/api/upload") == 0)
        return web_upload(s, c, upload, upload_size, req);
    if (strcmp(method, "POST") == 0 && hs_web_api_is_post(url))
        return web_post(c, s, url, upload_size, req);
    if (strcmp(method, "GET") != 0 && strcmp(method, "HEAD") != 0) {
        static const char msg[] =
            "only GET (and POST to /api/upload, /api/pin, /api/unpin, /api/close)\n";
        return web_send(c, 405, "text/plain", msg, sizeof(msg) - 1);
    }
    if (strcmp(url, "/") == 0 || strcmp(url, "/index.html") == 0)
        return web_send(c, 200, "text/html; charset=utf-8", hs_web_page, hs_web_page_len);
    if (strncmp(url, "/api/", 5) == 0) {
        hs_buf_t out = HS_BUF_INIT;
        const char *type;
        int status = hs_web_api(s, url, web_arg, c, &out, &type);
        enum MHD_Result ret =
            web_send(c, status, type, out.data ? (const void *)out.data : "", out.len);
        hs_buf_free(&out);
        return ret;
    }
    static const char nf[] = "not found\n";
    return web_send(c, 404, "text/plain", nf, sizeof(nf) - 1);
}

/* Sleeps about sec seconds, waking early when asked to stop. */
static void web_sleep(double sec)
{
    for (double left = sec; left > 0 && !web_stop; left -= 0.1) {
        struct timespec ts = {0, (long)((left < 0.1 ? left : 0.1) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Options into s, *listen and the targets; -1 to go on, else the exit status. */
static int web_options(int argc, char **argv, hs_web_store_t *s, const char **listen)
{
    char err[640];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            web_usage(stdout);
            return 0;
        } else if (!strncmp(a, "--listen", 8) && (a[8] == '=' || !a[8])) {
            v = a[8] ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
            *listen = v;
        } else if (!strncmp(a, "--interval", 10) && (a[10] == '=' || !a[10])) {
            v = a[10] ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
            char *end;
            s->interval = v ? strtod(v, &end) : 0;
            if (v && (!*v || *end || !(s->interval >= 0.1 && s->interval <= 86400))) {
                hs_cli_error("web: --interval wants seconds from 0.1 to 86400, not '%s'", v);
                return 1;
            }
        } else if (a[0] == '-' && a[1]) {
            hs_cli_error("web: unknown option '%s' (see heapsift web --help)", a);
            return 1;
        } else {
            int rc = hs_web_store_add(s, a, err, sizeof(err));
            if (rc) {
                hs_cli_error("web: %s", err);
                return rc == -ENOMEM ? 3 : 2;
            }
            continue;
        }
        if (!v) {
            hs_cli_error("web: missing value for %s", a);
            return 1;
        }
    }
    if (s->ntargets == 0) {
        hs_cli_error("web: no TARGET (see heapsift web --help)");
        return 1;
    }
    return -1;
}

int hs_cmd_web(int argc, char **argv)
{
    hs_web_store_t s = {NULL, 0, 5, 0};
    const char *listen_spec = "127.0.0.1:8080";
    web_addr_t addr;
    int rc, family = AF_INET, fd = -1;
    struct MHD_Daemon *d = NULL;
    char url[128];
    if ((rc = web_options(argc, argv, &s, &listen_spec)) >= 0)
        goto out;
    rc = 3;
    if (hs_web_store_reserve(&s, HS_WEB_UPLOAD_TARGETS) != 0) {
        hs_cli_error("web: %s", strerror(ENOMEM));
        goto out;
    }
    rc = 1;
    if (!web_parse_listen(listen_spec, &addr)) {
        hs_cli_error("web: --listen wants HOST:PORT, [IPV6]:PORT or PORT, not '%s'", listen_spec);
        goto out;
    }
    if ((fd = web_listen(&addr, listen_spec, &family, &rc)) < 0)
        goto out;
    rc = 3;
    char why[256];
    if (!hs_netlib_load(why, sizeof(why))) {
        hs_cli_error("web: %s", why);
        goto out;
    }
    if (hs_web_fetch_global_init() != 0) {
        hs_cli_error("web: cannot initialise libcurl");
        goto out;
    }
    web_url(fd, url, sizeof(url));
    d = MHD_start_daemon(MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ERROR_LOG |
                             (family == AF_INET6 ? MHD_USE_IPv6 : 0),
                         0, NULL, NULL, web_handle, &s, MHD_OPTION_LISTEN_SOCKET, fd,
                         MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_NOTIFY_COMPLETED,
                         web_completed, NULL, MHD_OPTION_END);
    if (!d) {
        hs_cli_error("web: cannot start the HTTP server on %s", listen_spec);
        goto out;
    }
    fd = -1; /* the daemon owns the socket now and closes it when stopped */
    struct sigaction sa = {0};
    sa.sa_handler = web_on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    hs_web_store_poll(&s);
    printf("heapsift web: serving %s (%zu target%s, polled every %g s)\n", url, s.ntargets,
           s.ntargets == 1 ? "" : "s", s.interval);
    fflush(stdout);
    while (!web_stop) {
        web_sleep(s.interval);
        if (!web_stop)
            hs_web_store_poll(&s);
    }
    rc = 0;
out:
    if (d)
        MHD_stop_daemon(d);
    if (fd >= 0)
        close(fd);
    hs_web_store_free(&s);
    return rc;
}

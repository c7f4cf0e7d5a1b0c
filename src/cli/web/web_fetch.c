/*
 * `heapsift web`'s HTTP client (web.h): GETs a process's /debug/pprof/heap and
 * /debug/heapsift/stats. Why libcurl rather than a small GET of our own: targets may be
 * https:// (a service behind TLS, Go's pprof endpoints behind a proxy), servers answer
 * with chunked encoding, redirects and keep-alive, and a poller must bound every step
 * (connect, whole transfer, body size) and say precisely what failed (refused, timed out,
 * HTTP 404); libcurl does all of that and is in Debian. It is dlopened when `web`
 * starts (kit/netlib.h), not linked: the other verbs do not load it. One easy handle per target,
 * reused, so connections stay open between polls. Used by the poll loop only (one thread).
 */
#include "hs_version.h"
#include "web.h"
#include "kit/netlib.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FETCH_MAX_BODY (512u << 20) /* a profile larger than this is refused */

struct hs_web_fetcher {
    CURL *curl;
    char errbuf[CURL_ERROR_SIZE];
};

int hs_web_fetch_global_init(void)
{
    return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -ENOMEM;
}

hs_web_fetcher_t *hs_web_fetcher_new(void)
{
    if (!hs_netlib_load(NULL, 0)) /* web.c says why when it starts */
        return NULL;
    hs_web_fetcher_t *f = calloc(1, sizeof(*f));
    if (f && !(f->curl = curl_easy_init())) {
        free(f);
        f = NULL;
    }
    return f;
}

void hs_web_fetcher_free(hs_web_fetcher_t *f)
{
    if (!f)
        return;
    curl_easy_cleanup(f->curl);
    free(f);
}

static size_t fetch_write(char *data, size_t size, size_t n, void *user)
{
    hs_buf_t *b = user;
    size_t len = size * n;
    if (b->len + len > FETCH_MAX_BODY || hs_buf_append(b, data, len) != 0)
        return 0; /* libcurl stops with CURLE_WRITE_ERROR */
    return len;
}

int hs_web_fetch(hs_web_fetcher_t *f, const char *url, double timeout, hs_buf_t *out, char *err,
                 size_t errlen)
{
    CURL *c = f->curl;
    long ms = (long)(timeout * 1000);
    out->len = 0;
    f->errbuf[0] = '\0';
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fetch_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, f->errbuf);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, ms > 1000 ? ms : 1000L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, ms > 1000 ? (ms < 5000 ? ms : 5000L) : 1000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "heapsift-web/" HS_VERSION);
    CURLcode rc = curl_easy_perform(c);
    if (rc != CURLE_OK) {
        if (rc == CURLE_WRITE_ERROR && out->len + 1 > FETCH_MAX_BODY)
            snprintf(err, errlen, "GET %s: body larger than %u MiB", url, FETCH_MAX_BODY >> 20);
        else
            snprintf(err, errlen, "GET %s: %s", url,
                     f->errbuf[0] ? f->errbuf : curl_easy_strerror(rc));
        return -1;
    }
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    if (status != 200) {
        snprintf(err, errlen, "GET %s: HTTP status %ld", url, status);
        return -1;
    }
    return 0;
}

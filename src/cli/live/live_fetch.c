/*
 * The HTTP client of diagnose's live targets (live.h): one GET of /debug/pprof/heap or
 * POST of /debug/heapsift/leakcheck at a time through libcurl (as web_fetch.c, for the
 * same reasons: https, chunked answers, bounded steps, precise errors); a POST carries
 * the bearer token. A leak check stops the process's threads for a scan: its timeout is
 * long.
 */
#include "kit/netlib.h"
#include "hs_version.h"
#include "live.h"

#include <stdio.h>
#include <string.h>

#define LIVE_MAX_BODY (512u << 20)

static size_t live_write(char *data, size_t size, size_t n, void *user)
{
    hs_buf_t *b = user;
    size_t len = size * n;
    if (b->len + len > LIVE_MAX_BODY || hs_buf_append(b, data, len) != 0)
        return 0;
    return len;
}

static void live_opts(CURL *c, const char *url, hs_buf_t *out, char *errbuf, bool post)
{
    curl_easy_setopt(c, CURLOPT_URL, url);
    curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, live_write);
    curl_easy_setopt(c, CURLOPT_WRITEDATA, out);
    curl_easy_setopt(c, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(c, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, post ? 300000L : 60000L);
    curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
    curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(c, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(c, CURLOPT_USERAGENT, "heapsift-diagnose/" HS_VERSION);
    if (post) {
        curl_easy_setopt(c, CURLOPT_POST, 1L);
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
    }
}

int hs_live_fetch(const char *url, bool post, const char *token, hs_buf_t *out, char *err,
                  size_t errlen)
{
    char errbuf[CURL_ERROR_SIZE] = "", auth[320];
    struct curl_slist *hdr = NULL;
    if (!hs_netlib_load(err, errlen))
        return -1;
    CURL *c = curl_easy_init();
    if (!c) {
        snprintf(err, errlen, "GET %s: cannot start libcurl", url);
        return -1;
    }
    out->len = 0;
    live_opts(c, url, out, errbuf, post);
    if (token && *token) {
        snprintf(auth, sizeof(auth), "Authorization: Bearer %s", token);
        hdr = curl_slist_append(NULL, auth);
        curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdr);
    }
    CURLcode rc = curl_easy_perform(c);
    long status = 0;
    curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
    curl_easy_cleanup(c);
    curl_slist_free_all(hdr);
    const char *m = post ? "POST" : "GET";
    if (rc != CURLE_OK) {
        snprintf(err, errlen, "%s %s: %s", m, url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
        return -1;
    }
    if (status != 200) {
        int k = (int)(out->len < 200 ? out->len : 200);
        while (k > 0 && (out->data[k - 1] == '\n' || out->data[k - 1] == '\r'))
            k--;
        snprintf(err, errlen, "%s %s: HTTP status %ld%s%.*s", m, url, status, k ? ": " : "", k,
                 k ? (const char *)out->data : "");
        return -1;
    }
    return 0;
}

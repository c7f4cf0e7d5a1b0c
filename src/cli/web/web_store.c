/*
 * `heapsift web`'s targets (web.h): what each command-line TARGET is (a process's HTTP
 * endpoint, a profile file, a directory of dumps), polling it, and the ring of its last
 * HS_WEB_RING profiles with the figures the series chart needs (live heap, RSS), and the
 * pinned ones (up to HS_WEB_PINS, kept past the ring until unpinned).
 *
 * - URL: GET <base>/debug/pprof/heap (any pprof a reader of ours takes: heapsift's, Go's)
 *   and <base>/debug/heapsift/stats (JSON; absent on a Go process, which is fine). A URL
 *   already naming a /debug/pprof/ path is fetched as given.
 * - File: loaded at start, and again whenever its mtime or size changes.
 * - Directory: every poll lists it and loads the files not seen before (or changed), by
 *   mtime then name; on the first scan only the newest HS_WEB_RING. Only profile-like
 *   names (.pb.gz, .pb, .pprof, .prof, .heap, .gz) count; heapsift's temporary files
 *   (".tmp.") are skipped, they are renamed into place when complete.
 * A failure (unreachable, bad profile) is kept as the target's error, shown in the page
 * and logged on stderr when it changes; it is never fatal. Fetching and parsing happen
 * without the store lock; only adding a profile and setting an error take it.
 */
#define _GNU_SOURCE
#include "readers/readers.h"
#include "symbolize/symbolize.h"
#include "base/sort.h"
#include "kit/netlib.h"
#include "kit/viewopts.h"
#include "web.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static pthread_mutex_t store_mu = PTHREAD_MUTEX_INITIALIZER;

void hs_web_store_lock(void)
{
    pthread_mutex_lock(&store_mu);
}

void hs_web_store_unlock(void)
{
    pthread_mutex_unlock(&store_mu);
}

int64_t hs_web_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool store_is_url(const char *s)
{
    return strncmp(s, "http://", 7) == 0 || strncmp(s, "https://", 8) == 0;
}

/* heap_url and stats_url of a URL target. */
static int store_urls(hs_web_target_t *t)
{
    const char *s = t->spec, *host = strstr(s, "://") + 3;
    const char *path = strchr(host, '/');
    const char *dbg = path ? strstr(path, "/debug/") : NULL;
    size_t base = dbg ? (size_t)(dbg - s) : strlen(s);
    while (!dbg && base > 0 && s[base - 1] == '/')
        base--;
    if (dbg && strstr(dbg, "/debug/pprof/"))
        t->heap_url = strdup(s);
    else if (asprintf(&t->heap_url, "%.*s/debug/pprof/heap", (int)base, s) < 0)
        t->heap_url = NULL;
    if (asprintf(&t->stats_url, "%.*s/debug/heapsift/stats", (int)base, s) < 0)
        t->stats_url = NULL;
    return t->heap_url && t->stats_url ? 0 : -ENOMEM;
}

int hs_web_store_add(hs_web_store_t *s, const char *spec, char *err, size_t errlen)
{
    hs_web_target_t *nt = realloc(s->targets, (s->ntargets + 1) * sizeof(*nt));
    if (!nt)
        return -ENOMEM;
    s->targets = nt;
    hs_web_target_t *t = memset(&nt[s->ntargets], 0, sizeof(*t));
    struct stat st;
    t->next_id = 1;
    if (!(t->spec = strdup(spec)))
        return -ENOMEM;
    if (store_is_url(spec)) {
        char why[200];
        t->kind = HS_WEB_URL;
        if (!hs_netlib_load(why, sizeof(why))) { /* libcurl or libmicrohttpd missing */
            snprintf(err, errlen, "%s: %s", spec, why);
            goto bad;
        }
        if (store_urls(t) || !(t->fetcher = hs_web_fetcher_new()))
            goto nomem;
    } else if (stat(spec, &st) != 0) {
        snprintf(err, errlen, "%s: %s (want a profile file, a directory or an http:// URL)", spec,
                 strerror(errno));
        goto bad;
    } else if (S_ISDIR(st.st_mode)) {
        t->kind = HS_WEB_DIR;
    } else if (S_ISREG(st.st_mode)) {
        t->kind = HS_WEB_FILE;
    } else {
        snprintf(err, errlen, "%s: not a regular file or a directory", spec);
        goto bad;
    }
    s->ntargets++;
    return 0;
nomem:
    snprintf(err, errlen, "%s", strerror(ENOMEM));
    free(t->heap_url);
    free(t->stats_url);
    free(t->spec);
    return -ENOMEM;
bad:
    free(t->spec);
    return -EINVAL;
}

static void store_prof_free(hs_web_prof_t *p)
{
    hs_profile_free(p->prof);
    free(p->stats);
    memset(p, 0, sizeof(*p));
}

/* The figures of a new profile: its inuse_space total and RSS. */
static void store_figures(hs_web_prof_t *p)
{
    const hs_profile_t *pr = p->prof;
    int si = hs_profile_sample_type_index(pr, "inuse_space");
    double v;
    p->inuse = si < 0 ? -1 : 0;
    for (size_t i = 0; si >= 0 && i < pr->nsamples; i++)
        p->inuse += pr->samples[i].values[si];
    p->rss = -1;
    p->rss_from = "";
    if (p->stats && hs_json_find_num(p->stats, "rss", &v) && v >= 0) {
        p->rss = (int64_t)v;
        p->rss_from = "stats";
        return;
    }
    for (size_t i = 0; i < pr->ncomments; i++) {
        const char *c = hs_profile_get_str(pr, pr->comments[i]);
        unsigned long long r;
        if (sscanf(c, "rss: rss=%llu", &r) == 1) {
            p->rss = (int64_t)r;
            p->rss_from = "profile";
        }
    }
}

/* Names unsymbolized frames from the binaries, like the other views do (viewopts.c). */
static void store_symbolize(hs_profile_t *p)
{
    for (size_t i = 0; i < p->nlocations; i++) {
        if (p->locations[i].nlines == 0 && p->locations[i].address != 0) {
            hs_profile_symbolize(p, true);
            return;
        }
    }
}

size_t hs_web_store_pins(const hs_web_target_t *t)
{
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++)
        n += t->ring[i].pinned;
    return n;
}

/* Evicts the oldest unpinned profiles of t until at most keep are left (lock held). */
static void store_evict(hs_web_target_t *t, size_t keep)
{
    size_t unpinned = t->n - hs_web_store_pins(t);
    for (size_t i = 0; i < t->n && unpinned > keep;) {
        if (t->ring[i].pinned) {
            i++;
            continue;
        }
        store_prof_free(&t->ring[i]);
        memmove(&t->ring[i], &t->ring[i + 1], (t->n - i - 1) * sizeof(t->ring[0]));
        t->n--;
        unpinned--;
    }
}

void hs_web_store_close(hs_web_target_t *t)
{
    for (size_t i = 0; i < t->n; i++)
        store_prof_free(&t->ring[i]);
    t->n = 0;
    t->closed = true;
}

int hs_web_store_pin(hs_web_target_t *t, uint64_t id, bool pin, char *err, size_t errlen)
{
    hs_web_prof_t *p = NULL;
    for (size_t i = 0; i < t->n && !p; i++)
        p = t->ring[i].id == id ? &t->ring[i] : NULL;
    if (!p) {
        snprintf(err, errlen, "no such profile (evicted from the ring?)");
        return -ENOENT;
    }
    if (pin && !p->pinned && hs_web_store_pins(t) >= HS_WEB_PINS) {
        snprintf(err, errlen, "at most %d profiles of a target can be pinned: unpin one first",
                 HS_WEB_PINS);
        return -ENOSPC;
    }
    p->pinned = pin;
    return 0;
}

/* Adds a parsed profile (taking it and stats) to t's ring under the lock, evicting the
 * oldest unpinned profile when the ring is full. */
static void store_push(hs_web_target_t *t, hs_profile_t *prof, char *stats, int64_t time_ms,
                       const char *label)
{
    hs_web_prof_t np = {0};
    np.prof = prof;
    np.stats = stats;
    np.time_ms = prof->time_nanos > 0 ? prof->time_nanos / 1000000 : time_ms;
    snprintf(np.label, sizeof(np.label), "%s", label);
    store_symbolize(prof);
    store_figures(&np);
    hs_web_store_lock();
    store_evict(t, HS_WEB_RING - 1);
    np.id = t->next_id++;
    t->ring[t->n++] = np;
    t->last_ok_ms = hs_web_now_ms();
    hs_web_store_unlock();
}

/* Records the outcome of a poll that did something: msg NULL or "" is success. Logged on
 * stderr when it differs from the last one. */
static void store_outcome(hs_web_target_t *t, const char *msg)
{
    msg = msg ? msg : "";
    hs_web_store_lock();
    bool changed = strcmp(t->error, msg) != 0, was = t->error[0] != '\0';
    snprintf(t->error, sizeof(t->error), "%s", msg);
    if (*msg && changed)
        t->error_ms = hs_web_now_ms(); /* failing since */
    if (*msg)
        t->failures++;
    hs_web_store_unlock();
    if (changed && *msg)
        fprintf(stderr, "heapsift web: %s: %s\n", t->spec, msg);
    else if (changed && was)
        fprintf(stderr, "heapsift web: %s: ok again\n", t->spec);
}

/* Reads and parses one file; on error writes "<name>: <why>" to err. */
static hs_profile_t *store_read(const char *path, const char *name, char *err, size_t errlen)
{
    hs_profile_t *p = NULL;
    char why[400];
    if (hs_profile_read_any(path, &p, why, sizeof(why)) != 0) {
        snprintf(err, errlen, "%s: %s", name, why);
        return NULL;
    }
    return p;
}

static int64_t store_mtime_ns(const struct stat *st)
{
    return (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
}

static void store_poll_file(hs_web_target_t *t)
{
    struct stat st;
    char err[512];
    if (stat(t->spec, &st) != 0) {
        snprintf(err, sizeof(err), "%s: %s", t->spec, strerror(errno));
        store_outcome(t, err);
        return;
    }
    if (t->nseen && t->seen[0].mtime_ns == store_mtime_ns(&st) && t->seen[0].size == st.st_size)
        return;
    if (!t->nseen && !(t->seen = calloc(1, sizeof(*t->seen))))
        return;
    t->nseen = 1;
    t->seen[0].mtime_ns = store_mtime_ns(&st);
    t->seen[0].size = st.st_size;
    const char *base = strrchr(t->spec, '/') ? strrchr(t->spec, '/') + 1 : t->spec;
    hs_profile_t *p = store_read(t->spec, base, err, sizeof(err));
    if (p)
        store_push(t, p, NULL, store_mtime_ns(&st) / 1000000, base);
    store_outcome(t, p ? NULL : err);
}

static hs_web_seen_t *store_seen_find(hs_web_target_t *t, const char *name)
{
    for (size_t i = 0; i < t->nseen; i++)
        if (strcmp(t->seen[i].name, name) == 0)
            return &t->seen[i];
    return NULL;
}

static int store_seen_cmp(const void *a, const void *b)
{
    const hs_web_seen_t *x = a, *y = b;
    if (x->mtime_ns != y->mtime_ns)
        return x->mtime_ns < y->mtime_ns ? -1 : 1;
    return strcmp(x->name, y->name);
}

/* The entries of the directory that are new or changed since the last scan, sorted by
 * mtime then name, and the seen list updated. Returns the count, or -errno. */
static long store_dir_new(hs_web_target_t *t, hs_web_seen_t **out)
{
    DIR *d = opendir(t->spec);
    if (!d)
        return -errno;
    hs_web_seen_t *nw = NULL;
    size_t n = 0;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d))) {
        struct stat st;
        if (!hs_view_profile_name(e->d_name))
            continue;
        snprintf(path, sizeof(path), "%s/%s", t->spec, e->d_name);
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode))
            continue;
        hs_web_seen_t cur = {e->d_name, store_mtime_ns(&st), st.st_size};
        hs_web_seen_t *old = store_seen_find(t, e->d_name);
        if (old && old->mtime_ns == cur.mtime_ns && old->size == cur.size)
            continue;
        hs_web_seen_t *grown = realloc(nw, (n + 1) * sizeof(*nw));
        if (!grown)
            break;
        nw = grown;
        if (!old) {
            hs_web_seen_t *sg = realloc(t->seen, (t->nseen + 1) * sizeof(*sg));
            char *name = strdup(e->d_name);
            t->seen = sg ? sg : t->seen;
            if (!sg || !name) {
                free(name);
                break;
            }
            old = &t->seen[t->nseen++];
            old->name = name;
        }
        if (!(cur.name = strdup(e->d_name))) {
            old->mtime_ns = -1; /* looked at again next time */
            break;
        }
        old->mtime_ns = cur.mtime_ns;
        old->size = cur.size;
        nw[n++] = cur;
    }
    closedir(d);
    hs_sort(nw, n, sizeof(*nw), store_seen_cmp);
    *out = nw;
    return (long)n;
}

static void store_poll_dir(hs_web_target_t *t)
{
    hs_web_seen_t *nw = NULL;
    char err[512] = "", path[4096];
    long n = store_dir_new(t, &nw);
    if (n < 0) {
        snprintf(err, sizeof(err), "%s: %s", t->spec, strerror((int)-n));
        store_outcome(t, err);
        return;
    }
    for (long i = 0; i < n; i++) {
        if (i >= n - HS_WEB_RING) {
            snprintf(path, sizeof(path), "%s/%s", t->spec, nw[i].name);
            hs_profile_t *p = store_read(path, nw[i].name, err, sizeof(err));
            if (p)
                store_push(t, p, NULL, nw[i].mtime_ns / 1000000, nw[i].name);
        }
        free(nw[i].name);
    }
    free(nw);
    if (n > 0)
        store_outcome(t, err);
}

static void store_poll_url(hs_web_target_t *t, double interval)
{
    hs_buf_t body = HS_BUF_INIT, plain = HS_BUF_INIT;
    char err[512], why[400];
    double timeout = interval < 10 ? (interval > 2 ? interval : 2) : 10;
    hs_profile_t *p = NULL;
    char *stats = NULL;
    if (hs_web_fetch(t->fetcher, t->heap_url, timeout, &body, err, sizeof(err)) != 0)
        goto out;
    if (hs_profile_parse_any(body.data, body.len, &p, why, sizeof(why)) != 0) {
        snprintf(err, sizeof(err), "GET %s: not a profile: %s", t->heap_url, why);
        goto out;
    }
    /* The stats are optional (a Go process has none): their failure is no error. */
    if (hs_web_fetch(t->fetcher, t->stats_url, timeout, &plain, why, sizeof(why)) == 0 &&
        plain.len > 0 && plain.data[0] == '{' && (stats = malloc(plain.len + 1))) {
        memcpy(stats, plain.data, plain.len);
        stats[plain.len] = '\0';
    }
    char label[64];
    time_t now = time(NULL);
    struct tm tm;
    strftime(label, sizeof(label), "fetched %H:%M:%S", localtime_r(&now, &tm));
    store_push(t, p, stats, hs_web_now_ms(), label);
    p = NULL;
    err[0] = '\0';
out:
    hs_buf_free(&body);
    hs_buf_free(&plain);
    store_outcome(t, err);
}

void hs_web_store_push(hs_web_target_t *t, hs_profile_t *prof, char *stats, int64_t time_ms,
                       const char *label)
{
    store_push(t, prof, stats, time_ms, label);
}

int hs_web_store_reserve(hs_web_store_t *s, size_t extra)
{
    hs_web_target_t *nt = realloc(s->targets, (s->ntargets + extra) * sizeof(*nt));
    if (!nt)
        return -ENOMEM;
    s->targets = nt;
    s->cap = s->ntargets + extra;
    return 0;
}

void hs_web_store_poll(hs_web_store_t *s)
{
    hs_web_store_lock(); /* an upload may add a target meanwhile (never moving them) */
    size_t n = s->ntargets;
    hs_web_store_unlock();
    for (size_t i = 0; i < n; i++) {
        hs_web_target_t *t = &s->targets[i];
        if (t->kind == HS_WEB_UPLOAD)
            continue;
        if (t->kind == HS_WEB_URL)
            store_poll_url(t, s->interval);
        else if (t->kind == HS_WEB_FILE)
            store_poll_file(t);
        else
            store_poll_dir(t);
        hs_web_store_lock();
        t->polls++;
        hs_web_store_unlock();
    }
}

void hs_web_store_free(hs_web_store_t *s)
{
    for (size_t i = 0; i < s->ntargets; i++) {
        hs_web_target_t *t = &s->targets[i];
        for (size_t k = 0; k < t->n; k++)
            store_prof_free(&t->ring[k]);
        for (size_t k = 0; k < t->nseen; k++)
            free(t->seen[k].name);
        free(t->seen);
        free(t->spec);
        free(t->heap_url);
        free(t->stats_url);
        hs_web_fetcher_free(t->fetcher);
    }
    free(s->targets);
    s->targets = NULL;
    s->ntargets = 0;
}

/*
 * `heapsift web`'s uploads (web.h): a profile file the page sends (its "Open profile…"
 * button, or a file dropped on it) as the raw body of POST /api/upload?name=FILE, in any
 * format heapsift reads (hs_profile_parse_any: pprof gzipped or not, gperftools,
 * jemalloc, Go's legacy text, a spool). It becomes a new target of kind HS_WEB_UPLOAD,
 * named after the file (at most HS_WEB_UPLOAD_TARGETS of them, in the room
 * hs_web_store_reserve made, so no target moves under the poller), or joins the uploaded
 * target given as &target=T, or else the uploaded target of the same name (a file sent
 * again, a newer dump of it: then the two can be diffed). Uploaded targets are never
 * polled; their ring is the same as any target's. A new one takes the place of a target
 * the page closed, if any (its ids go on from the closed one's: the History's cache is
 * keyed by place and id).
 *
 * web.c feeds the body here as libmicrohttpd hands it over. A body over
 * HS_WEB_UPLOAD_MAX bytes is refused with 413: at once when its Content-Length says so,
 * else once it is read (what comes past the limit is dropped, not kept). A body that is
 * no profile is a 400 with the reader's message; nothing here is fatal to the server.
 * Parsing happens without the store lock; adding the target and the profile take it.
 */
#define _GNU_SOURCE
#include "readers/readers.h"
#include "web.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hs_web_upload {
    hs_buf_t body;
    unsigned long long declared; /* Content-Length, 0 when absent */
    bool over;                   /* more than HS_WEB_UPLOAD_MAX bytes came (or were declared) */
    bool nomem;
};

hs_web_upload_t *hs_web_upload_new(const char *length)
{
    hs_web_upload_t *u = calloc(1, sizeof(*u));
    char *end;
    if (!u)
        return NULL;
    if (length && *length) {
        u->declared = strtoull(length, &end, 10);
        u->over = u->declared > HS_WEB_UPLOAD_MAX;
    }
    return u;
}

bool hs_web_upload_too_big(const hs_web_upload_t *u)
{
    return u->declared > HS_WEB_UPLOAD_MAX;
}

void hs_web_upload_feed(hs_web_upload_t *u, const char *data, size_t len)
{
    if (u->over || u->nomem)
        return;
    if (u->body.len + len > HS_WEB_UPLOAD_MAX) {
        u->over = true;
        hs_buf_free(&u->body);
        return;
    }
    /* The declared length at once: one allocation rather than doublings. */
    if (u->body.cap == 0 && u->declared > len && hs_buf_reserve(&u->body, u->declared) != 0)
        u->nomem = true;
    if (!u->nomem && hs_buf_append(&u->body, data, len) != 0)
        u->nomem = true;
    if (u->nomem)
        hs_buf_free(&u->body);
}

void hs_web_upload_free(hs_web_upload_t *u)
{
    if (!u)
        return;
    hs_buf_free(&u->body);
    free(u);
}

static int upload_error(hs_buf_t *out, int status, const char *msg)
{
    out->len = 0;
    hs_buf_append(out, "{\"error\":", 9);
    hs_json_str(out, msg);
    hs_buf_append(out, "}", 1);
    return status;
}

/* The file's name from the name argument: its last path component, "upload" when none. */
static void upload_name(const char *arg, char *name, size_t len)
{
    const char *slash = arg ? strrchr(arg, '/') : NULL;
    const char *base = slash ? slash + 1 : arg;
    snprintf(name, len, "%s", base && *base ? base : "upload");
}

/* The target the profile goes to: the target argument's (an uploaded one), else the
 * uploaded target named name, else a new one. Under the lock. NULL with the status in *status and
 * the error in out. */
static hs_web_target_t *upload_target(hs_web_store_t *s, const char *targ, const char *name,
                                      size_t *ti, int *status, hs_buf_t *out)
{
    if (targ && *targ) {
        char *end;
        unsigned long i = strtoul(targ, &end, 10);
        if (*end || i >= s->ntargets || s->targets[i].kind != HS_WEB_UPLOAD) {
            *status = upload_error(out, 400, "target: not an uploaded target");
            return NULL;
        }
        *ti = i;
        return &s->targets[i];
    }
    size_t closed = s->ntargets;
    for (size_t i = 0; i < s->ntargets; i++) {
        const hs_web_target_t *t = &s->targets[i];
        if (t->kind == HS_WEB_UPLOAD && t->closed && closed == s->ntargets)
            closed = i;
        if (t->kind == HS_WEB_UPLOAD && !t->closed && strcmp(t->spec, name) == 0) {
            *ti = i; /* the same file again (a newer dump of it): one more profile */
            return &s->targets[i];
        }
    }
    if (closed == s->ntargets && s->ntargets >= s->cap) {
        char msg[128];
        snprintf(msg, sizeof(msg), "too many targets: at most %d uploaded ones (close one)",
                 HS_WEB_UPLOAD_TARGETS);
        *status = upload_error(out, 409, msg);
        return NULL;
    }
    char *spec = strdup(name);
    if (!spec) {
        *status = upload_error(out, 500, strerror(ENOMEM));
        return NULL;
    }
    hs_web_target_t *t = &s->targets[closed];
    uint64_t next_id = closed < s->ntargets ? t->next_id : 1;
    if (closed < s->ntargets)
        free(t->spec);
    else
        s->ntargets++;
    memset(t, 0, sizeof(*t));
    t->spec = spec;
    t->kind = HS_WEB_UPLOAD;
    t->next_id = next_id;
    t->polls = 1;
    *ti = closed;
    return t;
}

/* {"target", "id", "spec", "label", "samples"} of the profile just added. */
static int upload_answer(hs_web_store_t *s, size_t ti, hs_buf_t *out)
{
    hs_web_store_lock();
    const hs_web_target_t *t = &s->targets[ti];
    const hs_web_prof_t *p = &t->ring[t->n - 1];
    hs_buf_printf(out, "{\"target\":%zu,\"id\":%" PRIu64 ",\"spec\":", ti, p->id);
    hs_json_str(out, t->spec);
    hs_buf_printf(out, ",\"label\":");
    hs_json_str(out, p->label);
    hs_buf_printf(out, ",\"samples\":%zu}", p->prof->nsamples);
    hs_web_store_unlock();
    return 200;
}

int hs_web_upload_finish(hs_web_store_t *s, hs_web_upload_t *u, hs_web_arg_fn arg, void *ctx,
                         hs_buf_t *out)
{
    char name[160], why[400], msg[640];
    hs_profile_t *p = NULL;
    upload_name(arg(ctx, "name"), name, sizeof(name));
    if (u->over) {
        snprintf(msg, sizeof(msg), "%s: too large (over %u MiB, the most heapsift web takes)", name,
                 HS_WEB_UPLOAD_MAX >> 20);
        return upload_error(out, 413, msg);
    }
    if (u->nomem)
        return upload_error(out, 500, strerror(ENOMEM));
    if (u->body.len == 0) {
        snprintf(msg, sizeof(msg), "%s: empty file", name);
        return upload_error(out, 400, msg);
    }
    if (hs_profile_parse_any(u->body.data, u->body.len, &p, why, sizeof(why)) != 0) {
        snprintf(msg, sizeof(msg), "%s: not a profile heapsift reads: %s", name, why);
        return upload_error(out, 400, msg);
    }
    hs_buf_free(&u->body);
    int status = 0;
    size_t ti = 0;
    hs_web_store_lock();
    hs_web_target_t *t = upload_target(s, arg(ctx, "target"), name, &ti, &status, out);
    if (t)
        t->last_ok_ms = hs_web_now_ms();
    hs_web_store_unlock();
    if (!t) {
        hs_profile_free(p);
        return status;
    }
    fprintf(stderr, "heapsift web: %s: uploaded (%zu samples) to target %zu\n", name, p->nsamples,
            ti);
    hs_web_store_push(t, p, NULL, hs_web_now_ms(), name);
    return upload_answer(s, ti, out);
}

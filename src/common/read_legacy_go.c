/*
 * What pprof does to Go's ?debug=1 heap text after it has symbolized it, done here from
 * the `#` frame comments alone (read_legacy.c calls it once the records are read): the
 * root frame that Go leaves unnamed is runtime.goexit (printStackRecord hides exactly that
 * one once it shows a frame), and the allocator's runtime frames are pruned as pprof's
 * Profile.Prune does with the legacy drop/keep expressions: from the root, past the
 * runtime frames before the first user frame, cut at the first frame that matches. Pure:
 * no I/O, no globals; POSIX extended expressions stand for RE2 (the patterns use only
 * alternation, groups, classes, `.*` and `?`).
 */
#include "read_legacy.h"

#include <errno.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pprof's simplifyFunc: a leading '.' dropped, cut at the first '(' that does not start
 * a reserved name. The result is in buf (n bytes). */
static const char *lgo_simplify(const char *f, char *buf, size_t n)
{
    static const char *const reserved[] = {"(anonymous namespace)", "operator()"};
    if (*f == '.')
        f++;
    size_t len = strlen(f);
    for (const char *p = strchr(f, '('); p; p = strchr(p + 1, '(')) {
        bool res = false;
        for (size_t k = 0; k < 2; k++)
            res = res || strncmp(p, reserved[k], strlen(reserved[k])) == 0;
        if (!res) {
            len = (size_t)(p - f);
            break;
        }
    }
    if (len >= n)
        len = n - 1;
    memcpy(buf, f, len);
    buf[len] = '\0';
    return buf;
}

static bool lgo_drops(const hs_profile_t *p, const regex_t *drop, const regex_t *keep, uint64_t fid)
{
    const hs_function_t *fn = hs_profile_function(p, fid);
    const char *name = fn ? hs_profile_get_str(p, fn->name) : "";
    char buf[1024];
    if (!*name)
        return false;
    const char *s = lgo_simplify(name, buf, sizeof(buf));
    return regexec(drop, s, 0, NULL, 0) == 0 && regexec(keep, s, 0, NULL, 0) != 0;
}

/* Marks per location: 1 prune beneath it, 2 prune it whole; cuts the lines of a location
 * whose inlined frames match below its outermost one. */
static void lgo_mark(hs_profile_t *p, const regex_t *drop, const regex_t *keep, uint8_t *mark)
{
    for (size_t i = 0; i < p->nlocations; i++) {
        hs_location_t *l = &p->locations[i];
        size_t k = l->nlines;
        while (k > 0 && !lgo_drops(p, drop, keep, l->lines[k - 1].function_id))
            k--;
        if (k == 0)
            continue;
        mark[i] = k == l->nlines ? 2 : 1;
        if (k < l->nlines) {
            memmove(l->lines, l->lines + k, (l->nlines - k) * sizeof(*l->lines));
            l->nlines -= k;
        }
    }
}

static void lgo_prune_samples(hs_profile_t *p, const uint8_t *mark)
{
    for (size_t i = 0; i < p->nsamples; i++) {
        hs_sample_t *s = &p->samples[i];
        bool user = false;
        for (size_t k = s->nlocs; k-- > 0;) {
            uint8_t m = mark[s->location_ids[k] - 1];
            if (!m) {
                user = true;
                continue;
            }
            if (!user)
                continue;
            s->nlocs = m == 2 ? k : k + 1;
            break;
        }
    }
}

/* Names the unnamed root of every stack that has a named frame runtime.goexit. */
static int lgo_name_goexit(hs_profile_t *p)
{
    uint64_t fid = 0;
    for (size_t i = 0; i < p->nsamples; i++) {
        const hs_sample_t *s = &p->samples[i];
        if (s->nlocs < 2)
            continue;
        hs_location_t *root = &p->locations[s->location_ids[s->nlocs - 1] - 1];
        if (root->nlines || !p->locations[s->location_ids[0] - 1].nlines)
            continue;
        if (!fid && !(fid = hs_profile_add_function(p, "runtime.goexit", "runtime.goexit", "", 0)))
            return -ENOMEM;
        if (!(root->lines = calloc(1, sizeof(*root->lines))))
            return -ENOMEM;
        root->lines[0].function_id = fid;
        root->nlines = 1;
    }
    return 0;
}

int hs_legacy_go_finish(hs_profile_t *p)
{
    int rc = lgo_name_goexit(p);
    if (rc)
        return rc;
    size_t dn = strlen(hs_legacy_alloc_drop_rx) + 8, kn = strlen(hs_legacy_alloc_keep_rx) + 8;
    char *d = malloc(dn), *k = malloc(kn);
    uint8_t *mark = calloc(p->nlocations + 1, 1);
    regex_t drop, keep;
    bool dok = false, kok = false;
    rc = -ENOMEM;
    if (!d || !k || !mark)
        goto out;
    snprintf(d, dn, "^(%s)$", hs_legacy_alloc_drop_rx);
    snprintf(k, kn, "^(%s)$", hs_legacy_alloc_keep_rx);
    dok = regcomp(&drop, d, REG_EXTENDED | REG_NOSUB) == 0;
    kok = regcomp(&keep, k, REG_EXTENDED | REG_NOSUB) == 0;
    if (!dok || !kok)
        goto out;
    lgo_mark(p, &drop, &keep, mark);
    lgo_prune_samples(p, mark);
    rc = 0;
out:
    if (dok)
        regfree(&drop);
    if (kok)
        regfree(&keep);
    free(d);
    free(k);
    free(mark);
    return rc;
}

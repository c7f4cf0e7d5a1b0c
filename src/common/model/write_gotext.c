/*
 * Go's debug=1 heap text from a profile (write_gotext.h). Go prints the raw sampled
 * counts and lets the reader unscale them (pprof's scaleHeapSample: each (count, bytes)
 * pair is multiplied by 1/(1-exp(-avg/rate)), avg = bytes/count); a profile holds the
 * unscaled estimates, so each pair is divided by the same factor here. For a stack that
 * allocates one size this is exact; with several sizes the reader's average-size
 * approximation is Go's own. Rate 1 means no scaling.
 */
#include "write_gotext.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

/* The sampled count and bytes behind an estimate (inverse of pprof's scaleHeapSample). */
static void gt_unscale(int64_t objects, int64_t bytes, int64_t rate, int64_t out[2])
{
    out[0] = objects;
    out[1] = bytes;
    if (rate <= 1 || objects <= 0 || bytes <= 0)
        return;
    double avg = (double)bytes / (double)objects;
    double keep = 1 - exp(-avg / (double)rate); /* 1 / scale */
    out[0] = llround((double)objects * keep);
    out[1] = llround((double)bytes * keep);
    if (out[0] < 1)
        out[0] = 1;
    if (out[1] < 1)
        out[1] = 1;
}

/* A name the reader takes as one token: the name, else the symbol-table name when the
 * name has blanks (demangled C++), else nothing. */
static const char *gt_name(const hs_profile_t *p, const hs_function_t *f)
{
    const char *n = hs_profile_get_str(p, f->name);
    if (*n && !strpbrk(n, " \t"))
        return n;
    n = hs_profile_get_str(p, f->system_name);
    return *n && !strpbrk(n, " \t") ? n : NULL;
}

static int gt_frames(const hs_profile_t *p, const hs_sample_t *s, hs_buf_t *out)
{
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < s->nlocs; i++) {
        const hs_location_t *l = hs_profile_location(p, s->location_ids[i]);
        for (size_t k = 0; l && rc == 0 && k < l->nlines; k++) {
            const hs_function_t *f = hs_profile_function(p, l->lines[k].function_id);
            const char *name = f ? gt_name(p, f) : NULL;
            if (!name)
                continue;
            const char *file = hs_profile_get_str(p, f->filename);
            /* Like Go's CallersFrames: the record has return addresses, the comment the
             * address inside the call (the location's). */
            rc = hs_buf_printf(out, "#\t%#" PRIx64 "\t%s+0x0\t%s:%" PRId64 "\n", l->address, name,
                               *file ? file : "?", l->lines[k].line);
        }
    }
    return rc;
}

static int gt_record(const hs_profile_t *p, const hs_sample_t *s, const int idx[4], int64_t rate,
                     hs_buf_t *out)
{
    int64_t a[2], u[2];
    gt_unscale(s->values[idx[0]], s->values[idx[1]], rate, a);
    gt_unscale(s->values[idx[2]], s->values[idx[3]], rate, u);
    int rc = hs_buf_printf(out, "%" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64 "] @", u[0], u[1],
                           a[0], a[1]);
    for (size_t i = 0; rc == 0 && i < s->nlocs; i++) {
        const hs_location_t *l = hs_profile_location(p, s->location_ids[i]);
        rc = hs_buf_printf(out, " %#" PRIx64, (l ? l->address : 0) + 1);
    }
    if (rc == 0)
        rc = hs_buf_append(out, "\n", 1);
    return rc ? rc : gt_frames(p, s, out);
}

static int gt_mappings(const hs_profile_t *p, hs_buf_t *out)
{
    int rc = hs_buf_printf(out, "\nMAPPED_LIBRARIES:\n");
    for (size_t i = 0; rc == 0 && i < p->nmappings; i++) {
        const hs_mapping_t *m = &p->mappings[i];
        rc = hs_buf_printf(out, "%08" PRIx64 "-%08" PRIx64 " r-xp %08" PRIx64 " 00:00 0 %s\n",
                           m->memory_start, m->memory_limit, m->file_offset,
                           hs_profile_get_str(p, m->filename));
    }
    return rc;
}

int hs_write_gotext(const hs_profile_t *p, hs_buf_t *out)
{
    static const char *const names[4] = {"alloc_objects", "alloc_space", "inuse_objects",
                                         "inuse_space"};
    int idx[4];
    int64_t tot[4] = {0, 0, 0, 0}, rate = p->period > 0 ? p->period : 1;
    for (int k = 0; k < 4; k++)
        if ((idx[k] = hs_profile_sample_type_index(p, names[k])) < 0)
            return -EINVAL;
    for (size_t i = 0; i < p->nsamples; i++) {
        int64_t a[2], u[2];
        const hs_sample_t *s = &p->samples[i];
        gt_unscale(s->values[idx[0]], s->values[idx[1]], rate, a);
        gt_unscale(s->values[idx[2]], s->values[idx[3]], rate, u);
        tot[0] += a[0], tot[1] += a[1], tot[2] += u[0], tot[3] += u[1];
    }
    /* Go writes heap/<2 x MemProfileRate>; readers halve it. */
    int rc = hs_buf_printf(out,
                           "heap profile: %" PRId64 ": %" PRId64 " [%" PRId64 ": %" PRId64
                           "] @ heap/%" PRId64 "\n",
                           tot[2], tot[3], tot[0], tot[1], 2 * rate);
    for (size_t i = 0; rc == 0 && i < p->nsamples; i++)
        rc = gt_record(p, &p->samples[i], idx, rate, out);
    if (rc == 0 && p->ncomments)
        rc = hs_buf_append(out, "\n", 1);
    for (size_t i = 0; rc == 0 && i < p->ncomments; i++)
        rc = hs_buf_printf(out, "# %s\n", hs_profile_get_str(p, p->comments[i]));
    return rc ? rc : gt_mappings(p, out);
}

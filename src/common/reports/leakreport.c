/*
 * The leak report (see leakreport.h): groups the profile's samples with live objects by
 * stack, decides each stack's suppression LSan's way (frame by frame from the leaf: the
 * module's path, then each inlined function's name and source file), orders the rest by
 * bytes, and prints them with their frames in the shape LeakSanitizer users know:
 * "    #N 0xADDR in FUNCTION FILE:LINE (MODULE+0xOFFSET)", from the first frame the profile's
 * drop_frames leaves (the code that asked, not the allocator), as the views show stacks;
 * suppressions see every frame, as LSan's do. Never touches the profile.
 */
#define _GNU_SOURCE
#include "leakreport.h"
#include "model/dropframes.h"
#include "base/sort.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t sample;       /* first sample of the stack */
    double objects;      /* summed inuse_objects */
    double bytes;        /* summed inuse_space */
    double uobj, ubytes; /* of which in samples labelled reachable=no */
    int rule;            /* suppression rule index, -1 = reported */
} leak_site_t;

/* 1: the sample is labelled reachable=no, 0: reachable=yes, -1: no such label. */
static int leak_unreachable(const hs_profile_t *p, const hs_sample_t *smp)
{
    for (size_t i = 0; i < smp->nlabels; i++)
        if (strcmp(hs_profile_get_str(p, smp->labels[i].key), "reachable") == 0)
            return strcmp(hs_profile_get_str(p, smp->labels[i].str), "no") == 0;
    return -1;
}

static int leak_cmp_stack(const void *a, const void *b, void *arg)
{
    const hs_profile_t *p = arg;
    const hs_sample_t *x = &p->samples[*(const size_t *)a], *y = &p->samples[*(const size_t *)b];
    if (x->nlocs != y->nlocs)
        return x->nlocs < y->nlocs ? -1 : 1;
    for (size_t i = 0; i < x->nlocs; i++)
        if (x->location_ids[i] != y->location_ids[i])
            return x->location_ids[i] < y->location_ids[i] ? -1 : 1;
    return 0;
}

/* Largest first; equal sites keep the profile's order, so the report is deterministic. */
static int leak_cmp_size(const void *a, const void *b)
{
    const leak_site_t *x = a, *y = b;
    if (x->bytes != y->bytes)
        return x->bytes > y->bytes ? -1 : 1;
    if (x->objects != y->objects)
        return x->objects > y->objects ? -1 : 1;
    return x->sample < y->sample ? -1 : x->sample > y->sample;
}

/* The first rule matching the location's module, function names or source files. */
static int leak_match_location(const hs_profile_t *p, const hs_supp_t *s, const hs_location_t *l)
{
    const hs_mapping_t *m = l->mapping_id ? hs_profile_mapping(p, l->mapping_id) : NULL;
    const char *module = m ? hs_profile_get_str(p, m->filename) : "";
    int r = hs_supp_match(s, *module ? module : "<unknown module>");
    for (size_t i = 0; r < 0 && i < l->nlines; i++) {
        const hs_function_t *f = hs_profile_function(p, l->lines[i].function_id);
        if (!f)
            continue;
        r = hs_supp_match(s, hs_profile_get_str(p, f->name));
        if (r < 0)
            r = hs_supp_match(s, hs_profile_get_str(p, f->filename));
    }
    return r;
}

static int leak_match(const hs_profile_t *p, const hs_supp_t *s, const hs_sample_t *smp)
{
    int r = -1;
    for (size_t i = 0; s && s->n && r < 0 && i < smp->nlocs; i++) {
        const hs_location_t *l = hs_profile_location(p, smp->location_ids[i]);
        if (l)
            r = leak_match_location(p, s, l);
    }
    return r;
}

/* The stacks with live objects, summed, suppression decided. *n gets their count. */
static leak_site_t *leak_sites(const hs_profile_t *p, const hs_supp_t *s, int io, int ib, size_t *n,
                               bool *reach)
{
    size_t *idx = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*idx));
    leak_site_t *sites = malloc((p->nsamples ? p->nsamples : 1) * sizeof(*sites));
    size_t k = 0, ns = 0;
    if (!idx || !sites) {
        free(idx);
        free(sites);
        return NULL;
    }
    for (size_t i = 0; i < p->nsamples; i++)
        if (p->samples[i].values[io] > 0 || p->samples[i].values[ib] > 0)
            idx[k++] = i;
    qsort_r(idx, k, sizeof(*idx), leak_cmp_stack, (void *)p);
    for (size_t i = 0; i < k; i++) {
        const hs_sample_t *smp = &p->samples[idx[i]];
        if (i == 0 || leak_cmp_stack(&idx[i - 1], &idx[i], (void *)p) != 0)
            sites[ns++] = (leak_site_t){.sample = idx[i], .rule = leak_match(p, s, smp)};
        leak_site_t *st = &sites[ns - 1];
        st->objects += (double)smp->values[io];
        st->bytes += (double)smp->values[ib];
        int un = leak_unreachable(p, smp);
        *reach |= un >= 0;
        if (un == 1) {
            st->uobj += (double)smp->values[io];
            st->ubytes += (double)smp->values[ib];
        }
        if (idx[i] < st->sample)
            st->sample = idx[i];
    }
    free(idx);
    *n = ns;
    return sites;
}

static const char *leak_base(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? slash + 1 : path;
}

/* One line per frame, inlined frames first, numbered across the stack; the allocator's
 * frames pruned by plan (the profile's drop_frames), as the views prune them. */
static int leak_frames(const hs_profile_t *p, const hs_dropframes_plan_t *plan,
                       const hs_sample_t *smp, hs_buf_t *out)
{
    unsigned no = 0;
    int rc = 0;
    for (size_t i = hs_dropframes_start(plan, p, smp); rc == 0 && i < smp->nlocs; i++) {
        const hs_location_t *l = hs_profile_location(p, smp->location_ids[i]);
        if (!l)
            continue;
        size_t j0 = hs_dropframes_trim(plan, (size_t)(l - p->locations), l->nlines);
        const hs_mapping_t *m = l->mapping_id ? hs_profile_mapping(p, l->mapping_id) : NULL;
        char mod[300] = "";
        if (m)
            snprintf(mod, sizeof(mod), " (%s+0x%" PRIx64 ")",
                     leak_base(hs_profile_get_str(p, m->filename)),
                     l->address - m->memory_start + m->file_offset);
        if (l->nlines == 0)
            rc = hs_buf_printf(out, "    #%u 0x%" PRIx64 "%s\n", no++, l->address, mod);
        for (size_t j = j0; rc == 0 && j < l->nlines; j++) {
            const hs_function_t *f = hs_profile_function(p, l->lines[j].function_id);
            const char *name = f ? hs_profile_get_str(p, f->name) : "";
            const char *file = f ? hs_profile_get_str(p, f->filename) : "";
            if (!m && l->address == 0) /* no address: a frame heapsift made up (stack table full) */
                rc = hs_buf_printf(out, "    #%u %s", no++, *name ? name : "??");
            else
                rc = hs_buf_printf(out, "    #%u 0x%" PRIx64 " in %s", no++, l->address,
                                   *name ? name : "??");
            if (rc == 0 && *file)
                rc = l->lines[j].line > 0
                         ? hs_buf_printf(out, " %s:%" PRId64, file, l->lines[j].line)
                         : hs_buf_printf(out, " %s", file);
            if (rc == 0)
                rc = hs_buf_printf(out, "%s%s\n", j + 1 < l->nlines ? " (inline)" : "", mod);
        }
    }
    return rc;
}

static const char *leak_s(double n)
{
    return n == 1 ? "" : "s";
}

/* Under a site's frames: how much of it no pointer reaches. */
static int leak_print_reach(const leak_site_t *st, const char *about, hs_buf_t *out)
{
    double robj = st->objects - st->uobj, rbytes = st->bytes - st->ubytes;
    return hs_buf_printf(out,
                         "heapsift:   reachability: unreachable %s%.0f bytes in %s%.0f object%s, "
                         "reachable %s%.0f bytes in %s%.0f object%s\n",
                         about, st->ubytes, about, st->uobj, leak_s(st->uobj), about, rbytes, about,
                         robj, leak_s(robj));
}

static int leak_print_sites(const hs_profile_t *p, const hs_dropframes_plan_t *plan,
                            const leak_site_t *sites, size_t n, const hs_leak_opts_t *o, bool reach,
                            hs_buf_t *out)
{
    const char *about = o->rate > 1 ? "~" : "";
    size_t shown = 0;
    double rest_obj = 0, rest_bytes = 0;
    int rc = hs_buf_printf(out,
                           "heapsift: leak report for %s (pid %ld): memory still allocated at "
                           "%s, by allocation site, largest first\n",
                           o->program, o->pid, o->when ? o->when : "exit");
    if (rc == 0 && o->since)
        rc = hs_buf_printf(
            out, "heapsift: note: %s, so this report covers only the blocks allocated since then\n",
            o->since);
    for (size_t i = 0; rc == 0 && i < n; i++) {
        if (o->max_sites && shown == o->max_sites) {
            rest_obj += sites[i].objects;
            rest_bytes += sites[i].bytes;
            continue;
        }
        shown++;
        rc =
            hs_buf_printf(out, "heapsift: %s%.0f bytes in %s%.0f object%s allocated from:\n", about,
                          sites[i].bytes, about, sites[i].objects, leak_s(sites[i].objects));
        if (rc == 0)
            rc = leak_frames(p, plan, &p->samples[sites[i].sample], out);
        if (rc == 0 && reach)
            rc = leak_print_reach(&sites[i], about, out);
        if (rc == 0)
            rc = hs_buf_printf(out, "\n");
    }
    if (rc == 0 && shown < n)
        rc = hs_buf_printf(out,
                           "heapsift: ... and %zu more site%s: %s%.0f bytes in %s%.0f object%s "
                           "(HEAPSIFT_LEAKS_MAX=0 lists every site)\n",
                           n - shown, n - shown == 1 ? "" : "s", about, rest_bytes, about, rest_obj,
                           leak_s(rest_obj));
    return rc;
}

static int leak_print_supp(const hs_supp_t *s, const hs_leak_result_t *r, const char *about,
                           hs_buf_t *out)
{
    int rc = 0;
    if (!s || r->suppressed_sites == 0)
        return 0;
    rc = hs_buf_printf(
        out, "heapsift: suppressed: %s%.0f bytes in %s%.0f object%s from %" PRIu64 " site%s:\n",
        about, r->supp_bytes, about, r->supp_objects, leak_s(r->supp_objects), r->suppressed_sites,
        r->suppressed_sites == 1 ? "" : "s");
    for (size_t i = 0; rc == 0 && i < s->n; i++) {
        const hs_supp_rule_t *u = &s->rules[i];
        if (u->sites == 0)
            continue;
        rc = hs_buf_printf(out,
                           "heapsift:   %s%.0f bytes in %s%.0f object%s from %" PRIu64
                           " site%s: leak:%s (%s:%u)\n",
                           about, u->bytes, about, u->objects, leak_s(u->objects), u->sites,
                           u->sites == 1 ? "" : "s", u->pattern, u->origin, u->line);
    }
    return rc;
}

static int leak_print_summary(const hs_leak_result_t *r, const hs_leak_opts_t *o, hs_buf_t *out)
{
    const char *about = o->rate > 1 ? "~" : "";
    char how[96], supp[160] = "";
    int rc = 0;
    if (o->rate > 1) {
        snprintf(how, sizeof(how), "estimates at HEAPSIFT_RATE=%" PRIu64, o->rate);
        rc = hs_buf_printf(out,
                           "heapsift: note: sampled: an object of s bytes is seen with "
                           "probability 1-exp(-s/%" PRIu64 "), so small leaks can be missed; "
                           "HEAPSIFT_RATE=1 makes the report exact\n",
                           o->rate);
    } else {
        snprintf(how, sizeof(how), "exact: HEAPSIFT_RATE=1");
    }
    if (o->supp_error)
        snprintf(supp, sizeof(supp), "; no suppressions file applied: %s", o->supp_error);
    if (rc == 0)
        rc = hs_buf_printf(out,
                           "heapsift: %s%.0f bytes in %s%.0f object%s still allocated at %s "
                           "from %" PRIu64 " site%s (%s; %" PRIu64 " site%s suppressed%s) in %s "
                           "(pid %ld)\n",
                           about, r->bytes, about, r->objects, leak_s(r->objects),
                           o->when ? o->when : "exit", r->sites, r->sites == 1 ? "" : "s", how,
                           r->suppressed_sites, r->suppressed_sites == 1 ? "" : "s", supp,
                           o->program, o->pid);
    if (rc == 0 && r->reach)
        rc = hs_buf_printf(out,
                           "heapsift: of which unreachable (no pointer to them found): %s%.0f "
                           "bytes in %s%.0f object%s from %" PRIu64 " site%s\n",
                           about, r->unreach_bytes, about, r->unreach_objects,
                           leak_s(r->unreach_objects), r->unreach_sites,
                           r->unreach_sites == 1 ? "" : "s");
    return rc;
}

/* Totals per rule and overall; moves the reported sites to the front, largest first. */
static size_t leak_tally(leak_site_t *sites, size_t n, hs_supp_t *s, hs_leak_result_t *r)
{
    size_t k = 0;
    for (size_t i = 0; s && i < s->n; i++) {
        s->rules[i].sites = 0;
        s->rules[i].objects = s->rules[i].bytes = 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (sites[i].rule >= 0) {
            hs_supp_rule_t *u = &s->rules[sites[i].rule];
            u->sites++;
            u->objects += sites[i].objects;
            u->bytes += sites[i].bytes;
            r->suppressed_sites++;
            r->supp_objects += sites[i].objects;
            r->supp_bytes += sites[i].bytes;
            continue;
        }
        r->sites++;
        r->objects += sites[i].objects;
        r->bytes += sites[i].bytes;
        r->unreach_sites += sites[i].uobj > 0;
        r->unreach_objects += sites[i].uobj;
        r->unreach_bytes += sites[i].ubytes;
        sites[k++] = sites[i];
    }
    hs_sort(sites, k, sizeof(*sites), leak_cmp_size);
    return k;
}

int hs_leak_report(const hs_profile_t *p, hs_supp_t *supp, const hs_leak_opts_t *o, hs_buf_t *out,
                   hs_leak_result_t *res)
{
    int io = hs_profile_sample_type_index(p, "inuse_objects");
    int ib = hs_profile_sample_type_index(p, "inuse_space");
    size_t n = 0;
    memset(res, 0, sizeof(*res));
    if (io < 0 || ib < 0)
        return -EINVAL;
    bool reach = false;
    hs_dropframes_plan_t plan;
    leak_site_t *sites = leak_sites(p, supp, io, ib, &n, &reach);
    if (!sites || hs_dropframes_plan(p, hs_profile_get_str(p, p->drop_frames),
                                     hs_profile_get_str(p, p->keep_frames), &plan)) {
        free(sites);
        return -ENOMEM;
    }
    size_t k = leak_tally(sites, n, supp, res);
    res->reach = reach;
    int rc = k ? leak_print_sites(p, &plan, sites, k, o, reach, out) : 0;
    if (rc == 0 && !k && o->since) /* else said under the header */
        rc = hs_buf_printf(
            out, "heapsift: note: %s, so this report covers only the blocks allocated since then\n",
            o->since);
    if (rc == 0)
        rc = leak_print_supp(supp, res, o->rate > 1 ? "~" : "", out);
    if (rc == 0)
        rc = leak_print_summary(res, o, out);
    hs_dropframes_plan_free(&plan);
    free(sites);
    return rc;
}

/*
 * The report model (report.h): merging samples, filtering, aggregating frames into pprof
 * nodes, flat/cum, node selection and edges. Formatting lives in report_fmt.c. Each step
 * follows the `go tool pprof` code it mirrors (profile.Merge, FilterSamplesByName,
 * Aggregate, graph.CreateNodes/newGraph, Graph.SortNodes); where it is named below, the
 * comment says which. Owns only its allocations; the profiles are read, never changed.
 */
#define _GNU_SOURCE /* qsort_r */
#include "report.h"
#include "model/dropframes.h"
#include "base/satmath.h"
#include "base/sort.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t id;
    size_t idx;
} rep_id_t;

/* id -> array index, O(1) for dense ids, else binary search over a sorted copy. */
typedef struct {
    rep_id_t *sorted; /* NULL when dense */
    size_t n;
} rep_idmap_t;

/* Per location of one input profile: its nodes after hide, and what the filters say. */
typedef struct {
    uint32_t off, cnt; /* into loc_nodes; cnt 0 with hidden: the location is hidden */
    bool hidden;
    signed char focus; /* 1 focused, 0 ignored, -1 neither */
    uint64_t hash;     /* pprof's location key, for merging samples */
} rep_loc_t;

typedef struct {
    const hs_profile_t *p;
    int sign;
    rep_idmap_t funcs, locs;
    rep_loc_t *loc;
    uint32_t *loc_nodes;
    uint8_t *loc_inl;
    int obj_idx, space_idx; /* sample types for the variance, -1 if none */
    const hs_numunits_t *units;
    const char *drop, *keep;   /* the first profile's drop_frames, keep_frames, or NULL */
    hs_dropframes_plan_t plan; /* what they drop of this profile (dropframes.h) */
} rep_input_t;

struct hs_report_priv {
    uint32_t *slots; /* node hash: node index + 1 */
    size_t slots_cap, nodes_cap;
    uint32_t *frames; /* frame pool of all samples */
    uint8_t *inl;
    size_t nframes, frames_cap;
    regex_t re[4];
    bool have_re[4];
    hs_tagfilter_t *tagfocus, *tagignore;
    hs_numunits_t *units; /* per input profile */
    size_t nunits;
    int64_t **pools; /* per input: the merged samples' values (hs_rsample_t.vals) */
    size_t npools;
};

enum { RE_FOCUS, RE_IGNORE, RE_HIDE, RE_SHOW };

/* ---- ids ---------------------------------------------------------------------------------- */

static int rep_cmp_id(const void *a, const void *b)
{
    uint64_t x = ((const rep_id_t *)a)->id, y = ((const rep_id_t *)b)->id;
    return x < y ? -1 : x > y;
}

static int rep_idmap_init(rep_idmap_t *m, const void *arr, size_t n, size_t stride)
{
    m->n = n;
    m->sorted = NULL;
    bool dense = true;
    for (size_t i = 0; i < n && dense; i++)
        dense = *(const uint64_t *)((const char *)arr + i * stride) == i + 1;
    if (dense)
        return 0;
    m->sorted = malloc((n ? n : 1) * sizeof(rep_id_t));
    if (!m->sorted)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        m->sorted[i].id = *(const uint64_t *)((const char *)arr + i * stride);
        m->sorted[i].idx = i;
    }
    hs_sort(m->sorted, n, sizeof(rep_id_t), rep_cmp_id);
    return 0;
}

static size_t rep_idmap_find(const rep_idmap_t *m, uint64_t id);

/* Index of id, or SIZE_MAX: dense ids (the usual case, 900,000 look-ups for 35,000 stacks)
 * inline, the sorted map's search out of line. */
static inline size_t rep_idmap_get(const rep_idmap_t *m, uint64_t id)
{
    if (!m->sorted)
        return id >= 1 && id <= m->n ? (size_t)(id - 1) : SIZE_MAX;
    return rep_idmap_find(m, id);
}

static size_t rep_idmap_find(const rep_idmap_t *m, uint64_t id)
{
    rep_id_t key = {id, 0};
    const rep_id_t *f = bsearch(&key, m->sorted, m->n, sizeof(key), rep_cmp_id);
    return f ? f->idx : SIZE_MAX;
}

static const hs_function_t *rep_func(const rep_input_t *in, uint64_t id)
{
    size_t i = rep_idmap_get(&in->funcs, id);
    return i == SIZE_MAX ? NULL : &in->p->functions[i];
}

/* ---- names -------------------------------------------------------------------------------- */

/* filepath.Clean */
static char *rep_clean_path(const char *path)
{
    size_t n = strlen(path);
    if (n == 0)
        return strdup(".");
    char *out = malloc(n + 2);
    if (!out)
        return NULL;
    bool rooted = path[0] == '/';
    size_t w = 0, r = 0, dotdot = 0;
    if (rooted) {
        out[w++] = '/';
        r = dotdot = 1;
    }
    while (r < n) {
        if (path[r] == '/') {
            r++;
        } else if (path[r] == '.' && (r + 1 == n || path[r + 1] == '/')) {
            r++;
        } else if (path[r] == '.' && path[r + 1] == '.' && (r + 2 == n || path[r + 2] == '/')) {
            r += 2;
            if (w > dotdot) {
                w--;
                while (w > dotdot && out[w] != '/')
                    w--;
            } else if (!rooted) {
                if (w > 0)
                    out[w++] = '/';
                out[w++] = '.';
                out[w++] = '.';
                dotdot = w;
            }
        } else {
            if ((rooted && w != 1) || (!rooted && w != 0))
                out[w++] = '/';
            for (; r < n && path[r] != '/'; r++)
                out[w++] = path[r];
        }
    }
    if (w == 0)
        out[w++] = '.';
    out[w] = '\0';
    return out;
}

/* pprof's trimPath without a source path: only the /proc/self/cwd prefixes go. */
static const char *rep_trim_path(const char *path)
{
    static const char *prefixes[] = {"/proc/self/cwd/./", "/proc/self/cwd/"};
    for (size_t i = 0; i < 2; i++)
        if (strncmp(path, prefixes[i], strlen(prefixes[i])) == 0)
            return path + strlen(prefixes[i]);
    return path;
}

/* NodeInfo.PrintableName */
static char *rep_printable(const hs_rnode_t *n)
{
    char addr[24] = "";
    size_t len = strlen(n->fname) + strlen(n->file) + strlen(n->obj) + 64;
    char *s = malloc(len);
    if (!s)
        return NULL;
    if (n->address)
        snprintf(addr, sizeof(addr), "%016" PRIx64, n->address);
    int w = snprintf(s, len, "%s%s%s", addr, *addr && *n->fname ? " " : "", n->fname);
    const char *sep = w ? " " : "";
    if (n->lineno) {
        snprintf(s + w, len - w, "%s%s:%" PRId64, sep, n->file, n->lineno);
    } else if (*n->file) {
        snprintf(s + w, len - w, "%s%s", sep, n->file);
    } else if (*n->fname) {
    } else if (*n->obj) {
        size_t e = strlen(n->obj), b; /* filepath.Base */
        while (e > 1 && n->obj[e - 1] == '/')
            e--;
        for (b = e; b > 0 && n->obj[b - 1] != '/';)
            b--;
        snprintf(s + w, len - w, "%s[%.*s]", sep, (int)(e - b ? e - b : 1),
                 n->obj + (e - b ? b : 0));
    } else {
        snprintf(s + w, len - w, "%s<unknown>", sep);
    }
    return s;
}

/* ---- nodes -------------------------------------------------------------------------------- */

static uint64_t rep_mix(uint64_t h, uint64_t v)
{
    h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
    return h * 0xff51afd7ed558ccdull;
}

static uint64_t rep_mix_str(uint64_t h, const char *s)
{
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 1099511628211ull;
    return rep_mix(h, 0xff);
}

static uint64_t rep_node_hash(const hs_rnode_t *n)
{
    uint64_t h = rep_mix_str(rep_mix_str(rep_mix_str(0, n->fname), n->file), n->obj);
    return rep_mix(rep_mix(rep_mix(h, n->address), (uint64_t)n->start_line), (uint64_t)n->lineno);
}

static bool rep_node_eq(const hs_rnode_t *a, const hs_rnode_t *b)
{
    return a->address == b->address && a->start_line == b->start_line && a->lineno == b->lineno &&
           strcmp(a->fname, b->fname) == 0 && strcmp(a->file, b->file) == 0 &&
           strcmp(a->obj, b->obj) == 0;
}

static int rep_slots_grow(hs_report_t *r)
{
    hs_report_priv_t *q = r->priv;
    size_t cap = q->slots_cap ? q->slots_cap * 2 : 1024;
    uint32_t *s = calloc(cap, sizeof(*s));
    if (!s)
        return -ENOMEM;
    for (size_t i = 0; i < r->nnodes; i++) {
        size_t j = rep_node_hash(&r->nodes[i]) & (cap - 1);
        while (s[j])
            j = (j + 1) & (cap - 1);
        s[j] = (uint32_t)(i + 1);
    }
    free(q->slots);
    q->slots = s;
    q->slots_cap = cap;
    return 0;
}

/* The index of the node equal to key (whose file is malloc'ed and taken over), or -1. */
static int64_t rep_node(hs_report_t *r, hs_rnode_t *key)
{
    hs_report_priv_t *q = r->priv;
    if ((r->nnodes + 1) * 2 > q->slots_cap && rep_slots_grow(r))
        goto fail;
    size_t mask = q->slots_cap - 1, j = rep_node_hash(key) & mask;
    for (; q->slots[j]; j = (j + 1) & mask) {
        if (rep_node_eq(&r->nodes[q->slots[j] - 1], key)) {
            free(key->file);
            return q->slots[j] - 1;
        }
    }
    if (r->nnodes == q->nodes_cap) {
        size_t cap = q->nodes_cap ? q->nodes_cap * 2 : 256;
        hs_rnode_t *a = realloc(r->nodes, cap * sizeof(*a));
        if (!a)
            goto fail;
        r->nodes = a;
        q->nodes_cap = cap;
    }
    if (!(key->name = rep_printable(key)))
        goto fail;
    r->nodes[r->nnodes++] = *key;
    q->slots[j] = (uint32_t)r->nnodes;
    return (int64_t)r->nnodes - 1;
fail:
    free(key->file);
    return -1;
}

/* pprof's nodeInfo after Aggregate at the report's granularity. */
static int64_t rep_line_node(hs_report_t *r, const rep_input_t *in, const hs_location_t *l,
                             const hs_line_t *line, const char *obj, const hs_report_opts_t *o)
{
    hs_rnode_t k;
    memset(&k, 0, sizeof(k));
    k.fname = "";
    k.obj = "";
    k.address = o->gran == HS_GRAN_ADDRESSES ? l->address : 0;
    const hs_function_t *f = line ? rep_func(in, line->function_id) : NULL;
    const char *file = "";
    if (!f) {
        k.obj = obj;
    } else {
        k.fname = hs_profile_get_str(in->p, f->name);
        if (o->gran != HS_GRAN_FUNCTIONS) {
            k.lineno = line->line;
            file = hs_profile_get_str(in->p, f->filename);
        }
        if (!*k.fname || o->obj_names) {
            k.obj = obj;
            k.start_line = f->start_line;
        }
    }
    if (*file) {
        k.file = rep_clean_path(o->trim_paths ? rep_trim_path(file) : file);
        if (!k.file)
            return -1;
    } else if (!(k.file = strdup(""))) {
        return -1;
    }
    return rep_node(r, &k);
}

/* ---- per-location preprocessing ------------------------------------------------------- */

static bool rep_re_match(const regex_t *re, const char *s)
{
    return regexec(re, s, 0, NULL, 0) == 0;
}

static bool rep_line_matches(const rep_input_t *in, const hs_line_t *ln, const regex_t *re)
{
    const hs_function_t *f = rep_func(in, ln->function_id);
    return f && (rep_re_match(re, hs_profile_get_str(in->p, f->name)) ||
                 rep_re_match(re, hs_profile_get_str(in->p, f->filename)));
}

/* Location.matchesName */
static bool rep_loc_matches(const rep_input_t *in, const hs_location_t *l, const char *obj,
                            const regex_t *re)
{
    for (size_t i = 0; i < l->nlines; i++)
        if (rep_line_matches(in, &l->lines[i], re))
            return true;
    const hs_mapping_t *m = hs_profile_mapping(in->p, l->mapping_id);
    return m && rep_re_match(re, obj);
}

/* Hash of a location's content the way pprof's Merge keys it (mapping by size, offset
 * and build id or file; address relative to the mapping; functions by content). */
static uint64_t rep_loc_hash(const rep_input_t *in, const hs_location_t *l)
{
    const hs_profile_t *p = in->p;
    uint64_t h = rep_mix(0, l->is_folded), addr = l->address;
    const hs_mapping_t *m = hs_profile_mapping(p, l->mapping_id);
    if (m) {
        const char *bid = hs_profile_get_str(p, m->build_id);
        uint64_t size = m->memory_limit - m->memory_start + 0xfff;
        h = rep_mix(rep_mix(h, size - size % 0x1000), m->file_offset);
        h = rep_mix_str(h, *bid ? bid : hs_profile_get_str(p, m->filename));
        addr -= m->memory_start;
    }
    h = rep_mix(h, addr);
    for (size_t i = 0; i < l->nlines; i++) {
        const hs_function_t *f = rep_func(in, l->lines[i].function_id);
        if (f) {
            h = rep_mix_str(rep_mix_str(h, hs_profile_get_str(p, f->name)),
                            hs_profile_get_str(p, f->system_name));
            h = rep_mix(rep_mix_str(h, hs_profile_get_str(p, f->filename)), f->start_line);
        }
        h = rep_mix(h, (uint64_t)l->lines[i].line);
    }
    return h;
}

/* Location li as pprof's Prune leaves it: without the lines drop_frames removes from its
 * inner side (view is the storage). */
static const hs_location_t *rep_loc_view(const rep_input_t *in, size_t li, hs_location_t *view)
{
    *view = in->p->locations[li];
    size_t t = hs_dropframes_trim(&in->plan, li, view->nlines);
    view->lines += t;
    view->nlines -= t;
    return view;
}

/* The nodes of location l after hide and show (pprof's CreateNodes over the profile
 * FilterSamplesByName left: hide drops the matching lines, all of them when the mapping
 * file matches; show then keeps the matching lines, all of them when the mapping file
 * matches; a location with no line left, an unsymbolized one under show too, is hidden). */
static int rep_loc_nodes(hs_report_t *r, rep_input_t *in, size_t li, uint32_t *k,
                         const hs_report_opts_t *o)
{
    hs_location_t view;
    const hs_location_t *l = rep_loc_view(in, li, &view);
    const hs_mapping_t *m = hs_profile_mapping(in->p, l->mapping_id);
    const char *obj = m ? hs_profile_get_str(in->p, m->filename) : "";
    const regex_t *hide = r->priv->have_re[RE_HIDE] ? &r->priv->re[RE_HIDE] : NULL;
    const regex_t *show = r->priv->have_re[RE_SHOW] ? &r->priv->re[RE_SHOW] : NULL;
    bool show_all = !show || (m && rep_re_match(show, obj));
    rep_loc_t *rl = &in->loc[li];
    rl->off = *k;
    rl->hash = rep_loc_hash(in, &in->p->locations[li]); /* pprof merges before it prunes */
    if (hide && rep_loc_matches(in, l, obj, hide)) {
        r->hide_matched = true;
        rl->hidden = m && rep_re_match(hide, obj);
    }
    rl->hidden |= show && l->nlines == 0;
    if (!rl->hidden && l->nlines == 0) {
        int64_t n = rep_line_node(r, in, l, NULL, obj, o);
        if (n < 0)
            return -ENOMEM;
        in->loc_nodes[(*k)++] = (uint32_t)n;
    }
    for (size_t j = 0; !rl->hidden && j < l->nlines; j++) {
        if (hide && rep_line_matches(in, &l->lines[j], hide))
            continue;
        if (!show_all && !rep_line_matches(in, &l->lines[j], show))
            continue;
        int64_t n = rep_line_node(r, in, l, &l->lines[j], obj, o);
        if (n < 0)
            return -ENOMEM;
        in->loc_nodes[(*k)++] = (uint32_t)n;
    }
    rl->cnt = *k - rl->off;
    rl->hidden |= rl->cnt == 0;
    for (uint32_t j = rl->off; j < *k; j++)
        in->loc_inl[j] = j != *k - 1;
    return 0;
}

static int rep_prepare_input(hs_report_t *r, rep_input_t *in, const hs_report_opts_t *o)
{
    const hs_profile_t *p = in->p;
    hs_report_priv_t *q = r->priv;
    int rc = rep_idmap_init(&in->funcs, p->functions, p->nfunctions, sizeof(hs_function_t));
    if (!rc)
        rc = rep_idmap_init(&in->locs, p->locations, p->nlocations, sizeof(hs_location_t));
    if (!rc)
        rc = hs_dropframes_plan(p, in->drop, in->keep, &in->plan);
    if (rc)
        return rc;
    size_t total = 1;
    for (size_t i = 0; i < p->nlocations; i++)
        total += p->locations[i].nlines ? p->locations[i].nlines : 1;
    in->loc = calloc(p->nlocations + 1, sizeof(*in->loc));
    in->loc_nodes = malloc(total * sizeof(uint32_t));
    in->loc_inl = malloc(total);
    if (!in->loc || !in->loc_nodes || !in->loc_inl)
        return -ENOMEM;
    uint32_t k = 0;
    for (size_t i = 0; i < p->nlocations; i++) {
        hs_location_t view;
        const hs_location_t *l = rep_loc_view(in, i, &view);
        const hs_mapping_t *m = hs_profile_mapping(p, l->mapping_id);
        const char *obj = m ? hs_profile_get_str(p, m->filename) : "";
        signed char fo = -1;
        if (q->have_re[RE_IGNORE] && rep_loc_matches(in, l, obj, &q->re[RE_IGNORE])) {
            r->ignore_matched = true;
            fo = 0;
        } else if (!q->have_re[RE_FOCUS] || rep_loc_matches(in, l, obj, &q->re[RE_FOCUS])) {
            r->focus_matched = true;
            fo = 1;
        }
        in->loc[i].focus = fo;
        if ((rc = rep_loc_nodes(r, in, i, &k, o)))
            return rc;
    }
    return 0;
}

/* ---- samples ------------------------------------------------------------------------------- */

static uint64_t rep_sample_key(const rep_input_t *in, const hs_sample_t *s)
{
    const hs_profile_t *p = in->p;
    uint64_t h = 0, labels = 0;
    for (size_t i = 0; i < s->nlocs; i++) {
        size_t li = rep_idmap_get(&in->locs, s->location_ids[i]);
        h = rep_mix(h, li == SIZE_MAX ? 0 : in->loc[li].hash);
    }
    for (size_t i = 0; i < s->nlabels; i++) { /* a multiset: order does not matter */
        const hs_label_t *l = &s->labels[i];
        uint64_t lh = rep_mix_str(0, hs_profile_get_str(p, l->key));
        lh = rep_mix_str(lh, hs_profile_get_str(p, l->str));
        lh = rep_mix(rep_mix_str(lh, hs_profile_get_str(p, l->num_unit)), (uint64_t)l->num);
        labels += lh;
    }
    return rep_mix(h, labels);
}

static double rep_variance(const rep_input_t *in, const int64_t *v, int sidx)
{
    if (in->obj_idx < 0 || in->space_idx < 0)
        return 0;
    double vo, vb;
    hs_report_variance((double)v[in->obj_idx], (double)v[in->space_idx], in->p->period, &vo, &vb);
    return sidx == in->obj_idx ? vo : vb;
}

/* The obj/space pair of sample types that goes with sample type sidx ("inuse_space" with
 * "inuse_objects", "alloc_space" with "alloc_objects"). */
static void rep_var_pair(rep_input_t *in, int sidx)
{
    const hs_profile_t *p = in->p;
    const char *t = hs_profile_get_str(p, p->sample_types[sidx].type);
    const char *us = strrchr(t, '_');
    char want[128];
    in->obj_idx = in->space_idx = -1;
    size_t plen = us ? (size_t)(us - t) : 0;
    if (!us || plen > 100)
        return;
    snprintf(want, sizeof(want), "%.*s_objects", (int)plen, t);
    in->obj_idx = hs_profile_sample_type_index(p, want);
    snprintf(want, sizeof(want), "%.*s_space", (int)plen, t);
    in->space_idx = hs_profile_sample_type_index(p, want);
}

typedef struct {
    uint64_t key;
    size_t idx; /* merged sample + 1 */
} rep_slot_t;

typedef struct {
    const hs_sample_t *src;
    int64_t *vals;
    double fval; /* the chosen sample type's value, summed unrounded (hs_sample_t.fvalues) */
} rep_merged_t;

/* profile.Merge for one input: equal samples summed in first-seen order. Returns the
 * count of merged samples in *out (vals point into *pool), or -ENOMEM. */
static long rep_merge(const rep_input_t *in, int sidx, rep_merged_t **out, int64_t **pool,
                      bool *frac)
{
    const hs_profile_t *p = in->p;
    size_t cap = 16, n = 0, nt = p->ntypes;
    while (cap < p->nsamples * 2)
        cap *= 2;
    rep_slot_t *t = calloc(cap, sizeof(*t));
    *out = malloc((p->nsamples + 1) * sizeof(**out));
    *pool = calloc(p->nsamples * nt + 1, sizeof(int64_t));
    if (!t || !*out || !*pool) {
        free(t);
        return -ENOMEM;
    }
    for (size_t si = 0; si < p->nsamples; si++) {
        const hs_sample_t *s = &p->samples[si];
        bool zero = true;
        for (size_t i = 0; i < nt; i++)
            zero &= s->values[i] == 0 && (!s->fvalues || s->fvalues[i] == 0);
        if (zero)
            continue;
        uint64_t k = rep_sample_key(in, s);
        size_t j = k & (cap - 1);
        while (t[j].idx && t[j].key != k)
            j = (j + 1) & (cap - 1);
        if (!t[j].idx) {
            t[j].key = k;
            t[j].idx = ++n;
            (*out)[n - 1].src = s;
            (*out)[n - 1].vals = *pool + (n - 1) * nt;
            (*out)[n - 1].fval = 0;
        }
        (*out)[t[j].idx - 1].fval += s->fvalues ? s->fvalues[sidx] : (double)s->values[sidx];
        *frac = *frac || s->fvalues;
        for (size_t i = 0; i < nt; i++)
            (*out)[t[j].idx - 1].vals[i] = hs_sat_add((*out)[t[j].idx - 1].vals[i], s->values[i]);
    }
    free(t);
    return (long)n;
}

/* FilterSamplesByTag's verdict: tag-focused and not tag-ignored. */
static bool rep_keep_tags(const hs_report_t *r, const rep_input_t *in, const hs_sample_t *s)
{
    const hs_report_priv_t *q = r->priv;
    if (q->tagfocus && !hs_tagfilter_match(q->tagfocus, in->units, s))
        return false;
    return !q->tagignore || !hs_tagfilter_match(q->tagignore, in->units, s);
}

/* FilterSamplesByName's verdict for a sample whose frames from start on remain:
 * focused and not ignored. */
static bool rep_keep(const rep_input_t *in, const hs_sample_t *s, size_t start)
{
    bool f = false;
    for (size_t i = start; i < s->nlocs; i++) {
        size_t li = rep_idmap_get(&in->locs, s->location_ids[i]);
        if (li == SIZE_MAX || in->loc[li].focus < 0)
            continue;
        if (!in->loc[li].focus)
            return false;
        f = true;
    }
    return f;
}

static int rep_frames_reserve(hs_report_priv_t *q, size_t extra)
{
    if (q->nframes + extra <= q->frames_cap)
        return 0;
    size_t cap = q->frames_cap ? q->frames_cap : 4096;
    while (cap < q->nframes + extra)
        cap *= 2;
    uint32_t *f = realloc(q->frames, cap * sizeof(*f));
    if (f)
        q->frames = f;
    uint8_t *i = realloc(q->inl, cap);
    if (i)
        q->inl = i;
    if (!f || !i)
        return -ENOMEM;
    q->frames_cap = cap;
    return 0;
}

/* Appends the frames of s from start on (frames are stored as offsets until every sample
 * is in). */
static int rep_add_sample(hs_report_t *r, const rep_input_t *in, const rep_merged_t *m,
                          size_t start_loc, size_t *cap)
{
    hs_report_priv_t *q = r->priv;
    const hs_sample_t *s = m->src;
    if (r->nsamples == *cap) {
        size_t c = *cap ? *cap * 2 : 1024;
        hs_rsample_t *a = realloc(r->samples, c * sizeof(*a));
        if (!a)
            return -ENOMEM;
        r->samples = a;
        *cap = c;
    }
    size_t start = q->nframes;
    for (size_t i = start_loc; i < s->nlocs; i++) {
        size_t li = rep_idmap_get(&in->locs, s->location_ids[i]);
        if (li == SIZE_MAX || in->loc[li].hidden)
            continue;
        const rep_loc_t *rl = &in->loc[li];
        if (rep_frames_reserve(q, rl->cnt))
            return -ENOMEM;
        for (size_t k = 0; k < rl->cnt; k++) { /* mostly one: no memcpy call */
            q->frames[q->nframes + k] = in->loc_nodes[rl->off + k];
            q->inl[q->nframes + k] = in->loc_inl[rl->off + k];
        }
        q->nframes += rl->cnt;
    }
    if (q->nframes == start) /* every location hidden: pprof drops the sample */
        return 0;
    hs_rsample_t *rs = &r->samples[r->nsamples++];
    rs->frames = (uint32_t *)(uintptr_t)start;
    rs->nframes = q->nframes - start;
    rs->value = m->vals[r->sidx] * in->sign;
    rs->fvalue = m->fval * in->sign;
    rs->var = rep_variance(in, m->vals, r->sidx);
    rs->prof = in->p;
    rs->src = s;
    rs->vals = m->vals;
    rs->base = in->sign < 0;
    return 0;
}

/* Merges, totals and filters the samples of one input; ftot[0] and ftot[1] sum the
 * unrounded values of all inputs and of the bases alone. */
static int rep_samples(hs_report_t *r, const rep_input_t *in, size_t *cap, int64_t *base_total,
                       double ftot[2])
{
    rep_merged_t *m = NULL;
    int64_t *pool = NULL;
    long n = rep_merge(in, r->sidx, &m, &pool, &r->fractional);
    int rc = n < 0 ? (int)n : 0;
    for (long i = 0; !rc && i < n; i++) {
        int64_t v = m[i].vals[r->sidx];
        r->total = hs_sat_add(r->total, hs_sat_abs(v));
        ftot[0] += fabs(m[i].fval);
        if (in->sign < 0) {
            *base_total = hs_sat_add(*base_total, hs_sat_abs(v));
            ftot[1] += fabs(m[i].fval);
        }
        size_t start = hs_dropframes_start(&in->plan, in->p, m[i].src);
        if (rep_keep(in, m[i].src, start) && rep_keep_tags(r, in, m[i].src))
            rc = rep_add_sample(r, in, &m[i], start, cap);
    }
    free(m);
    if (rc == 0)
        r->priv->pools[r->priv->npools++] = pool; /* hs_rsample_t.vals point into it */
    else
        free(pool);
    return rc;
}

/* ---- building ------------------------------------------------------------------------------ */

int hs_report_sample_index(const hs_profile_t *p, const char *name)
{
    if (!name) {
        const char *dst = hs_profile_get_str(p, p->default_sample_type);
        int i = *dst ? hs_profile_sample_type_index(p, dst) : -1;
        return i >= 0 ? i : (int)p->ntypes - 1;
    }
    char *end;
    long idx = strtol(name, &end, 10);
    if (*name && !*end)
        return idx >= 0 && (size_t)idx < p->ntypes ? (int)idx : -1;
    const char *no_inuse = strncmp(name, "inuse_", 6) == 0 ? name + 6 : name;
    for (size_t i = 0; i < p->ntypes; i++) {
        const char *t = hs_profile_get_str(p, p->sample_types[i].type);
        if (strcmp(t, name) == 0 || strcmp(t, no_inuse) == 0)
            return (int)i;
    }
    return -1;
}

static bool rep_same_type(const hs_profile_t *a, const hs_value_type_t *x, const hs_profile_t *b,
                          const hs_value_type_t *y)
{
    return strcmp(hs_profile_get_str(a, x->type), hs_profile_get_str(b, y->type)) == 0 &&
           strcmp(hs_profile_get_str(a, x->unit), hs_profile_get_str(b, y->unit)) == 0;
}

/* pprof's compatible(): same sample types and period type. */
static bool rep_compatible(const hs_profile_t *a, const hs_profile_t *b)
{
    if (a->ntypes != b->ntypes || !rep_same_type(a, &a->period_type, b, &b->period_type))
        return false;
    for (size_t i = 0; i < a->ntypes; i++)
        if (!rep_same_type(a, &a->sample_types[i], b, &b->sample_types[i]))
            return false;
    return true;
}

static int rep_compile(hs_report_t *r, const hs_report_opts_t *o, char *err, size_t errlen)
{
    const char *res[4] = {o->focus, o->ignore, o->hide, o->show};
    static const char *names[4] = {"focus", "ignore", "hide", "show"};
    for (int i = 0; i < 4; i++) {
        if (!res[i] || !*res[i])
            continue;
        int rc = regcomp(&r->priv->re[i], res[i], REG_EXTENDED | REG_NOSUB);
        if (rc) {
            char msg[128];
            regerror(rc, &r->priv->re[i], msg, sizeof(msg));
            snprintf(err, errlen, "bad --%s regular expression '%s': %s", names[i], res[i], msg);
            return -EINVAL;
        }
        r->priv->have_re[i] = true;
    }
    int rc = 0;
    if (o->tagfocus && *o->tagfocus)
        rc = hs_tagfilter_compile(o->tagfocus, "tagfocus", &r->priv->tagfocus, err, errlen);
    if (!rc && o->tagignore && *o->tagignore)
        rc = hs_tagfilter_compile(o->tagignore, "tagignore", &r->priv->tagignore, err, errlen);
    return rc;
}

const char *hs_report_num_unit(const hs_report_t *r, const hs_profile_t *p, int64_t key)
{
    for (size_t i = 0; r->priv && i < r->priv->nunits; i++)
        if (r->priv->units[i].p == p)
            return hs_numunits_get(&r->priv->units[i], key);
    return "";
}

/* pprof's combineHeaders: earliest time (a later zero wins, as in pprof), durations
 * summed, comments without repeats. */
static int rep_headers(hs_report_t *r, const hs_profile_t *const *profs, size_t n,
                       const hs_report_opts_t *o)
{
    size_t nc = 0;
    for (size_t i = 0; i < n; i++)
        nc += profs[i]->ncomments;
    r->comments = malloc((nc + 1) * sizeof(char *));
    if (!r->comments)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++) {
        const hs_profile_t *p = profs[i];
        if (r->time_nanos == 0 || p->time_nanos < r->time_nanos)
            r->time_nanos = p->time_nanos;
        r->duration_nanos += p->duration_nanos;
        for (size_t c = 0; c < p->ncomments; c++) {
            const char *s = hs_profile_get_str(p, p->comments[c]);
            if (!o->all_comments && hs_report_accounting_comment(s))
                continue;
            bool seen = false;
            for (size_t j = 0; j < r->ncomments && !seen; j++)
                seen = strcmp(r->comments[j], s) == 0;
            if (!seen)
                r->comments[r->ncomments++] = s;
        }
        if (!r->first && p->nmappings)
            r->first = p;
    }
    if (!r->first)
        r->first = profs[0];
    return 0;
}

/* A float truncated toward zero, as Perl's %d prints one (clamped to int64). */
static int64_t rep_trunc(double f)
{
    if (f != f)
        return 0;
    if (f >= 9.2233720368547748e18)
        return INT64_MAX;
    return f <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)f;
}

/* Flat and cum per node (pprof's newGraph): cum once per sample per node, flat to the
 * leaf; variances alike. A fractional report's are its unrounded sums truncated. */
static void rep_accumulate(hs_report_t *r)
{
    for (size_t si = 0; si < r->nsamples; si++) {
        const hs_rsample_t *s = &r->samples[si];
        if (s->value == 0 && s->fvalue == 0)
            continue;
        for (size_t i = s->nframes; i-- > 0;) {
            hs_rnode_t *n = &r->nodes[s->frames[i]];
            if (n->stamp != si + 1) {
                n->stamp = si + 1;
                n->cum = hs_sat_add(n->cum, s->value);
                n->fcum += s->fvalue;
                if (s->base)
                    n->base_cum = hs_sat_add(n->base_cum, -s->value);
                *(s->base ? &n->base_cum_var : &n->cum_var) += s->var;
            }
        }
        hs_rnode_t *leaf = &r->nodes[s->frames[0]];
        leaf->flat = hs_sat_add(leaf->flat, s->value);
        leaf->fflat += s->fvalue;
        if (s->base)
            leaf->base_flat = hs_sat_add(leaf->base_flat, -s->value);
        *(s->base ? &leaf->base_flat_var : &leaf->flat_var) += s->var;
    }
    for (size_t i = 0; r->fractional && i < r->nnodes; i++) {
        r->nodes[i].flat = rep_trunc(r->nodes[i].fflat);
        r->nodes[i].cum = rep_trunc(r->nodes[i].fcum);
    }
}

static int rep_check(const hs_profile_t *const *profs, const int *signs, size_t n,
                     const hs_report_opts_t *o, int *sidx, char *err, size_t errlen)
{
    const hs_profile_t *p = profs[0];
    if (p->ntypes == 0) {
        snprintf(err, errlen, "profile has no sample types");
        return -EPROTO;
    }
    for (size_t i = 1; i < n; i++) {
        if (signs[i] < 0 && !rep_compatible(p, profs[i])) {
            snprintf(err, errlen, "the profiles have different sample or period types");
            return -EPROTO;
        }
    }
    *sidx = hs_report_sample_index(p, o->sample_type);
    for (size_t i = 0; !o->sample_type && i < n; i++) { /* combineHeaders' default */
        const char *dst = hs_profile_get_str(profs[i], profs[i]->default_sample_type);
        if (*dst) {
            int k = hs_profile_sample_type_index(p, dst);
            *sidx = k >= 0 ? k : (int)p->ntypes - 1;
            break;
        }
    }
    if (*sidx < 0) {
        size_t w =
            (size_t)snprintf(err, errlen, "sample type \"%s\" must be one of: [", o->sample_type);
        for (size_t i = 0; i < p->ntypes && w < errlen; i++)
            w += (size_t)snprintf(err + w, errlen - w, "%s%s", i ? " " : "",
                                  hs_profile_get_str(p, p->sample_types[i].type));
        if (w < errlen)
            snprintf(err + w, errlen - w, "]");
        return -EINVAL;
    }
    return 0;
}

static int rep_inputs(hs_report_t *r, rep_input_t *in, size_t n, const hs_report_opts_t *o)
{
    size_t cap = 0;
    int64_t base_total = 0;
    double ftot[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        int rc = rep_prepare_input(r, &in[i], o);
        if (!rc)
            rc = rep_samples(r, &in[i], &cap, &base_total, ftot);
        if (rc)
            return rc;
    }
    if (r->fractional) { /* jeprof's TotalProfile, truncated when printed */
        r->total = rep_trunc(ftot[0]);
        base_total = rep_trunc(ftot[1]);
    }
    if (base_total > 0) /* computeTotal: a diff is relative to its base */
        r->total = base_total;
    for (size_t i = 0; i < r->nsamples; i++) {
        size_t off = (size_t)(uintptr_t)r->samples[i].frames;
        r->samples[i].frames = r->priv->frames + off;
        r->samples[i].inl = r->priv->inl + off;
    }
    return 0;
}

int hs_report_build(hs_report_t *r, const hs_profile_t *const *profs, const int *signs, size_t n,
                    const hs_report_opts_t *o, char *err, size_t errlen)
{
    memset(r, 0, sizeof(*r));
    int rc = rep_check(profs, signs, n, o, &r->sidx, err, errlen);
    if (rc)
        return rc;
    const hs_profile_t *p = profs[0];
    r->sample_type = hs_profile_get_str(p, p->sample_types[r->sidx].type);
    r->sample_unit = hs_profile_get_str(p, p->sample_types[r->sidx].unit);
    r->priv = calloc(1, sizeof(*r->priv));
    rep_input_t *in = calloc(n, sizeof(*in));
    if (!r->priv || !in) {
        free(in);
        return -ENOMEM;
    }
    rc = rep_compile(r, o, err, errlen);
    if (!rc && !(r->priv->units = calloc(n, sizeof(hs_numunits_t))))
        rc = -ENOMEM;
    if (!rc && !(r->priv->pools = calloc(n, sizeof(int64_t *))))
        rc = -ENOMEM;
    for (size_t i = 0; !rc && i < n; i++) {
        in[i].p = profs[i];
        in[i].sign = signs[i];
        in[i].units = &r->priv->units[i];
        if (!o->no_drop_frames && *hs_profile_get_str(p, p->drop_frames)) { /* pprof's Merge */
            in[i].drop = hs_profile_get_str(p, p->drop_frames);
            in[i].keep = hs_profile_get_str(p, p->keep_frames);
        }
        rep_var_pair(&in[i], r->sidx);
        r->exact = (i == 0 || r->exact) && (signs[i] < 0 || profs[i]->period <= 1);
        r->base_exact = (i == 0 || r->base_exact) && (signs[i] >= 0 || profs[i]->period <= 1);
        if (!(rc = hs_numunits_init(&r->priv->units[i], profs[i])))
            r->priv->nunits++;
    }
    if (!rc)
        rc = rep_headers(r, profs, n, o);
    if (!rc)
        rc = rep_inputs(r, in, n, o);
    if (!rc)
        rep_accumulate(r);
    for (size_t i = 0; i < n; i++) {
        free(in[i].funcs.sorted);
        free(in[i].locs.sorted);
        free(in[i].loc);
        free(in[i].loc_nodes);
        free(in[i].loc_inl);
        hs_dropframes_plan_free(&in[i].plan);
    }
    free(in);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s", strerror(ENOMEM));
    return rc;
}

void hs_report_free(hs_report_t *r)
{
    for (size_t i = 0; i < r->nnodes; i++) {
        free(r->nodes[i].name);
        free(r->nodes[i].file);
    }
    free(r->nodes);
    free(r->samples);
    free(r->comments);
    if (r->priv) {
        for (int i = 0; i < 4; i++)
            if (r->priv->have_re[i])
                regfree(&r->priv->re[i]);
        hs_tagfilter_free(r->priv->tagfocus);
        hs_tagfilter_free(r->priv->tagignore);
        for (size_t i = 0; i < r->priv->nunits; i++)
            hs_numunits_free(&r->priv->units[i]);
        free(r->priv->units);
        for (size_t i = 0; i < r->priv->npools; i++)
            free(r->priv->pools[i]);
        free(r->priv->pools);
        free(r->priv->slots);
        free(r->priv->frames);
        free(r->priv->inl);
        free(r->priv);
    }
    memset(r, 0, sizeof(*r));
}

/*
 * pprof wire format (profile.proto from google/pprof) for the profile model: the encoder
 * writes every field the model holds; the decoder accepts anything protobuf allows
 * (packed or unpacked repeated scalars, fields in any order, unknown fields skipped) and
 * rejects the rest with a one-line reason, never reading out of bounds and allocating at
 * most a small multiple of the input size. Also writing a profile file, through gzip.c and
 * fileio.c (reading one is readers.c's). Called by the dump path inside the profiled process (guard
 * held, so malloc is fine; no stdio FILE*) and by the CLI.
 */
#define _GNU_SOURCE
#include "pprof.h"
#include "base/utf8.h"
#include "base/sort.h"
#include "base/pb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* profile.proto field numbers. */
enum {
    PF_SAMPLE_TYPE = 1,
    PF_SAMPLE = 2,
    PF_MAPPING = 3,
    PF_LOCATION = 4,
    PF_FUNCTION = 5,
    PF_STRING_TABLE = 6,
    PF_DROP_FRAMES = 7,
    PF_KEEP_FRAMES = 8,
    PF_TIME_NANOS = 9,
    PF_DURATION_NANOS = 10,
    PF_PERIOD_TYPE = 11,
    PF_PERIOD = 12,
    PF_COMMENT = 13,
    PF_DEFAULT_SAMPLE_TYPE = 14,
};

/* ---- encoder ------------------------------------------------------------------------ */

static void pprof_put_value_type(hs_pb_enc_t *e, uint32_t field, const hs_value_type_t *vt)
{
    size_t tok = hs_pb_begin(e, field);
    hs_pb_put_int(e, 1, vt->type);
    hs_pb_put_int(e, 2, vt->unit);
    hs_pb_end(e, tok);
}

static void pprof_put_sample(hs_pb_enc_t *e, const hs_sample_t *s, size_t ntypes)
{
    size_t tok = hs_pb_begin(e, PF_SAMPLE);
    hs_pb_put_packed(e, 1, s->location_ids, s->nlocs);
    hs_pb_put_packed_int(e, 2, s->values, ntypes);
    for (size_t i = 0; i < s->nlabels; i++) {
        const hs_label_t *l = &s->labels[i];
        size_t lt = hs_pb_begin(e, 3);
        hs_pb_put_int(e, 1, l->key);
        hs_pb_put_int(e, 2, l->str);
        hs_pb_put_int(e, 3, l->num);
        hs_pb_put_int(e, 4, l->num_unit);
        hs_pb_end(e, lt);
    }
    hs_pb_end(e, tok);
}

static void pprof_put_mapping(hs_pb_enc_t *e, const hs_mapping_t *m)
{
    size_t tok = hs_pb_begin(e, PF_MAPPING);
    hs_pb_put_uint(e, 1, m->id);
    hs_pb_put_uint(e, 2, m->memory_start);
    hs_pb_put_uint(e, 3, m->memory_limit);
    hs_pb_put_uint(e, 4, m->file_offset);
    hs_pb_put_int(e, 5, m->filename);
    hs_pb_put_int(e, 6, m->build_id);
    hs_pb_put_uint(e, 7, m->has_functions);
    hs_pb_put_uint(e, 8, m->has_filenames);
    hs_pb_put_uint(e, 9, m->has_line_numbers);
    hs_pb_put_uint(e, 10, m->has_inline_frames);
    hs_pb_end(e, tok);
}

static void pprof_put_location(hs_pb_enc_t *e, const hs_location_t *l)
{
    size_t tok = hs_pb_begin(e, PF_LOCATION);
    hs_pb_put_uint(e, 1, l->id);
    hs_pb_put_uint(e, 2, l->mapping_id);
    hs_pb_put_uint(e, 3, l->address);
    for (size_t i = 0; i < l->nlines; i++) {
        size_t lt = hs_pb_begin(e, 4);
        hs_pb_put_uint(e, 1, l->lines[i].function_id);
        hs_pb_put_int(e, 2, l->lines[i].line);
        hs_pb_end(e, lt);
    }
    hs_pb_put_uint(e, 5, l->is_folded);
    hs_pb_end(e, tok);
}

static void pprof_put_function(hs_pb_enc_t *e, const hs_function_t *f)
{
    size_t tok = hs_pb_begin(e, PF_FUNCTION);
    hs_pb_put_uint(e, 1, f->id);
    hs_pb_put_int(e, 2, f->name);
    hs_pb_put_int(e, 3, f->system_name);
    hs_pb_put_int(e, 4, f->filename);
    hs_pb_put_int(e, 5, f->start_line);
    hs_pb_end(e, tok);
}

int hs_pprof_encode(const hs_profile_t *p, hs_buf_t *out)
{
    hs_pb_enc_t e = {out, 0};
    size_t start = out->len;
    for (size_t i = 0; i < p->ntypes; i++)
        pprof_put_value_type(&e, PF_SAMPLE_TYPE, &p->sample_types[i]);
    for (size_t i = 0; i < p->nsamples; i++)
        pprof_put_sample(&e, &p->samples[i], p->ntypes);
    for (size_t i = 0; i < p->nmappings; i++)
        pprof_put_mapping(&e, &p->mappings[i]);
    for (size_t i = 0; i < p->nlocations; i++)
        pprof_put_location(&e, &p->locations[i]);
    for (size_t i = 0; i < p->nfunctions; i++)
        pprof_put_function(&e, &p->functions[i]);
    for (size_t i = 0; i < p->nstrings; i++)
        hs_pb_put_bytes(&e, PF_STRING_TABLE, p->strings[i], strlen(p->strings[i]));
    hs_pb_put_int(&e, PF_DROP_FRAMES, p->drop_frames);
    hs_pb_put_int(&e, PF_KEEP_FRAMES, p->keep_frames);
    hs_pb_put_int(&e, PF_TIME_NANOS, p->time_nanos);
    hs_pb_put_int(&e, PF_DURATION_NANOS, p->duration_nanos);
    if (p->period_type.type || p->period_type.unit)
        pprof_put_value_type(&e, PF_PERIOD_TYPE, &p->period_type);
    hs_pb_put_int(&e, PF_PERIOD, p->period);
    hs_pb_put_packed_int(&e, PF_COMMENT, p->comments, p->ncomments);
    hs_pb_put_int(&e, PF_DEFAULT_SAMPLE_TYPE, p->default_sample_type);
    if (e.err)
        out->len = start;
    return e.err;
}

/* ---- decoder ------------------------------------------------------------------------ */

typedef struct {
    uint64_t *v;
    size_t n, cap;
} pprof_vec_t;

typedef struct {
    hs_profile_t *p;
    hs_pb_dec_t top;
    bool seen_string0;
    pprof_vec_t nvalues; /* number of values of each sample */
} pprof_dec_t;

static int pprof_wire(hs_pb_dec_t *d, const hs_pb_field_t *f, int want)
{
    if (f->wire == want)
        return 0;
    char what[64];
    snprintf(what, sizeof(what), "field %u has wire type %d, want %d", f->field, f->wire, want);
    return hs_pb_fail(d, what);
}

static int pprof_vec_room(pprof_vec_t *vec, size_t extra)
{
    if (extra <= vec->cap - vec->n)
        return 0;
    size_t cap = vec->cap ? vec->cap : 4;
    while (cap - vec->n < extra)
        cap *= 2;
    uint64_t *a = realloc(vec->v, cap * sizeof(*a));
    if (!a)
        return -ENOMEM;
    vec->v = a;
    vec->cap = cap;
    return 0;
}

/* Appends a repeated varint field, packed (LEN) or not (VARINT). */
static int pprof_repeated(hs_pb_dec_t *d, const hs_pb_field_t *f, pprof_vec_t *vec)
{
    if (f->wire == HS_PB_VARINT) {
        if (pprof_vec_room(vec, 1))
            return -ENOMEM;
        vec->v[vec->n++] = f->v;
        return 0;
    }
    if (pprof_wire(d, f, HS_PB_LEN))
        return -EINVAL;
    size_t count = 0; /* one varint ends at each byte without the high bit */
    for (size_t i = 0; i < f->len; i++)
        count += !(f->data[i] & 0x80);
    if (f->len && (f->data[f->len - 1] & 0x80)) /* the last varint never ends */
        return hs_pb_fail(d, "truncated varint in a packed field"), -EINVAL;
    if (pprof_vec_room(vec, count))
        return -ENOMEM;
    hs_pb_dec_t s = hs_pb_sub(d, f);
    while (s.pos < s.end)
        if (!hs_pb_varint(&s, &vec->v[vec->n++]))
            return -EINVAL;
    return 0;
}

static int pprof_value_type(hs_pb_dec_t *d, const hs_pb_field_t *f, hs_value_type_t *vt)
{
    hs_pb_dec_t s = hs_pb_sub(d, f);
    hs_pb_field_t g;
    int rc;
    while ((rc = hs_pb_next(&s, &g)) > 0) {
        if (g.field != 1 && g.field != 2)
            continue;
        if (pprof_wire(&s, &g, HS_PB_VARINT))
            return -EINVAL;
        if (g.field == 1)
            vt->type = (int64_t)g.v;
        else
            vt->unit = (int64_t)g.v;
    }
    return rc < 0 ? -EINVAL : 0;
}

static int pprof_label(hs_pb_dec_t *d, const hs_pb_field_t *f, hs_sample_t *smp, size_t *cap)
{
    if (smp->nlabels == *cap) {
        size_t ncap = *cap ? *cap * 2 : 4;
        hs_label_t *a = realloc(smp->labels, ncap * sizeof(*a));
        if (!a)
            return -ENOMEM;
        smp->labels = a;
        *cap = ncap;
    }
    hs_label_t *l = &smp->labels[smp->nlabels++];
    memset(l, 0, sizeof(*l));
    hs_pb_dec_t s = hs_pb_sub(d, f);
    hs_pb_field_t g;
    int rc;
    while ((rc = hs_pb_next(&s, &g)) > 0) {
        if (g.field < 1 || g.field > 4)
            continue;
        if (pprof_wire(&s, &g, HS_PB_VARINT))
            return -EINVAL;
        int64_t *dst[] = {&l->key, &l->str, &l->num, &l->num_unit};
        *dst[g.field - 1] = (int64_t)g.v;
    }
    return rc < 0 ? -EINVAL : 0;
}

static int pprof_sample(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    hs_sample_t *smp = hs_profile_push_sample(pd->p);
    if (!smp)
        return -ENOMEM;
    pprof_vec_t locs = {0}, vals = {0};
    size_t label_cap = 0;
    hs_pb_dec_t s = hs_pb_sub(&pd->top, f);
    hs_pb_field_t g;
    int rc;
    while ((rc = hs_pb_next(&s, &g)) > 0) {
        int err = 0;
        if (g.field == 1)
            err = pprof_repeated(&s, &g, &locs);
        else if (g.field == 2)
            err = pprof_repeated(&s, &g, &vals);
        else if (g.field == 3)
            err = pprof_wire(&s, &g, HS_PB_LEN) ? -EINVAL : pprof_label(&s, &g, smp, &label_cap);
        if (err) {
            rc = err;
            break;
        }
    }
    smp->location_ids = locs.v;
    smp->nlocs = locs.n;
    smp->values = (int64_t *)vals.v;
    /* Sample types may come later in the message: the count is checked at the end. */
    if (rc >= 0 && pprof_vec_room(&pd->nvalues, 1))
        rc = -ENOMEM;
    if (rc >= 0)
        pd->nvalues.v[pd->nvalues.n++] = vals.n;
    return rc < 0 ? (rc == -1 ? -EINVAL : rc) : 0;
}

/* Decodes a message whose fields are all varints into slots[field - 1]. */
static int pprof_varints(hs_pb_dec_t *d, const hs_pb_field_t *f, uint64_t *slots, uint32_t n)
{
    hs_pb_dec_t s = hs_pb_sub(d, f);
    hs_pb_field_t g;
    int rc;
    while ((rc = hs_pb_next(&s, &g)) > 0) {
        if (g.field > n)
            continue;
        if (pprof_wire(&s, &g, HS_PB_VARINT))
            return -EINVAL;
        slots[g.field - 1] = g.v;
    }
    return rc < 0 ? -EINVAL : 0;
}

static int pprof_mapping(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    uint64_t v[10] = {0};
    int rc = pprof_varints(&pd->top, f, v, 10);
    if (rc)
        return rc;
    hs_mapping_t *m = hs_profile_push_mapping(pd->p);
    if (!m)
        return -ENOMEM;
    m->id = v[0];
    m->memory_start = v[1];
    m->memory_limit = v[2];
    m->file_offset = v[3];
    m->filename = (int64_t)v[4];
    m->build_id = (int64_t)v[5];
    m->has_functions = v[6] != 0;
    m->has_filenames = v[7] != 0;
    m->has_line_numbers = v[8] != 0;
    m->has_inline_frames = v[9] != 0;
    return 0;
}

static int pprof_function(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    uint64_t v[5] = {0};
    int rc = pprof_varints(&pd->top, f, v, 5);
    if (rc)
        return rc;
    hs_function_t *fn = hs_profile_push_function(pd->p);
    if (!fn)
        return -ENOMEM;
    fn->id = v[0];
    fn->name = (int64_t)v[1];
    fn->system_name = (int64_t)v[2];
    fn->filename = (int64_t)v[3];
    fn->start_line = (int64_t)v[4];
    return 0;
}

static int pprof_line(hs_pb_dec_t *d, const hs_pb_field_t *f, hs_location_t *l, size_t *cap)
{
    if (pprof_wire(d, f, HS_PB_LEN))
        return -EINVAL;
    if (l->nlines == *cap) {
        size_t ncap = *cap ? *cap * 2 : 2;
        hs_line_t *a = realloc(l->lines, ncap * sizeof(*a));
        if (!a)
            return -ENOMEM;
        l->lines = a;
        *cap = ncap;
    }
    uint64_t v[2] = {0};
    int rc = pprof_varints(d, f, v, 2);
    l->lines[l->nlines].function_id = v[0];
    l->lines[l->nlines].line = (int64_t)v[1];
    l->nlines++;
    return rc;
}

static int pprof_location(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    hs_location_t *l = hs_profile_push_location(pd->p);
    if (!l)
        return -ENOMEM;
    size_t cap = 0;
    hs_pb_dec_t s = hs_pb_sub(&pd->top, f);
    hs_pb_field_t g;
    int rc;
    while ((rc = hs_pb_next(&s, &g)) > 0) {
        if (g.field == 4) {
            rc = pprof_line(&s, &g, l, &cap);
            if (rc)
                return rc;
            continue;
        }
        if (g.field > 5)
            continue;
        if (pprof_wire(&s, &g, HS_PB_VARINT))
            return -EINVAL;
        if (g.field == 1)
            l->id = g.v;
        else if (g.field == 2)
            l->mapping_id = g.v;
        else if (g.field == 3)
            l->address = g.v;
        else if (g.field == 5)
            l->is_folded = g.v != 0;
    }
    return rc < 0 ? -EINVAL : 0;
}

/* A string of the table; one with a control byte (a NUL inside a C++ or Rust name) is
 * kept whole with \xNN escapes, as the model holds C strings; names that differ after a
 * NUL stay apart. Cost: one scan of each string. */
static int pprof_push_str(hs_profile_t *p, const char *s, size_t len)
{
    if (!hs_str_has_ctl(s, len))
        return hs_profile_push_str(p, s, len) < 0 ? -ENOMEM : 0;
    size_t n;
    char *e = hs_str_escape_ctl(s, len, &n);
    int rc = e && hs_profile_push_str(p, e, n) >= 0 ? 0 : -ENOMEM;
    free(e);
    return rc;
}

/* The wire's string 0 must be "" and is the model's existing string 0. */
static int pprof_string(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    if (pprof_wire(&pd->top, f, HS_PB_LEN))
        return -EINVAL;
    if (!pd->seen_string0) {
        pd->seen_string0 = true;
        if (f->len != 0) {
            pd->top.pos = f->data;
            hs_pb_fail(&pd->top, "string_table[0] is not empty");
            return -EINVAL;
        }
        return 0;
    }
    return pprof_push_str(pd->p, (const char *)f->data, f->len);
}

static int pprof_scalar(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    hs_profile_t *p = pd->p;
    int64_t *dst[] = {
        [PF_DROP_FRAMES] = &p->drop_frames, [PF_KEEP_FRAMES] = &p->keep_frames,
        [PF_TIME_NANOS] = &p->time_nanos,   [PF_DURATION_NANOS] = &p->duration_nanos,
        [PF_PERIOD] = &p->period,           [PF_DEFAULT_SAMPLE_TYPE] = &p->default_sample_type};
    if (pprof_wire(&pd->top, f, HS_PB_VARINT))
        return -EINVAL;
    *dst[f->field] = (int64_t)f->v;
    return 0;
}

static int pprof_comments(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    hs_profile_t *p = pd->p;
    pprof_vec_t vec = {(uint64_t *)p->comments, p->ncomments, p->ncomments};
    int rc = pprof_repeated(&pd->top, f, &vec);
    p->comments = (int64_t *)vec.v;
    p->ncomments = vec.n;
    return rc;
}

static int pprof_sample_type(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    hs_profile_t *p = pd->p;
    hs_value_type_t vt = {0, 0};
    if (pprof_wire(&pd->top, f, HS_PB_LEN) || pprof_value_type(&pd->top, f, &vt))
        return -EINVAL;
    hs_value_type_t *a = realloc(p->sample_types, (p->ntypes + 1) * sizeof(*a));
    if (!a)
        return -ENOMEM;
    p->sample_types = a;
    a[p->ntypes++] = vt;
    return 0;
}

static int pprof_field(pprof_dec_t *pd, const hs_pb_field_t *f)
{
    bool msg = f->field >= PF_SAMPLE && f->field <= PF_FUNCTION;
    if (msg && pprof_wire(&pd->top, f, HS_PB_LEN))
        return -EINVAL;
    switch (f->field) {
    case PF_SAMPLE_TYPE:
        return pprof_sample_type(pd, f);
    case PF_SAMPLE:
        return pprof_sample(pd, f);
    case PF_MAPPING:
        return pprof_mapping(pd, f);
    case PF_LOCATION:
        return pprof_location(pd, f);
    case PF_FUNCTION:
        return pprof_function(pd, f);
    case PF_STRING_TABLE:
        return pprof_string(pd, f);
    case PF_PERIOD_TYPE:
        if (pprof_wire(&pd->top, f, HS_PB_LEN))
            return -EINVAL;
        return pprof_value_type(&pd->top, f, &pd->p->period_type);
    case PF_COMMENT:
        return pprof_comments(pd, f);
    case PF_DROP_FRAMES:
    case PF_KEEP_FRAMES:
    case PF_TIME_NANOS:
    case PF_DURATION_NANOS:
    case PF_PERIOD:
    case PF_DEFAULT_SAMPLE_TYPE:
        return pprof_scalar(pd, f);
    default:
        return 0; /* unknown fields are skipped */
    }
}

/* ---- validation: what pprof's CheckValid and postDecode reject ------------------------ */

static int pprof_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Collects the ids at stride through arr into a sorted array; fails on 0 or duplicates. */
static const char *pprof_ids(const void *arr, size_t n, size_t stride, uint64_t **out)
{
    *out = malloc((n ? n : 1) * sizeof(uint64_t));
    if (!*out)
        return "out of memory";
    for (size_t i = 0; i < n; i++)
        (*out)[i] = *(const uint64_t *)((const char *)arr + i * stride);
    hs_sort(*out, n, sizeof(uint64_t), pprof_cmp_u64);
    for (size_t i = 0; i < n; i++) {
        if ((*out)[i] == 0)
            return "reserved id 0";
        if (i && (*out)[i] == (*out)[i - 1])
            return "duplicate id";
    }
    return NULL;
}

static bool pprof_has_id(const uint64_t *ids, size_t n, uint64_t id)
{
    return bsearch(&id, ids, n, sizeof(id), pprof_cmp_u64) != NULL;
}

static bool pprof_str_ok(const hs_profile_t *p, int64_t i)
{
    return i >= 0 && (uint64_t)i < p->nstrings;
}

static bool pprof_strings_ok(const hs_profile_t *p)
{
    bool ok = pprof_str_ok(p, p->drop_frames) && pprof_str_ok(p, p->keep_frames) &&
              pprof_str_ok(p, p->default_sample_type) && pprof_str_ok(p, p->period_type.type) &&
              pprof_str_ok(p, p->period_type.unit);
    for (size_t i = 0; ok && i < p->ntypes; i++)
        ok = pprof_str_ok(p, p->sample_types[i].type) && pprof_str_ok(p, p->sample_types[i].unit);
    for (size_t i = 0; ok && i < p->ncomments; i++)
        ok = pprof_str_ok(p, p->comments[i]);
    for (size_t i = 0; ok && i < p->nmappings; i++)
        ok = pprof_str_ok(p, p->mappings[i].filename) && pprof_str_ok(p, p->mappings[i].build_id);
    for (size_t i = 0; ok && i < p->nfunctions; i++) {
        const hs_function_t *f = &p->functions[i];
        ok = pprof_str_ok(p, f->name) && pprof_str_ok(p, f->system_name) &&
             pprof_str_ok(p, f->filename);
    }
    for (size_t i = 0; ok && i < p->nsamples; i++)
        for (size_t j = 0; ok && j < p->samples[i].nlabels; j++) {
            const hs_label_t *l = &p->samples[i].labels[j];
            ok = pprof_str_ok(p, l->key) && pprof_str_ok(p, l->str) && pprof_str_ok(p, l->num_unit);
        }
    return ok;
}

/* References between tables; ids are sorted arrays from pprof_ids. */
static const char *pprof_refs_ok(const hs_profile_t *p, const uint64_t *fids, const uint64_t *lids)
{
    for (size_t i = 0; i < p->nlocations; i++)
        for (size_t j = 0; j < p->locations[i].nlines; j++)
            if (!pprof_has_id(fids, p->nfunctions, p->locations[i].lines[j].function_id))
                return "location line refers to a missing function";
    for (size_t i = 0; i < p->nsamples; i++)
        for (size_t j = 0; j < p->samples[i].nlocs; j++)
            if (!pprof_has_id(lids, p->nlocations, p->samples[i].location_ids[j]))
                return "sample refers to a missing location";
    return NULL;
}

static const char *pprof_validate(const pprof_dec_t *pd)
{
    const hs_profile_t *p = pd->p;
    if (p->ntypes == 0 && p->nsamples)
        return "missing sample type information";
    for (size_t i = 0; i < p->nsamples; i++)
        if (pd->nvalues.v[i] != p->ntypes)
            return "a sample's value count differs from the number of sample types";
    if (!pprof_strings_ok(p))
        return "string index out of range";
    uint64_t *mids = NULL, *fids = NULL, *lids = NULL;
    const char *why = pprof_ids(p->mappings, p->nmappings, sizeof(hs_mapping_t), &mids);
    if (!why)
        why = pprof_ids(p->functions, p->nfunctions, sizeof(hs_function_t), &fids);
    if (!why)
        why = pprof_ids(p->locations, p->nlocations, sizeof(hs_location_t), &lids);
    if (!why)
        why = pprof_refs_ok(p, fids, lids);
    free(mids);
    free(fids);
    free(lids);
    return why;
}

int hs_pprof_decode(const uint8_t *data, size_t len, hs_profile_t **out, char *err, size_t errlen)
{
    char why[160] = "";
    const uint8_t *end = len ? data + len : data; /* NULL + 0 is undefined */
    pprof_dec_t pd = {.p = hs_profile_new(), .top = {data, data, end, why, sizeof(why)}};
    int rc = pd.p ? 0 : -ENOMEM;
    hs_pb_field_t f;
    int more;
    if (rc == 0 && len == 0) {
        snprintf(why, sizeof(why), "empty input");
        rc = -EINVAL;
    }
    while (rc == 0 && (more = hs_pb_next(&pd.top, &f)) != 0)
        rc = more < 0 ? -EINVAL : pprof_field(&pd, &f);
    if (rc == -EINVAL) {
        snprintf(err, errlen, "not a pprof profile: %s", why);
    } else if (rc == 0) {
        const char *bad = pprof_validate(&pd);
        if (bad) {
            snprintf(err, errlen, "invalid pprof profile: %s", bad);
            rc = -EINVAL;
        }
    } else {
        snprintf(err, errlen, "%s", strerror(-rc));
    }
    free(pd.nvalues.v);
    if (rc) {
        hs_profile_free(pd.p);
        pd.p = NULL;
    }
    *out = pd.p;
    return rc;
}

/* ---- profile files (gzip and file I/O: gzip.c, fileio.c) ---------------------------- */

int hs_pprof_write_file(const hs_profile_t *p, const char *path)
{
    hs_buf_t pb = HS_BUF_INIT, gz = HS_BUF_INIT;
    int rc = hs_pprof_encode(p, &pb);
    if (!rc)
        rc = hs_gzip(pb.data, pb.len, HS_GZIP_PROCESS_LEVEL, &gz);
    if (!rc)
        rc = hs_write_file_atomic(path, gz.data, gz.len);
    hs_buf_free(&pb);
    hs_buf_free(&gz);
    return rc;
}

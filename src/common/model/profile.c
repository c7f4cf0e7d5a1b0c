/*
 * The in-memory pprof profile (see profile.h): growth of its arrays, string interning,
 * function interning and lookups by id. Both indexes live in one opaque hs_strtab_t,
 * built lazily and kept up to date incrementally, so readers that push raw strings and
 * functions pay nothing until someone interns. Uses malloc only; no I/O, no locks.
 */
#include "profile.h"
#include "base/hash.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Open-addressing hash sets of indices (stored as index + 1; 0 = empty slot), linear
 * probing, capacity a power of two kept at most 1/2 full. */
typedef struct {
    uint32_t *slots;
    size_t cap, used;
    size_t nindexed; /* elements [0, nindexed) of the indexed array are in the set */
} hs_idxset_t;

struct hs_strtab {
    hs_idxset_t strs;
    hs_idxset_t funcs;
};

static uint64_t profile_hash_func(const hs_function_t *f)
{
    uint64_t v[4] = {(uint64_t)f->name, (uint64_t)f->system_name, (uint64_t)f->filename,
                     (uint64_t)f->start_line};
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < 4; i++) {
        h ^= v[i] + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
        h *= 0xff51afd7ed558ccdull;
    }
    return h ^ (h >> 32);
}

static int profile_grow(void **arr, size_t *cap, size_t n, size_t elem)
{
    if (n < *cap)
        return 0;
    size_t ncap = *cap ? *cap * 2 : 16;
    if (ncap > SIZE_MAX / elem)
        return -ENOMEM;
    void *a = realloc(*arr, ncap * elem);
    if (!a)
        return -ENOMEM;
    memset((char *)a + *cap * elem, 0, (ncap - *cap) * elem);
    *arr = a;
    *cap = ncap;
    return 0;
}

/* Inserts idx at hash h without a duplicate check; the set must have room. */
static void idxset_put(hs_idxset_t *s, uint64_t h, size_t idx)
{
    size_t mask = s->cap - 1;
    size_t i = (size_t)h & mask;
    while (s->slots[i])
        i = (i + 1) & mask;
    s->slots[i] = (uint32_t)(idx + 1);
    s->used++;
}

static uint64_t profile_hash_str_at(const hs_profile_t *p, size_t i)
{
    return hs_hash_bytes(p->strings[i], strlen(p->strings[i]));
}

static uint64_t profile_hash_func_at(const hs_profile_t *p, size_t i)
{
    return profile_hash_func(&p->functions[i]);
}

/* Makes room for one more entry, rehashing with hashfn over the indexed elements. */
static int idxset_room(hs_idxset_t *s, const hs_profile_t *p,
                       uint64_t (*hashfn)(const hs_profile_t *, size_t))
{
    if ((s->used + 1) * 2 <= s->cap)
        return 0;
    size_t ncap = s->cap ? s->cap * 2 : 64;
    uint32_t *slots = calloc(ncap, sizeof(*slots));
    if (!slots)
        return -ENOMEM;
    uint32_t *old = s->slots;
    size_t ocap = s->cap;
    s->slots = slots;
    s->cap = ncap;
    s->used = 0;
    for (size_t i = 0; i < ocap; i++)
        if (old[i])
            idxset_put(s, hashfn(p, old[i] - 1), old[i] - 1);
    free(old);
    return 0;
}

static bool profile_str_eq(const hs_profile_t *p, size_t idx, const char *s, size_t n)
{
    const char *t = p->strings[idx];
    return strncmp(t, s, n) == 0 && t[n] == '\0';
}

static bool profile_func_eq(const hs_function_t *a, const hs_function_t *b)
{
    return a->name == b->name && a->system_name == b->system_name && a->filename == b->filename &&
           a->start_line == b->start_line;
}

/* Index of the string s[0..n) or -1; the set must be caught up. */
static int64_t strset_find(const hs_profile_t *p, const hs_idxset_t *s, const char *str, size_t n,
                           uint64_t h)
{
    if (!s->cap)
        return -1;
    size_t mask = s->cap - 1;
    for (size_t i = (size_t)h & mask; s->slots[i]; i = (i + 1) & mask)
        if (profile_str_eq(p, s->slots[i] - 1, str, n))
            return (int64_t)s->slots[i] - 1;
    return -1;
}

static int64_t funcset_find(const hs_profile_t *p, const hs_idxset_t *s, const hs_function_t *f,
                            uint64_t h)
{
    if (!s->cap)
        return -1;
    size_t mask = s->cap - 1;
    for (size_t i = (size_t)h & mask; s->slots[i]; i = (i + 1) & mask)
        if (profile_func_eq(&p->functions[s->slots[i] - 1], f))
            return (int64_t)s->slots[i] - 1;
    return -1;
}

static int profile_ensure_tab(hs_profile_t *p)
{
    if (!p->strtab)
        p->strtab = calloc(1, sizeof(*p->strtab));
    return p->strtab ? 0 : -ENOMEM;
}

/* Brings the string index up to date with strings pushed raw since the last call. */
static int profile_index_strings(hs_profile_t *p)
{
    hs_idxset_t *s = &p->strtab->strs;
    for (; s->nindexed < p->nstrings; s->nindexed++) {
        const char *str = p->strings[s->nindexed];
        size_t n = strlen(str);
        uint64_t h = hs_hash_bytes(str, n);
        if (strset_find(p, s, str, n, h) >= 0)
            continue;
        if (idxset_room(s, p, profile_hash_str_at))
            return -ENOMEM;
        idxset_put(s, h, s->nindexed);
    }
    return 0;
}

static int profile_index_functions(hs_profile_t *p)
{
    hs_idxset_t *s = &p->strtab->funcs;
    for (; s->nindexed < p->nfunctions; s->nindexed++) {
        const hs_function_t *f = &p->functions[s->nindexed];
        uint64_t h = profile_hash_func(f);
        if (funcset_find(p, s, f, h) >= 0)
            continue;
        if (idxset_room(s, p, profile_hash_func_at))
            return -ENOMEM;
        idxset_put(s, h, s->nindexed);
    }
    return 0;
}

hs_profile_t *hs_profile_new(void)
{
    hs_profile_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    if (hs_profile_push_str(p, "", 0) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

static void profile_free_idxset(hs_idxset_t *s)
{
    free(s->slots);
}

void hs_profile_free(hs_profile_t *p)
{
    if (!p)
        return;
    for (size_t i = 0; i < p->nsamples; i++) {
        free(p->samples[i].location_ids);
        free(p->samples[i].values);
        free(p->samples[i].fvalues);
        free(p->samples[i].labels);
    }
    for (size_t i = 0; i < p->nlocations; i++)
        free(p->locations[i].lines);
    for (size_t i = 0; i < p->nstrings; i++)
        free(p->strings[i]);
    if (p->strtab) {
        profile_free_idxset(&p->strtab->strs);
        profile_free_idxset(&p->strtab->funcs);
        free(p->strtab);
    }
    free(p->sample_types);
    free(p->samples);
    free(p->mappings);
    free(p->locations);
    free(p->functions);
    free(p->strings);
    free(p->comments);
    free(p);
}

int64_t hs_profile_push_str(hs_profile_t *p, const char *s, size_t len)
{
    if (p->nstrings >= UINT32_MAX - 1)
        return -1;
    if (profile_grow((void **)&p->strings, &p->strings_cap, p->nstrings, sizeof(char *)))
        return -1;
    char *c = malloc(len + 1);
    if (!c)
        return -1;
    if (len)
        memcpy(c, s, len);
    c[len] = '\0';
    p->strings[p->nstrings] = c;
    return (int64_t)p->nstrings++;
}

int64_t hs_profile_str(hs_profile_t *p, const char *s)
{
    if (!s)
        s = "";
    if (profile_ensure_tab(p) || profile_index_strings(p))
        return -1;
    size_t n = strlen(s);
    uint64_t h = hs_hash_bytes(s, n);
    int64_t idx = strset_find(p, &p->strtab->strs, s, n, h);
    if (idx >= 0)
        return idx;
    if (idxset_room(&p->strtab->strs, p, profile_hash_str_at))
        return -1;
    idx = hs_profile_push_str(p, s, n);
    if (idx < 0)
        return -1;
    idxset_put(&p->strtab->strs, h, (size_t)idx);
    p->strtab->strs.nindexed = p->nstrings;
    return idx;
}

const char *hs_profile_get_str(const hs_profile_t *p, int64_t i)
{
    if (i < 0 || (uint64_t)i >= p->nstrings)
        return "";
    return p->strings[i];
}

int hs_profile_add_sample_type(hs_profile_t *p, const char *type, const char *unit)
{
    int64_t t = hs_profile_str(p, type), u = hs_profile_str(p, unit);
    if (t < 0 || u < 0)
        return -ENOMEM;
    hs_value_type_t *a = realloc(p->sample_types, (p->ntypes + 1) * sizeof(*a));
    if (!a)
        return -ENOMEM;
    p->sample_types = a;
    a[p->ntypes].type = t;
    a[p->ntypes].unit = u;
    p->ntypes++;
    return 0;
}

hs_mapping_t *hs_profile_push_mapping(hs_profile_t *p)
{
    if (profile_grow((void **)&p->mappings, &p->mappings_cap, p->nmappings, sizeof(hs_mapping_t)))
        return NULL;
    return &p->mappings[p->nmappings++];
}

hs_function_t *hs_profile_push_function(hs_profile_t *p)
{
    if (profile_grow((void **)&p->functions, &p->functions_cap, p->nfunctions,
                     sizeof(hs_function_t)))
        return NULL;
    return &p->functions[p->nfunctions++];
}

hs_location_t *hs_profile_push_location(hs_profile_t *p)
{
    if (profile_grow((void **)&p->locations, &p->locations_cap, p->nlocations,
                     sizeof(hs_location_t)))
        return NULL;
    return &p->locations[p->nlocations++];
}

hs_sample_t *hs_profile_push_sample(hs_profile_t *p)
{
    if (profile_grow((void **)&p->samples, &p->samples_cap, p->nsamples, sizeof(hs_sample_t)))
        return NULL;
    return &p->samples[p->nsamples++];
}

uint64_t hs_profile_add_mapping(hs_profile_t *p, const hs_mapping_t *m)
{
    hs_mapping_t *n = hs_profile_push_mapping(p);
    if (!n)
        return 0;
    *n = *m;
    n->id = p->nmappings;
    return n->id;
}

uint64_t hs_profile_add_function(hs_profile_t *p, const char *name, const char *system_name,
                                 const char *filename, int64_t start_line)
{
    hs_function_t f = {0, hs_profile_str(p, name), hs_profile_str(p, system_name),
                       hs_profile_str(p, filename), start_line};
    if (f.name < 0 || f.system_name < 0 || f.filename < 0 || profile_index_functions(p))
        return 0;
    uint64_t h = profile_hash_func(&f);
    int64_t idx = funcset_find(p, &p->strtab->funcs, &f, h);
    if (idx >= 0)
        return p->functions[idx].id;
    if (idxset_room(&p->strtab->funcs, p, profile_hash_func_at))
        return 0;
    hs_function_t *n = hs_profile_push_function(p);
    if (!n)
        return 0;
    f.id = p->nfunctions;
    *n = f;
    idxset_put(&p->strtab->funcs, h, p->nfunctions - 1);
    p->strtab->funcs.nindexed = p->nfunctions;
    return f.id;
}

uint64_t hs_profile_add_location(hs_profile_t *p, uint64_t mapping_id, uint64_t address,
                                 const hs_line_t *lines, size_t nlines)
{
    hs_line_t *copy = NULL;
    if (nlines) {
        copy = malloc(nlines * sizeof(*copy));
        if (!copy)
            return 0;
        memcpy(copy, lines, nlines * sizeof(*copy));
    }
    hs_location_t *l = hs_profile_push_location(p);
    if (!l) {
        free(copy);
        return 0;
    }
    l->id = p->nlocations;
    l->mapping_id = mapping_id;
    l->address = address;
    l->lines = copy;
    l->nlines = nlines;
    return l->id;
}

int hs_profile_add_sample(hs_profile_t *p, const uint64_t *location_ids, size_t nlocs,
                          const int64_t *values)
{
    uint64_t *locs = NULL;
    int64_t *vals = NULL;
    if (nlocs) {
        locs = malloc(nlocs * sizeof(*locs));
        if (!locs)
            goto fail;
        memcpy(locs, location_ids, nlocs * sizeof(*locs));
    }
    if (p->ntypes) {
        vals = malloc(p->ntypes * sizeof(*vals));
        if (!vals)
            goto fail;
        memcpy(vals, values, p->ntypes * sizeof(*vals));
    }
    hs_sample_t *s = hs_profile_push_sample(p);
    if (!s)
        goto fail;
    s->location_ids = locs;
    s->nlocs = nlocs;
    s->values = vals;
    return 0;
fail:
    free(locs);
    free(vals);
    return -ENOMEM;
}

int hs_profile_set_fvalues(hs_profile_t *p, const double *fvalues)
{
    if (p->nsamples == 0 || p->ntypes == 0)
        return -EINVAL;
    hs_sample_t *s = &p->samples[p->nsamples - 1];
    double *f = realloc(s->fvalues, p->ntypes * sizeof(*f));
    if (!f)
        return -ENOMEM;
    memcpy(f, fvalues, p->ntypes * sizeof(*f));
    s->fvalues = f;
    return 0;
}

int hs_profile_add_label(hs_profile_t *p, size_t idx, const char *key, const char *str, int64_t num,
                         const char *num_unit)
{
    if (idx >= p->nsamples)
        return -EINVAL;
    hs_label_t l = {hs_profile_str(p, key), hs_profile_str(p, str), num,
                    hs_profile_str(p, num_unit)};
    if (l.key < 0 || l.str < 0 || l.num_unit < 0)
        return -ENOMEM;
    return hs_profile_add_label_interned(p, idx, l);
}

int hs_profile_add_label_interned(hs_profile_t *p, size_t idx, hs_label_t l)
{
    if (idx >= p->nsamples)
        return -EINVAL;
    hs_sample_t *s = &p->samples[idx];
    hs_label_t *a = realloc(s->labels, (s->nlabels + 1) * sizeof(*a));
    if (!a)
        return -ENOMEM;
    a[s->nlabels++] = l;
    s->labels = a;
    return 0;
}

int hs_profile_add_comment(hs_profile_t *p, const char *text)
{
    int64_t s = hs_profile_str(p, text);
    if (s < 0)
        return -ENOMEM;
    int64_t *a = realloc(p->comments, (p->ncomments + 1) * sizeof(*a));
    if (!a)
        return -ENOMEM;
    a[p->ncomments++] = s;
    p->comments = a;
    return 0;
}

/* Ids are dense (index + 1) whenever the add functions built the table, and usually in
 * files too; anything else falls back to a linear scan. */
#define PROFILE_LOOKUP(arr, n, id)                                                                 \
    do {                                                                                           \
        if ((id) == 0)                                                                             \
            return NULL;                                                                           \
        if ((id) <= (n) && (arr)[(id)-1].id == (id))                                               \
            return &(arr)[(id)-1];                                                                 \
        for (size_t i = 0; i < (n); i++)                                                           \
            if ((arr)[i].id == (id))                                                               \
                return &(arr)[i];                                                                  \
        return NULL;                                                                               \
    } while (0)

const hs_location_t *hs_profile_location(const hs_profile_t *p, uint64_t id)
{
    PROFILE_LOOKUP(p->locations, p->nlocations, id);
}

const hs_function_t *hs_profile_function(const hs_profile_t *p, uint64_t id)
{
    PROFILE_LOOKUP(p->functions, p->nfunctions, id);
}

const hs_mapping_t *hs_profile_mapping(const hs_profile_t *p, uint64_t id)
{
    PROFILE_LOOKUP(p->mappings, p->nmappings, id);
}

int hs_profile_sample_type_index(const hs_profile_t *p, const char *name)
{
    for (size_t i = 0; i < p->ntypes; i++)
        if (strcmp(hs_profile_get_str(p, p->sample_types[i].type), name) == 0)
            return (int)i;
    return -1;
}

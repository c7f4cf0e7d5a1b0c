/*
 * `heapsift merge -o OUT FILES...`: several profiles (any format heapsift reads) into one
 * pprof file. The sample types (names and units, in order) and the period type must be
 * the same in every file; mappings, functions and locations are merged by identity
 * (what they are, not their ids), samples with the same stack and labels are summed.
 * Header as pprof merges it: earliest time, summed duration, largest period.
 * Identity lookups intern a key string per entity in a scratch profile's string table,
 * whose dense indices then map to the merged ids.
 */
#define _GNU_SOURCE
#include "kit/cli.h"
#include "verbs.h"
#include "base/satmath.h"
#include "kit/outfile.h"
#include "readers/readers.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    hs_profile_t *dst;
    hs_profile_t *keys; /* string table used as a hash set of identity keys */
    uint64_t *key_to;   /* key index -> merged id (mappings, locations) or sample index + 1 */
    size_t key_cap;
    hs_buf_t kb; /* key being built */
} mg_state_t;

static void mg_usage(FILE *f)
{
    fprintf(f, "usage: heapsift merge [-o OUT] FILES...\n\n"
               "Merges profiles of any format heapsift reads into one gzipped pprof file.\n"
               "Every file must have the same sample types.\n\n"
               "options:\n"
               "  -o, --output OUT   write to OUT (default: standard output, not a terminal)\n");
    fprintf(f, "\nExit status: 0 ok, 1 usage, 2 bad input, 3 I/O error.\n");
}

/* Interns the key in st->kb; returns its slot in key_to (0 = new), or NULL on ENOMEM. */
static uint64_t *mg_key(mg_state_t *st)
{
    if (hs_buf_append(&st->kb, "", 1))
        return NULL;
    int64_t idx = hs_profile_str(st->keys, (const char *)st->kb.data);
    st->kb.len = 0;
    if (idx < 0)
        return NULL;
    if ((size_t)idx >= st->key_cap) {
        size_t ncap = st->key_cap ? st->key_cap * 2 : 1024;
        while (ncap <= (size_t)idx)
            ncap *= 2;
        uint64_t *a = realloc(st->key_to, ncap * sizeof(*a));
        if (!a)
            return NULL;
        memset(a + st->key_cap, 0, (ncap - st->key_cap) * sizeof(*a));
        st->key_to = a;
        st->key_cap = ncap;
    }
    return &st->key_to[idx];
}

static const char *mg_str(const hs_profile_t *p, int64_t i)
{
    return hs_profile_get_str(p, i);
}

static uint64_t mg_mapping(mg_state_t *st, const hs_profile_t *src, uint64_t id)
{
    const hs_mapping_t *m = id ? hs_profile_mapping(src, id) : NULL;
    if (!m)
        return 0;
    hs_buf_printf(&st->kb, "m%" PRIx64 "-%" PRIx64 "@%" PRIx64 "|%s|%s", m->memory_start,
                  m->memory_limit, m->file_offset, mg_str(src, m->filename),
                  mg_str(src, m->build_id));
    uint64_t *slot = mg_key(st);
    if (!slot)
        return UINT64_MAX;
    if (!*slot) {
        hs_mapping_t c = *m;
        c.filename = hs_profile_str(st->dst, mg_str(src, m->filename));
        c.build_id = hs_profile_str(st->dst, mg_str(src, m->build_id));
        if (c.filename < 0 || c.build_id < 0 || !(*slot = hs_profile_add_mapping(st->dst, &c)))
            return UINT64_MAX;
    }
    return *slot;
}

static uint64_t mg_function(mg_state_t *st, const hs_profile_t *src, uint64_t id)
{
    const hs_function_t *f = hs_profile_function(src, id);
    if (!f)
        return 0;
    uint64_t n = hs_profile_add_function(st->dst, mg_str(src, f->name), mg_str(src, f->system_name),
                                         mg_str(src, f->filename), f->start_line);
    return n ? n : UINT64_MAX;
}

/* The merged id of location id of src, added on first sight; UINT64_MAX on ENOMEM. */
static uint64_t mg_location(mg_state_t *st, const hs_profile_t *src, uint64_t id)
{
    const hs_location_t *l = hs_profile_location(src, id);
    if (!l)
        return UINT64_MAX - 1;
    uint64_t mid = mg_mapping(st, src, l->mapping_id);
    hs_line_t *lines = l->nlines ? malloc(l->nlines * sizeof(*lines)) : NULL;
    if (mid == UINT64_MAX || (l->nlines && !lines)) {
        free(lines);
        return UINT64_MAX;
    }
    hs_buf_printf(&st->kb, "l%" PRIu64 "|%" PRIx64 "|%d", mid, l->address, l->is_folded);
    for (size_t i = 0; i < l->nlines; i++) {
        lines[i].function_id = mg_function(st, src, l->lines[i].function_id);
        lines[i].line = l->lines[i].line;
        hs_buf_printf(&st->kb, "|%" PRIu64 ":%" PRId64, lines[i].function_id, lines[i].line);
    }
    uint64_t *slot = mg_key(st);
    if (slot && !*slot) {
        *slot = hs_profile_add_location(st->dst, mid, l->address, lines, l->nlines);
        if (*slot)
            st->dst->locations[*slot - 1].is_folded = l->is_folded;
    }
    free(lines);
    return slot && *slot ? *slot : UINT64_MAX;
}

static int mg_labels(mg_state_t *st, const hs_profile_t *src, const hs_sample_t *s, size_t idx)
{
    for (size_t i = 0; i < s->nlabels; i++) {
        const hs_label_t *lb = &s->labels[i];
        int rc = hs_profile_add_label(st->dst, idx, mg_str(src, lb->key), mg_str(src, lb->str),
                                      lb->num, mg_str(src, lb->num_unit));
        if (rc)
            return rc;
    }
    return 0;
}

static int mg_sample(mg_state_t *st, const hs_profile_t *src, const hs_sample_t *s, uint64_t *ids)
{
    hs_profile_t *dst = st->dst;
    /* Every location first: each builds its own key (and its mapping's) in st->kb, which
     * must be empty then; the sample's key comes after. */
    for (size_t k = 0; k < s->nlocs; k++) {
        ids[k] = mg_location(st, src, s->location_ids[k]);
        if (ids[k] == UINT64_MAX)
            return -ENOMEM;
    }
    for (size_t k = 0; k < s->nlocs; k++)
        hs_buf_printf(&st->kb, "%" PRIu64 ",", ids[k]);
    for (size_t i = 0; i < s->nlabels; i++)
        hs_buf_printf(&st->kb, "|%s=%s/%" PRId64 "%s", mg_str(src, s->labels[i].key),
                      mg_str(src, s->labels[i].str), s->labels[i].num,
                      mg_str(src, s->labels[i].num_unit));
    uint64_t *slot = mg_key(st);
    if (!slot)
        return -ENOMEM;
    if (*slot) {
        int64_t *v = dst->samples[*slot - 1].values;
        for (size_t t = 0; t < dst->ntypes; t++)
            v[t] = hs_sat_add(v[t], s->values[t]);
        return 0;
    }
    int rc = hs_profile_add_sample(dst, ids, s->nlocs, s->values);
    if (rc == 0)
        rc = mg_labels(st, src, s, dst->nsamples - 1);
    *slot = dst->nsamples;
    return rc;
}

static int mg_add(mg_state_t *st, const hs_profile_t *src)
{
    uint64_t *ids = NULL;
    size_t cap = 0;
    int rc = 0;
    /* Mappings in src's order first: the merge is named after its mapping 1 (the
     * program), not after the library of the first sample's leaf. */
    for (size_t i = 0; i < src->nmappings && rc == 0; i++)
        if (mg_mapping(st, src, src->mappings[i].id) == UINT64_MAX)
            rc = -ENOMEM;
    for (size_t i = 0; i < src->nsamples && rc == 0; i++) {
        const hs_sample_t *s = &src->samples[i];
        if (s->nlocs > cap) {
            uint64_t *a = realloc(ids, s->nlocs * sizeof(*a));
            if (!a) {
                rc = -ENOMEM;
                break;
            }
            ids = a;
            cap = s->nlocs;
        }
        rc = mg_sample(st, src, s, ids);
    }
    free(ids);
    return rc;
}

/* "type/unit type/unit ..." of p, for messages. */
static void mg_types(const hs_profile_t *p, char *out, size_t len)
{
    size_t n = 0;
    out[0] = '\0';
    for (size_t i = 0; i < p->ntypes && n < len; i++) {
        int w = snprintf(out + n, len - n, "%s%s/%s", i ? " " : "",
                         mg_str(p, p->sample_types[i].type), mg_str(p, p->sample_types[i].unit));
        if (w < 0)
            break;
        n += (size_t)w;
    }
}

static bool mg_same_types(const hs_profile_t *a, const hs_profile_t *b)
{
    if (a->ntypes != b->ntypes ||
        strcmp(mg_str(a, a->period_type.type), mg_str(b, b->period_type.type)) != 0 ||
        strcmp(mg_str(a, a->period_type.unit), mg_str(b, b->period_type.unit)) != 0)
        return false;
    for (size_t i = 0; i < a->ntypes; i++)
        if (strcmp(mg_str(a, a->sample_types[i].type), mg_str(b, b->sample_types[i].type)) ||
            strcmp(mg_str(a, a->sample_types[i].unit), mg_str(b, b->sample_types[i].unit)))
            return false;
    return true;
}

/* Takes the header of the first profile, then combines the others' into it. */
static int mg_header(hs_profile_t *dst, const hs_profile_t *src, bool first)
{
    if (first) {
        for (size_t i = 0; i < src->ntypes; i++)
            if (hs_profile_add_sample_type(dst, mg_str(src, src->sample_types[i].type),
                                           mg_str(src, src->sample_types[i].unit)))
                return -ENOMEM;
        dst->period_type.type = hs_profile_str(dst, mg_str(src, src->period_type.type));
        dst->period_type.unit = hs_profile_str(dst, mg_str(src, src->period_type.unit));
        dst->default_sample_type = hs_profile_str(dst, mg_str(src, src->default_sample_type));
        dst->drop_frames = hs_profile_str(dst, mg_str(src, src->drop_frames));
        dst->keep_frames = hs_profile_str(dst, mg_str(src, src->keep_frames));
        dst->time_nanos = src->time_nanos;
    } else if (src->time_nanos && (!dst->time_nanos || src->time_nanos < dst->time_nanos)) {
        dst->time_nanos = src->time_nanos;
    }
    dst->duration_nanos += src->duration_nanos;
    if (src->period > dst->period)
        dst->period = src->period;
    for (size_t i = 0; i < src->ncomments; i++)
        if (hs_profile_add_comment(dst, mg_str(src, src->comments[i])))
            return -ENOMEM;
    return 0;
}

static int mg_parse(int argc, char **argv, const char **out)
{
    static const struct option longs[] = {{"output", required_argument, NULL, 'o'},
                                          {"help", no_argument, NULL, 'h'},
                                          {NULL, 0, NULL, 0}};
    int c;
    optind = 1;
    opterr = 0;
    while ((c = getopt_long(argc, argv, "+:o:h", longs, NULL)) != -1) {
        if (c == 'o') {
            *out = optarg;
        } else if (c == 'h') {
            mg_usage(stdout);
            return 0;
        } else {
            return hs_cli_bad_option("merge", c, argv);
        }
    }
    if (optind >= argc) {
        hs_cli_error("merge: no profiles to merge (see heapsift merge --help)");
        return 1;
    }
    return -1;
}

/* Reads and merges argv[first..argc); returns 0 or an exit status. */
static int mg_all(mg_state_t *st, int argc, char **argv, int first)
{
    hs_profile_t *head = NULL;
    int rc = 0;
    for (int i = first; i < argc && rc == 0; i++) {
        hs_profile_t *p = NULL;
        if ((rc = hs_cli_read_profile(argv[i], &p)))
            break;
        if (head && !mg_same_types(head, p)) {
            char a[512], b[512];
            mg_types(head, a, sizeof(a));
            mg_types(p, b, sizeof(b));
            hs_cli_error("merge: %s has sample types [%s], %s has [%s]: they cannot be merged",
                         argv[first], a, argv[i], b);
            rc = 2;
        } else if (mg_header(st->dst, p, !head) || mg_add(st, p)) {
            hs_cli_error("merge: %s", strerror(ENOMEM));
            rc = 3;
        }
        if (!head)
            head = p;
        else
            hs_profile_free(p);
    }
    hs_profile_free(head);
    return rc;
}

int hs_cmd_merge(int argc, char **argv)
{
    const char *out = NULL;
    int rc = mg_parse(argc, argv, &out);
    if (rc >= 0)
        return rc;
    mg_state_t st = {.dst = hs_profile_new(), .keys = hs_profile_new()};
    if (!st.dst || !st.keys) {
        hs_cli_error("merge: %s", strerror(ENOMEM));
        rc = 3;
    } else {
        rc = mg_all(&st, argc, argv, optind);
    }
    if (rc == 0)
        rc = hs_cli_write_pprof(st.dst, out);
    hs_profile_free(st.dst);
    hs_profile_free(st.keys);
    free(st.key_to);
    hs_buf_free(&st.kb);
    return rc;
}

/*
 * Unit test of the pprof codec (src/common/model/pprof.c, pb.c): a profile using every field
 * the model has goes through encode -> gzip -> gunzip -> decode and must come back
 * identical; the same encoding, walked by a wire-format reader of the test's own (not
 * pb.c), must carry each field under its profile.proto number with the values put in;
 * hand-built bytes decode to their known fields; then truncated, bit-flipped and random inputs must
 * fail cleanly (no crash, an error message) and the atomic file writer must leave no temporary
 * behind, its file read back by the command's reader (readers.c) unchanged.
 */
#include "model/pprof.h"
#include "readers/readers.h"

#include "check.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static hs_profile_t *build_profile(void)
{
    hs_profile_t *p = hs_profile_new();
    hs_profile_add_sample_type(p, "alloc_objects", "count");
    hs_profile_add_sample_type(p, "alloc_space", "bytes");
    hs_profile_add_sample_type(p, "inuse_objects", "count");
    hs_profile_add_sample_type(p, "inuse_space", "bytes");
    hs_mapping_t m = {.memory_start = 0x400000,
                      .memory_limit = 0x401000,
                      .file_offset = 0x1000,
                      .filename = hs_profile_str(p, "/usr/bin/prog"),
                      .build_id = hs_profile_str(p, "0123456789abcdef"),
                      .has_functions = true,
                      .has_line_numbers = true};
    uint64_t m1 = hs_profile_add_mapping(p, &m);
    m.memory_start = 0x7f0000000000;
    m.memory_limit = UINT64_MAX;
    m.filename = hs_profile_str(p, "/lib/libc.so.6");
    m.build_id = hs_profile_str(p, "feedface");
    m.has_filenames = m.has_inline_frames = true;
    uint64_t m2 = hs_profile_add_mapping(p, &m);
    uint64_t fmain = hs_profile_add_function(p, "main", "main", "prog.c", 10);
    uint64_t finl = hs_profile_add_function(p, "std::f<int>", "_Z1fIiEvv", "f.h", 3);
    uint64_t fmal = hs_profile_add_function(p, "malloc", "malloc", "", 0);
    hs_line_t l1[2] = {{finl, 4}, {fmain, 12}};
    hs_line_t l2[1] = {{fmal, 0}};
    uint64_t loc1 = hs_profile_add_location(p, m1, 0x400123, l1, 2);
    uint64_t loc2 = hs_profile_add_location(p, m2, 0x7f0000001234, l2, 1);
    uint64_t loc3 = hs_profile_add_location(p, m1, 0x400999, NULL, 0);
    p->locations[2].is_folded = true;
    uint64_t s1[3] = {loc2, loc1, loc3}, s2[1] = {loc1};
    int64_t v1[4] = {1, 1 << 20, 0, -5}, v2[4] = {3, 300, 3, INT64_MAX};
    hs_profile_add_sample(p, s1, 3, v1);
    hs_profile_add_sample(p, s2, 1, v2);
    hs_profile_add_sample(p, NULL, 0, v2);
    hs_profile_add_label(p, 0, "thread", "worker", 0, NULL);
    hs_profile_add_label(p, 0, "bytes", NULL, 4096, "bytes");
    hs_profile_add_comment(p, "made by test_pprof");
    hs_profile_add_comment(p, "second comment");
    p->drop_frames = hs_profile_str(p, "drop.*");
    p->keep_frames = hs_profile_str(p, "keep.*");
    p->time_nanos = 1700000000123456789;
    p->duration_nanos = 5000000000;
    p->period_type.type = hs_profile_str(p, "space");
    p->period_type.unit = hs_profile_str(p, "bytes");
    p->period = 524288;
    p->default_sample_type = hs_profile_str(p, "inuse_space");
    return p;
}

/* Compares a and b field by field, strings by content. */
static void check_same(const hs_profile_t *a, const hs_profile_t *b)
{
#define S(p, i) hs_profile_get_str(p, i)
#define SAME_STR(x) CHECK(strcmp(S(a, a->x), S(b, b->x)) == 0)
    CHECK(a->ntypes == b->ntypes && a->nsamples == b->nsamples);
    CHECK(a->nmappings == b->nmappings && a->nlocations == b->nlocations);
    CHECK(a->nfunctions == b->nfunctions && a->ncomments == b->ncomments);
    if (hs_check_failures)
        return;
    for (size_t i = 0; i < a->ntypes; i++) {
        SAME_STR(sample_types[i].type);
        SAME_STR(sample_types[i].unit);
    }
    for (size_t i = 0; i < a->nsamples; i++) {
        const hs_sample_t *x = &a->samples[i], *y = &b->samples[i];
        CHECK(x->nlocs == y->nlocs && x->nlabels == y->nlabels);
        for (size_t j = 0; j < x->nlocs && j < y->nlocs; j++)
            CHECK(x->location_ids[j] == y->location_ids[j]);
        for (size_t j = 0; j < a->ntypes; j++)
            CHECK(x->values[j] == y->values[j]);
        for (size_t j = 0; j < x->nlabels && j < y->nlabels; j++) {
            SAME_STR(samples[i].labels[j].key);
            SAME_STR(samples[i].labels[j].str);
            SAME_STR(samples[i].labels[j].num_unit);
            CHECK(x->labels[j].num == y->labels[j].num);
        }
    }
    for (size_t i = 0; i < a->nmappings; i++) {
        const hs_mapping_t *x = &a->mappings[i], *y = &b->mappings[i];
        CHECK(x->id == y->id && x->memory_start == y->memory_start);
        CHECK(x->memory_limit == y->memory_limit && x->file_offset == y->file_offset);
        SAME_STR(mappings[i].filename);
        SAME_STR(mappings[i].build_id);
        CHECK(x->has_functions == y->has_functions && x->has_filenames == y->has_filenames);
        CHECK(x->has_line_numbers == y->has_line_numbers);
        CHECK(x->has_inline_frames == y->has_inline_frames);
    }
    for (size_t i = 0; i < a->nlocations; i++) {
        const hs_location_t *x = &a->locations[i], *y = &b->locations[i];
        CHECK(x->id == y->id && x->mapping_id == y->mapping_id && x->address == y->address);
        CHECK(x->is_folded == y->is_folded && x->nlines == y->nlines);
        for (size_t j = 0; j < x->nlines && j < y->nlines; j++)
            CHECK(x->lines[j].function_id == y->lines[j].function_id &&
                  x->lines[j].line == y->lines[j].line);
    }
    for (size_t i = 0; i < a->nfunctions; i++) {
        CHECK(a->functions[i].id == b->functions[i].id);
        CHECK(a->functions[i].start_line == b->functions[i].start_line);
        SAME_STR(functions[i].name);
        SAME_STR(functions[i].system_name);
        SAME_STR(functions[i].filename);
    }
    for (size_t i = 0; i < a->ncomments; i++)
        SAME_STR(comments[i]);
    SAME_STR(drop_frames);
    SAME_STR(keep_frames);
    SAME_STR(period_type.type);
    SAME_STR(period_type.unit);
    SAME_STR(default_sample_type);
    CHECK(a->time_nanos == b->time_nanos && a->duration_nanos == b->duration_nanos);
    CHECK(a->period == b->period);
#undef SAME_STR
#undef S
}

static void test_roundtrip(void)
{
    hs_profile_t *p = build_profile();
    hs_buf_t pb = HS_BUF_INIT, gz = HS_BUF_INIT, back = HS_BUF_INIT;
    char err[256] = "";
    CHECK(hs_pprof_encode(p, &pb) == 0 && pb.len > 0);
    CHECK(hs_gzip(pb.data, pb.len, 6, &gz) == 0 && gz.data[0] == 0x1f && gz.data[1] == 0x8b);
    CHECK(hs_gunzip_auto(gz.data, gz.len, &back, err, sizeof(err)) == 0);
    CHECK(back.len == pb.len && memcmp(back.data, pb.data, pb.len) == 0);
    hs_profile_t *q = NULL;
    CHECK(hs_pprof_decode(back.data, back.len, &q, err, sizeof(err)) == 0);
    if (q) {
        check_same(p, q);
        /* Re-encoding the decoded profile gives the same bytes. */
        hs_buf_t again = HS_BUF_INIT;
        CHECK(hs_pprof_encode(q, &again) == 0);
        CHECK(again.len == pb.len && memcmp(again.data, pb.data, pb.len) == 0);
        hs_buf_free(&again);
    } else {
        fprintf(stderr, "decode failed: %s\n", err);
    }
    /* Not gzipped: copied through. */
    hs_buf_t plain = HS_BUF_INIT;
    CHECK(hs_gunzip_auto(pb.data, pb.len, &plain, err, sizeof(err)) == 0 && plain.len == pb.len);
    hs_buf_free(&plain);
    hs_profile_free(q);
    hs_profile_free(p);
    hs_buf_free(&pb);
    hs_buf_free(&gz);
    hs_buf_free(&back);
}

/* ---- the writer against profile.proto, read without pprof.c or pb.c ----------------------
 * A wire-format walker of its own (varints, the four wire types) reads what hs_pprof_encode
 * wrote and checks each field, by its number in profile.proto, against the values
 * build_profile put in: the round trip above cannot see a field written under the wrong
 * number or wire type if the reader makes the same mistake. */

typedef struct {
    const uint8_t *p, *end;
} wire_t;

typedef struct {
    uint32_t field, type;
    uint64_t v;          /* varint, fixed64 or fixed32 */
    const uint8_t *data; /* length-delimited */
    size_t len;
} wire_field_t;

static bool wire_varint(wire_t *r, uint64_t *v)
{
    *v = 0;
    for (int shift = 0; shift < 64 && r->p < r->end; shift += 7) {
        uint8_t b = *r->p++;
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return true;
    }
    return false;
}

/* The next field of r, or false at the end (or on bad input, counted as a failure). */
static bool wire_next(wire_t *r, wire_field_t *f)
{
    uint64_t key;
    if (r->p >= r->end)
        return false;
    memset(f, 0, sizeof(*f));
    CHECK(wire_varint(r, &key));
    f->field = (uint32_t)(key >> 3);
    f->type = (uint32_t)(key & 7);
    if (f->type == 0) {
        CHECK(wire_varint(r, &f->v));
    } else if (f->type == 1 || f->type == 5) {
        size_t n = f->type == 1 ? 8 : 4;
        CHECK((size_t)(r->end - r->p) >= n);
        for (size_t i = 0; i < n && r->p < r->end; i++)
            f->v |= (uint64_t)*r->p++ << (8 * i);
    } else if (f->type == 2) {
        uint64_t n = 0;
        CHECK(wire_varint(r, &n) && n <= (uint64_t)(r->end - r->p));
        f->data = r->p;
        f->len = n <= (uint64_t)(r->end - r->p) ? n : 0;
        r->p += f->len;
    } else {
        CHECK(!"wire type 3, 4, 6 or 7 in our output", "field %u type %u", f->field, f->type);
        r->p = r->end;
        return false;
    }
    return true;
}

/* A repeated integer field, packed (one LEN) or not: appends its values to out[*n]. */
static void wire_ints(const wire_field_t *f, uint64_t *out, size_t *n, size_t max)
{
    if (f->type == 0) {
        if (*n < max)
            out[(*n)++] = f->v;
        return;
    }
    wire_t r = {f->data, f->data + f->len};
    uint64_t v;
    while (r.p < r.end && wire_varint(&r, &v))
        if (*n < max)
            out[(*n)++] = v;
}

#define WIRE_MAX 64
typedef struct {
    const char *str[WIRE_MAX]; /* string_table, pointing into a copy made NUL-terminated */
    size_t slen[WIRE_MAX], nstr;
    wire_field_t top[4 * WIRE_MAX];
    size_t ntop;
} wire_profile_t;

/* The string at index i of the table (field 6), or "<bad>". */
static const char *wire_str(const wire_profile_t *w, uint64_t i)
{
    return i < w->nstr ? w->str[i] : "<bad>";
}

/* The varint field `field` of message m (the last one, as protobuf merges), or 0. */
static uint64_t wire_get(const wire_field_t *m, uint32_t field)
{
    wire_t r = {m->data, m->data + m->len};
    wire_field_t f;
    uint64_t v = 0;
    while (wire_next(&r, &f))
        if (f.field == field) {
            CHECK(f.type == 0, "field %u: wire type %u, want varint", field, f.type);
            v = f.v;
        }
    return v;
}

/* The n-th top-level field numbered `field` (0-based), or NULL. */
static const wire_field_t *wire_nth(const wire_profile_t *w, uint32_t field, size_t n)
{
    for (size_t i = 0; i < w->ntop; i++)
        if (w->top[i].field == field && n-- == 0)
            return &w->top[i];
    return NULL;
}

/* The location (field 4) whose address is addr, or NULL. */
static const wire_field_t *wire_location(const wire_profile_t *w, uint64_t addr)
{
    const wire_field_t *m;
    for (size_t i = 0; (m = wire_nth(w, 4, i)); i++)
        if (wire_get(m, 3) == addr)
            return m;
    return NULL;
}

/* The function (field 5) whose id is id, or NULL. */
static const wire_field_t *wire_function(const wire_profile_t *w, uint64_t id)
{
    const wire_field_t *m;
    for (size_t i = 0; (m = wire_nth(w, 5, i)); i++)
        if (wire_get(m, 1) == id)
            return m;
    return NULL;
}

static void wire_read(const uint8_t *data, size_t len, char *strings, wire_profile_t *w)
{
    wire_t r = {data, data + len};
    wire_field_t f;
    size_t off = 0;
    memset(w, 0, sizeof(*w));
    while (wire_next(&r, &f) && w->ntop < 4 * WIRE_MAX) {
        w->top[w->ntop++] = f;
        if (f.field == 6 && w->nstr < WIRE_MAX) {
            CHECK(f.type == 2, "string_table: wire type %u", f.type);
            memcpy(strings + off, f.data, f.len);
            strings[off + f.len] = '\0';
            w->str[w->nstr] = strings + off;
            w->slen[w->nstr++] = f.len;
            off += f.len + 1;
        }
    }
}

/* Samples (field 2): location_id 1, value 2 (int64: negative as ten-byte two's complement),
 * label 3 (key 1, str 2, num 3, num_unit 4). */
static void wire_check_samples(const wire_profile_t *w)
{
    const int64_t want[3][4] = {
        {1, 1 << 20, 0, -5}, {3, 300, 3, INT64_MAX}, {3, 300, 3, INT64_MAX}};
    const wire_field_t *l2 = wire_location(w, 0x7f0000001234), *l1 = wire_location(w, 0x400123),
                       *l3 = wire_location(w, 0x400999);
    CHECK(l1 && l2 && l3);
    if (!l1 || !l2 || !l3)
        return;
    const uint64_t locs[3][3] = {{wire_get(l2, 1), wire_get(l1, 1), wire_get(l3, 1)},
                                 {wire_get(l1, 1), 0, 0}};
    const size_t nlocs[3] = {3, 1, 0};
    for (size_t i = 0; i < 3; i++) {
        const wire_field_t *s = wire_nth(w, 2, i);
        CHECK(s && s->type == 2, "sample %zu", i);
        if (!s)
            continue;
        uint64_t loc[8], val[8];
        size_t nl = 0, nv = 0, nlab = 0;
        wire_t r = {s->data, s->data + s->len};
        wire_field_t f;
        while (wire_next(&r, &f)) {
            if (f.field == 1)
                wire_ints(&f, loc, &nl, 8);
            else if (f.field == 2)
                wire_ints(&f, val, &nv, 8);
            else if (f.field == 3 && f.type == 2) {
                const char *key = wire_str(w, wire_get(&f, 1));
                if (strcmp(key, "thread") == 0)
                    CHECK(strcmp(wire_str(w, wire_get(&f, 2)), "worker") == 0);
                else
                    CHECK(strcmp(key, "bytes") == 0 && wire_get(&f, 3) == 4096 &&
                              strcmp(wire_str(w, wire_get(&f, 4)), "bytes") == 0,
                          "label %s", key);
                nlab++;
            }
        }
        CHECK(nl == nlocs[i] && nv == 4 && nlab == (i == 0 ? 2u : 0u), "sample %zu: %zu %zu %zu", i,
              nl, nv, nlab);
        for (size_t j = 0; j < nl && j < nlocs[i]; j++)
            CHECK(loc[j] == locs[i][j], "sample %zu location %zu", i, j);
        for (size_t j = 0; j < nv && j < 4; j++)
            CHECK((int64_t)val[j] == want[i][j], "sample %zu value %zu: %lld", i, j,
                  (long long)val[j]);
    }
}

/* Mappings (field 3): id 1, memory_start 2, memory_limit 3, file_offset 4, filename 5,
 * build_id 6, has_functions 7, has_filenames 8, has_line_numbers 9, has_inline_frames 10. */
static void wire_check_mappings(const wire_profile_t *w)
{
    const wire_field_t *a = wire_nth(w, 3, 0), *b = wire_nth(w, 3, 1);
    CHECK(a && b && !wire_nth(w, 3, 2));
    if (!a || !b)
        return;
    CHECK(wire_get(a, 2) == 0x400000 && wire_get(a, 3) == 0x401000 && wire_get(a, 4) == 0x1000);
    CHECK(strcmp(wire_str(w, wire_get(a, 5)), "/usr/bin/prog") == 0);
    CHECK(strcmp(wire_str(w, wire_get(a, 6)), "0123456789abcdef") == 0);
    CHECK(wire_get(a, 7) == 1 && wire_get(a, 8) == 0 && wire_get(a, 9) == 1 &&
          wire_get(a, 10) == 0);
    CHECK(wire_get(b, 2) == 0x7f0000000000 && wire_get(b, 3) == UINT64_MAX);
    CHECK(strcmp(wire_str(w, wire_get(b, 5)), "/lib/libc.so.6") == 0);
    CHECK(strcmp(wire_str(w, wire_get(b, 6)), "feedface") == 0);
    CHECK(wire_get(b, 7) == 1 && wire_get(b, 8) == 1 && wire_get(b, 9) == 1 &&
          wire_get(b, 10) == 1);
    CHECK(wire_get(a, 1) != wire_get(b, 1) && wire_get(a, 1) != 0 && wire_get(b, 1) != 0);
    /* Locations (field 4): id 1, mapping_id 2, address 3, line 4 (function_id 1, line 2),
     * is_folded 5. */
    const wire_field_t *l1 = wire_location(w, 0x400123), *l3 = wire_location(w, 0x400999);
    CHECK(l1 && l3 && wire_get(l1, 2) == wire_get(a, 1) && wire_get(l3, 5) == 1);
    if (!l1)
        return;
    const char *names[2] = {"std::f<int>", "main"};
    const uint64_t lines[2] = {4, 12};
    size_t n = 0;
    wire_t r = {l1->data, l1->data + l1->len};
    wire_field_t f;
    while (wire_next(&r, &f)) {
        if (f.field != 4 || n >= 2)
            continue;
        const wire_field_t *fn = wire_function(w, wire_get(&f, 1));
        CHECK(fn && strcmp(wire_str(w, wire_get(fn, 2)), names[n]) == 0 &&
                  wire_get(&f, 2) == lines[n],
              "line %zu", n);
        n++;
    }
    CHECK(n == 2);
}

/* Functions (field 5: id 1, name 2, system_name 3, filename 4, start_line 5) and the
 * profile's scalars: drop_frames 7, keep_frames 8, time_nanos 9, duration_nanos 10,
 * period_type 11, period 12, comment 13, default_sample_type 14; string 0 is "". */
static void wire_check_rest(const wire_profile_t *w)
{
    const char *types[4][2] = {{"alloc_objects", "count"},
                               {"alloc_space", "bytes"},
                               {"inuse_objects", "count"},
                               {"inuse_space", "bytes"}};
    CHECK(w->nstr > 0 && w->slen[0] == 0);
    for (size_t i = 0; i < 4; i++) {
        const wire_field_t *t = wire_nth(w, 1, i);
        CHECK(t && strcmp(wire_str(w, wire_get(t, 1)), types[i][0]) == 0 &&
                  strcmp(wire_str(w, wire_get(t, 2)), types[i][1]) == 0,
              "sample_type %zu", i);
    }
    const wire_field_t *fn;
    size_t seen = 0;
    for (size_t i = 0; (fn = wire_nth(w, 5, i)); i++) {
        const char *name = wire_str(w, wire_get(fn, 2));
        if (strcmp(name, "std::f<int>") == 0)
            seen += strcmp(wire_str(w, wire_get(fn, 3)), "_Z1fIiEvv") == 0 &&
                    strcmp(wire_str(w, wire_get(fn, 4)), "f.h") == 0 && wire_get(fn, 5) == 3;
        else if (strcmp(name, "main") == 0)
            seen += strcmp(wire_str(w, wire_get(fn, 4)), "prog.c") == 0 && wire_get(fn, 5) == 10;
    }
    CHECK(seen == 2, "functions main and std::f<int> with their fields");
    const wire_field_t *f7 = wire_nth(w, 7, 0), *f8 = wire_nth(w, 8, 0), *pt = wire_nth(w, 11, 0);
    CHECK(f7 && strcmp(wire_str(w, f7->v), "drop.*") == 0);
    CHECK(f8 && strcmp(wire_str(w, f8->v), "keep.*") == 0);
    CHECK(wire_nth(w, 9, 0) && wire_nth(w, 9, 0)->v == 1700000000123456789ull);
    CHECK(wire_nth(w, 10, 0) && wire_nth(w, 10, 0)->v == 5000000000ull);
    CHECK(pt && strcmp(wire_str(w, wire_get(pt, 1)), "space") == 0 &&
          strcmp(wire_str(w, wire_get(pt, 2)), "bytes") == 0);
    CHECK(wire_nth(w, 12, 0) && wire_nth(w, 12, 0)->v == 524288);
    uint64_t com[4];
    size_t nc = 0;
    for (size_t i = 0; wire_nth(w, 13, i); i++) /* repeated int64: packed or not */
        wire_ints(wire_nth(w, 13, i), com, &nc, 4);
    CHECK(nc == 2 && strcmp(wire_str(w, com[0]), "made by test_pprof") == 0 &&
          strcmp(wire_str(w, com[1]), "second comment") == 0);
    CHECK(wire_nth(w, 14, 0) && strcmp(wire_str(w, wire_nth(w, 14, 0)->v), "inuse_space") == 0);
}

static void test_wire(void)
{
    hs_profile_t *p = build_profile();
    hs_buf_t pb = HS_BUF_INIT;
    CHECK(hs_pprof_encode(p, &pb) == 0 && pb.len > 0);
    char *strings = malloc(pb.len + WIRE_MAX);
    wire_profile_t *w = malloc(sizeof(*w));
    if (strings && w && pb.len) {
        wire_read(pb.data, pb.len, strings, w);
        wire_check_samples(w);
        wire_check_mappings(w);
        wire_check_rest(w);
    }
    free(w);
    free(strings);
    hs_buf_free(&pb);
    hs_profile_free(p);
}

/* Unpacked repeated fields, unknown fields of every wire type, fields out of order. */
static void test_unpacked(void)
{
    static const uint8_t in[] = {
        0x12, 6,    0x08, 7,    0x10, 9,    0x10, 10,     /* sample: loc 7, values 9, 10 */
        0x0a, 4,    0x08, 1,    0x10, 2,                  /* sample_type {1, 2} */
        0x0a, 4,    0x08, 3,    0x10, 2,                  /* sample_type {3, 2} */
        0x22, 4,    0x08, 7,    0x18, 0x55,               /* location id 7 address 0x55 */
        0x79, 1,    2,    3,    4,    5,    6,    7,   8, /* field 15, fixed64 */
        0x85, 0x01, 1,    2,    3,    4,                  /* field 16, fixed32 */
        0x8a, 0x01, 2,    0xff, 0x01,                     /* field 17, bytes */
        0x32, 0,    0x32, 1,    'a',  0x32, 1,    'b', 0x32, 1, 'c', /* strings "", a, b, c */
        0x68, 1,    0x68, 2,                                         /* comments 1, 2 unpacked */
    };
    hs_profile_t *p = NULL;
    char err[256] = "";
    int rc = hs_pprof_decode(in, sizeof(in), &p, err, sizeof(err));
    CHECK(rc == 0);
    if (rc) {
        fprintf(stderr, "unpacked: %s\n", err);
        return;
    }
    CHECK(p->nsamples == 1 && p->samples[0].nlocs == 1 && p->samples[0].location_ids[0] == 7);
    CHECK(p->samples[0].values[0] == 9 && p->samples[0].values[1] == 10);
    CHECK(p->ntypes == 2 && strcmp(hs_profile_get_str(p, p->sample_types[1].type), "c") == 0);
    CHECK(p->ncomments == 2 && strcmp(hs_profile_get_str(p, p->comments[1]), "b") == 0);
    CHECK(hs_profile_location(p, 7) && hs_profile_location(p, 7)->address == 0x55);
    hs_profile_free(p);
}

static void expect_fail(const uint8_t *data, size_t len, const char *what)
{
    hs_profile_t *p = (hs_profile_t *)1;
    char err[256] = "";
    int rc = hs_pprof_decode(data, len, &p, err, sizeof(err));
    if (rc == 0) {
        fprintf(stderr, "%s: decode unexpectedly succeeded\n", what);
        hs_check_failures++;
        hs_profile_free(p);
        return;
    }
    CHECK(p == NULL && err[0] != '\0');
}

static void test_malformed(void)
{
    static const uint8_t bad_ref[] = {0x0a, 0, 0x12, 4, 0x0a, 1, 9, 0x12, 0, 0x32, 0};
    expect_fail(bad_ref, 3, "truncated length");
    expect_fail((const uint8_t *)"", 0, "empty");
    static const uint8_t longvar[] = {0x48, 0xff, 0xff, 0xff, 0xff, 0xff,
                                      0xff, 0xff, 0xff, 0xff, 0xff, 0x01};
    expect_fail(longvar, sizeof(longvar), "11-byte varint");
    static const uint8_t overrun[] = {0x12, 0x7f, 0x08};
    expect_fail(overrun, sizeof(overrun), "overrun");
    static const uint8_t group[] = {0x0b, 0x0c};
    expect_fail(group, sizeof(group), "group wire type");
    static const uint8_t str0[] = {0x32, 1, 'x'};
    expect_fail(str0, sizeof(str0), "string 0 not empty");
    static const uint8_t badstr[] = {0x0a, 2, 0x08, 5, 0x32, 0};
    expect_fail(badstr, sizeof(badstr), "string index out of range");
    static const uint8_t noloc[] = {0x0a, 0, 0x12, 5, 0x0a, 1, 9, 0x12, 0, 0x32, 0};
    expect_fail(noloc, sizeof(noloc), "missing location");
    static const uint8_t dupfn[] = {0x2a, 2, 0x08, 1, 0x2a, 2, 0x08, 1};
    expect_fail(dupfn, sizeof(dupfn), "duplicate function id");
    static const uint8_t nvals[] = {0x0a, 0, 0x12, 4, 0x12, 2, 1, 2};
    expect_fail(nvals, sizeof(nvals), "value count");

    /* Every truncation and every single-byte corruption of a real profile. */
    hs_profile_t *p = build_profile();
    hs_buf_t pb = HS_BUF_INIT;
    hs_pprof_encode(p, &pb);
    for (size_t n = 1; n < pb.len; n++) {
        hs_profile_t *q = NULL;
        char err[256];
        if (hs_pprof_decode(pb.data, n, &q, err, sizeof(err)) == 0)
            hs_profile_free(q); /* a prefix may be a valid profile; it must not crash */
    }
    for (size_t i = 0; i < pb.len; i++) {
        uint8_t save = pb.data[i];
        for (int bit = 0; bit < 8; bit++) {
            pb.data[i] = save ^ (uint8_t)(1 << bit);
            hs_profile_t *q = NULL;
            char err[256];
            if (hs_pprof_decode(pb.data, pb.len, &q, err, sizeof(err)) == 0)
                hs_profile_free(q);
        }
        pb.data[i] = save;
    }
    /* Truncated gzip must fail. */
    hs_buf_t gz = HS_BUF_INIT, out = HS_BUF_INIT;
    char err[256] = "";
    hs_gzip(pb.data, pb.len, 9, &gz);
    CHECK(hs_gunzip_auto(gz.data, gz.len / 2, &out, err, sizeof(err)) < 0 && err[0]);
    CHECK(out.len == 0);
    hs_buf_free(&gz);
    hs_buf_free(&out);
    hs_buf_free(&pb);
    hs_profile_free(p);
}

static void test_random(void)
{
    uint8_t buf[512];
    unsigned seed = 12345;
    int ok = 0;
    for (int iter = 0; iter < 20000; iter++) {
        size_t n = (size_t)(rand_r(&seed) % sizeof(buf)) + 1;
        for (size_t i = 0; i < n; i++)
            buf[i] = (uint8_t)rand_r(&seed);
        hs_profile_t *q = NULL;
        char err[256] = "";
        if (hs_pprof_decode(buf, n, &q, err, sizeof(err)) == 0) {
            ok++;
            hs_profile_free(q);
        } else if (!err[0]) {
            fprintf(stderr, "random input %d failed without a message\n", iter);
            hs_check_failures++;
        }
        hs_buf_t out = HS_BUF_INIT;
        buf[0] = 0x1f;
        if (n > 1)
            buf[1] = 0x8b;
        hs_gunzip_auto(buf, n, &out, err, sizeof(err));
        hs_buf_free(&out);
    }
    (void)ok;
}

static void test_files(void)
{
    char dir[] = "/tmp/test_pprof.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[128], tmp[160];
    snprintf(path, sizeof(path), "%s/heap.pb.gz", dir);
    hs_profile_t *p = build_profile(), *q = NULL;
    char err[256] = "";
    CHECK(hs_pprof_write_file(p, path) == 0);
    snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    CHECK(access(tmp, F_OK) != 0);
    /* Read back as the command reads every profile (readers.c). */
    CHECK(hs_profile_read_any(path, &q, err, sizeof(err)) == 0, "%s", err);
    if (q)
        check_same(p, q);
    hs_profile_free(q);
    q = NULL;
    char missing[160];
    snprintf(missing, sizeof(missing), "%s/nope/heap", dir);
    CHECK(hs_write_file_atomic(missing, "x", 1) == -ENOENT);
    CHECK(hs_profile_read_any(missing, &q, err, sizeof(err)) == -ENOENT && q == NULL);
    CHECK(strstr(err, "No such file") && !strstr(err, missing), "%s", err);
    CHECK(hs_write_file_atomic(path, "garbage\n", 8) == 0);
    CHECK(hs_profile_read_any(path, &q, err, sizeof(err)) == -EINVAL && q == NULL && err[0]);
    unlink(path);
    rmdir(dir);
    hs_profile_free(p);
}

/* A path that is not a regular file (a FIFO here, /dev/null in real life) is written
 * in place: renaming a temporary file over it would replace the node. */
static void test_special_files(void)
{
    char dir[] = "/tmp/hs-test-pprof-XXXXXX", fifo[64];
    CHECK(mkdtemp(dir) != NULL);
    snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
    CHECK(mkfifo(fifo, 0600) == 0);
    int rd = open(fifo, O_RDWR | O_NONBLOCK); /* a reader, so the write cannot block */
    CHECK(rd >= 0);
    CHECK(hs_write_file_atomic(fifo, "profile", 7) == 0);
    struct stat st;
    CHECK(stat(fifo, &st) == 0 && S_ISFIFO(st.st_mode), "the FIFO was replaced");
    char buf[16] = "";
    CHECK(read(rd, buf, sizeof(buf)) == 7 && memcmp(buf, "profile", 7) == 0);
    CHECK(hs_write_file_atomic(dir, "x", 1) == -EISDIR);
    close(rd);
    unlink(fifo);
    rmdir(dir);
}

int main(void)
{
    test_roundtrip();
    test_wire();
    test_unpacked();
    test_malformed();
    test_random();
    test_files();
    test_special_files();
    return hs_check_done("test_pprof");
}

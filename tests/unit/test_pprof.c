/*
 * Unit test of the pprof codec (src/common/pprof.c, pb.c): a profile using every field
 * the model has goes through encode -> gzip -> gunzip -> decode and must come back
 * identical; then truncated, bit-flipped and random inputs must fail cleanly (no crash,
 * an error message) and the atomic file writer must leave no temporary behind.
 */
#include "pprof.h"

#include "check.h"

#include <errno.h>
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
    CHECK(hs_pprof_read_file(path, &q, err, sizeof(err)) == 0);
    if (q)
        check_same(p, q);
    hs_profile_free(q);
    char missing[160];
    snprintf(missing, sizeof(missing), "%s/nope/heap", dir);
    CHECK(hs_write_file_atomic(missing, "x", 1) == -ENOENT);
    CHECK(hs_pprof_read_file(missing, &q, err, sizeof(err)) == -ENOENT && q == NULL);
    CHECK(strstr(err, missing) == err && strstr(err, "No such file"));
    CHECK(hs_write_file_atomic(path, "garbage\n", 8) == 0);
    CHECK(hs_pprof_read_file(path, &q, err, sizeof(err)) == -EINVAL && q == NULL);
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
    test_unpacked();
    test_malformed();
    test_random();
    test_files();
    test_special_files();
    return hs_check_done("test_pprof");
}

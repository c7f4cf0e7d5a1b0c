/*
 * Unit test of the profile model (src/common/model/profile.c): string and function interning
 * (including strings pushed raw by readers before the index exists), dense and sparse id
 * lookups, samples, labels and comments. Standalone; exits non-zero naming each failure.
 */
#include "model/profile.h"

#include "check.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void test_strings(void)
{
    hs_profile_t *p = hs_profile_new();
    CHECK(p && p->nstrings == 1);
    CHECK(hs_profile_str(p, "") == 0);
    CHECK(hs_profile_str(p, NULL) == 0);
    int64_t a = hs_profile_str(p, "alpha"), b = hs_profile_str(p, "beta");
    CHECK(a == 1 && b == 2);
    CHECK(hs_profile_str(p, "alpha") == a);
    CHECK(strcmp(hs_profile_get_str(p, b), "beta") == 0);
    CHECK(strcmp(hs_profile_get_str(p, 99), "") == 0);
    CHECK(strcmp(hs_profile_get_str(p, -1), "") == 0);
    /* Many strings force several rehashes; every one must still be found. */
    char name[32];
    for (int i = 0; i < 50000; i++) {
        snprintf(name, sizeof(name), "s%d", i);
        CHECK(hs_profile_str(p, name) == 3 + i);
    }
    for (int i = 0; i < 50000; i += 7) {
        snprintf(name, sizeof(name), "s%d", i);
        CHECK(hs_profile_str(p, name) == 3 + i);
    }
    CHECK(p->nstrings == 50003);
    hs_profile_free(p);
}

static void test_raw_strings(void)
{
    hs_profile_t *p = hs_profile_new();
    CHECK(hs_profile_push_str(p, "dup", 3) == 1);
    CHECK(hs_profile_push_str(p, "dup", 3) == 2);
    CHECK(hs_profile_push_str(p, "x\0y", 3) == 3); /* stored up to the NUL */
    CHECK(hs_profile_str(p, "dup") == 1);          /* first copy wins */
    CHECK(hs_profile_str(p, "new") == 4);
    CHECK(hs_profile_push_str(p, "late", 4) == 5);
    CHECK(hs_profile_str(p, "late") == 5);
    hs_profile_free(p);
}

static void test_functions(void)
{
    hs_profile_t *p = hs_profile_new();
    uint64_t f1 = hs_profile_add_function(p, "main", "main", "a.c", 10);
    uint64_t f2 = hs_profile_add_function(p, "main", "main", "a.c", 11);
    CHECK(f1 == 1 && f2 == 2);
    CHECK(hs_profile_add_function(p, "main", "main", "a.c", 10) == f1);
    char name[32];
    for (int i = 0; i < 30000; i++) {
        snprintf(name, sizeof(name), "fn%d", i);
        CHECK(hs_profile_add_function(p, name, name, "b.c", i) == (uint64_t)i + 3);
    }
    CHECK(hs_profile_add_function(p, "fn1234", "fn1234", "b.c", 1234) == 1237);
    const hs_function_t *f = hs_profile_function(p, 1237);
    CHECK(f && strcmp(hs_profile_get_str(p, f->name), "fn1234") == 0 && f->start_line == 1234);
    CHECK(hs_profile_function(p, 0) == NULL);
    CHECK(hs_profile_function(p, 999999) == NULL);
    /* A function pushed raw by a reader is found by later interning. */
    hs_function_t *r = hs_profile_push_function(p);
    r->id = 777777;
    r->name = hs_profile_str(p, "raw");
    uint64_t rid = hs_profile_add_function(p, "raw", NULL, NULL, 0);
    CHECK(rid == 777777);
    CHECK(hs_profile_function(p, 777777) == &p->functions[p->nfunctions - 1]);
    hs_profile_free(p);
}

static void test_locations_samples(void)
{
    hs_profile_t *p = hs_profile_new();
    CHECK(hs_profile_add_sample_type(p, "alloc_space", "bytes") == 0);
    CHECK(hs_profile_add_sample_type(p, "inuse_space", "bytes") == 0);
    CHECK(hs_profile_sample_type_index(p, "inuse_space") == 1);
    CHECK(hs_profile_sample_type_index(p, "nope") == -1);
    hs_mapping_t m = {0};
    m.memory_start = 0x1000;
    m.memory_limit = 0x2000;
    m.filename = hs_profile_str(p, "/bin/x");
    uint64_t mid = hs_profile_add_mapping(p, &m);
    CHECK(mid == 1 && hs_profile_mapping(p, 1)->memory_limit == 0x2000);
    hs_line_t lines[2] = {{hs_profile_add_function(p, "inl", NULL, NULL, 0), 5},
                          {hs_profile_add_function(p, "outer", NULL, NULL, 0), 9}};
    uint64_t l1 = hs_profile_add_location(p, mid, 0x1234, lines, 2);
    uint64_t l2 = hs_profile_add_location(p, mid, 0x1300, NULL, 0);
    CHECK(l1 == 1 && l2 == 2);
    const hs_location_t *l = hs_profile_location(p, l1);
    CHECK(l && l->nlines == 2 && l->lines[1].line == 9 && l->address == 0x1234);
    uint64_t stack[2] = {l1, l2};
    int64_t vals[2] = {100, 50};
    CHECK(hs_profile_add_sample(p, stack, 2, vals) == 0);
    CHECK(hs_profile_add_label(p, 0, "thread", "main", 0, NULL) == 0);
    CHECK(hs_profile_add_label(p, 0, "bytes", NULL, 64, "bytes") == 0);
    CHECK(hs_profile_add_label(p, 1, "x", "y", 0, NULL) == -EINVAL);
    CHECK(p->samples[0].nlabels == 2 && p->samples[0].labels[1].num == 64);
    CHECK(p->samples[0].values[1] == 50 && p->samples[0].location_ids[0] == l1);
    CHECK(hs_profile_add_comment(p, "hello") == 0 && p->ncomments == 1);
    /* Sparse ids fall back to a scan. */
    p->locations[0].id = 40;
    CHECK(hs_profile_location(p, 40) == &p->locations[0]);
    CHECK(hs_profile_location(p, 1) == NULL);
    hs_profile_free(p);
}

int main(void)
{
    test_strings();
    test_raw_strings();
    test_functions();
    test_locations_samples();
    hs_profile_free(NULL);
    return hs_check_done("test_profile");
}

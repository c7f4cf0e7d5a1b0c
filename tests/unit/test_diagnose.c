/*
 * Unit test of the diagnosis engine (src/common/reports/diagnose*.c) on profiles built in
 * memory: findings ordered by bytes, largest first (ties by kind); the JSON contract's
 * escaping (quotes, backslashes, control characters, invalid UTF-8 as U+FFFD) and keys;
 * and "no evidence, no finding": no accounting says fragmentation and not_heap cannot be
 * answered; a small free space is no fragmentation; parts adding up to more than the RSS
 * decline it; an allocator heapsift does not read is said so; a steady series has no
 * growth, nor one rising within its sampling noise; memory labelled reachable has no leak,
 * unreachable memory has one; a series growing by 10 MB a step at rate 1 is named with its exact
 * growth.
 */
#define _GNU_SOURCE
#include "reports/diagnose.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

static void test_order(void)
{
    hs_diagnosis_t d = {0};
    hs_diagnosis_add(&d, HS_DIAG_TOP_SITE, 10, "a", "e", "x");
    hs_diagnosis_add(&d, HS_DIAG_NOT_HEAP, 300, "thread stacks", "e", "x");
    hs_diagnosis_add(&d, HS_DIAG_BLIND_SPOT, 0, NULL, "bytes unknown", "x");
    hs_diagnosis_add(&d, HS_DIAG_GROWTH, 300, "b", "e", "x");
    hs_diagnosis_add(&d, HS_DIAG_FRAGMENTATION, 5000, NULL, "e", "x");
    hs_diagnosis_add(&d, HS_DIAG_LEAK, -5, "c", "e", "x"); /* negative: 0 */
    hs_diagnosis_sort(&d);
    static const hs_diag_kind_t want[] = {HS_DIAG_FRAGMENTATION, HS_DIAG_GROWTH,
                                          HS_DIAG_NOT_HEAP,      HS_DIAG_TOP_SITE,
                                          HS_DIAG_LEAK,          HS_DIAG_BLIND_SPOT};
    CHECK(d.n == 6, "%zu findings", d.n);
    for (size_t i = 0; i < d.n && i < 6; i++)
        CHECK(d.f[i].kind == want[i], "finding %zu is %s", i, hs_diag_kind_name(d.f[i].kind));
    for (size_t i = 1; i < d.n; i++)
        CHECK(d.f[i - 1].bytes >= d.f[i].bytes, "not sorted at %zu", i);
    hs_diagnosis_free(&d);
}

static char *json_of(const hs_diagnosis_t *d, const char *target)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    hs_diagnosis_write_json(d, target, f);
    fclose(f);
    return buf;
}

static void test_json(void)
{
    hs_diagnosis_t d = {0};
    d.rss_bytes = 1234;
    d.allocator = "glibc";
    hs_diagnosis_add(&d, HS_DIAG_LEAK, 42, "op\"er\\ator\n<-\x01 bad\xff ok\xc3\xa9", "tab\there",
                     "");
    hs_diagnosis_note(&d, "a \"note\"");
    char *j = json_of(&d, "dir/\"x\"");
    CHECK(strstr(j, "{\"target\": \"dir/\\\"x\\\"\", \"rss_bytes\": 1234, \"allocator\": "
                    "\"glibc\", \"findings\": [") == j,
          "head: %s", j);
    CHECK(strstr(j, "\"kind\": \"leak\", \"bytes\": 42, \"site\": "
                    "\"op\\\"er\\\\ator\\u000a<-\\u0001 bad\xef\xbf\xbd ok\xc3\xa9\"") != NULL,
          "site escaped: %s", j);
    CHECK(strstr(j, "\"evidence\": \"tab\\u0009here\", \"advice\": \"\"}") != NULL, "%s", j);
    CHECK(strstr(j, "\"notes\": [\"a \\\"note\\\"\"]}") != NULL, "notes: %s", j);
    free(j);
    hs_diagnosis_free(&d);
    d.rss_bytes = -1; /* unknown RSS: null; no finding: an empty list */
    j = json_of(&d, "t");
    CHECK(strcmp(j, "{\"target\": \"t\", \"rss_bytes\": null, \"allocator\": \"unknown\", "
                    "\"findings\": [], \"notes\": []}\n") == 0,
          "empty: %s", j);
    free(j);
}

/* A profile of one site "site_N" holding bytes (rate 1: exact), with a reachable label
 * when reach is "yes" or "no", at time t seconds, and the given comments. */
static hs_profile_t *prof(const char *fn, int64_t bytes, const char *reach, int64_t t,
                          const char *const *comments)
{
    hs_profile_t *p = hs_profile_new();
    hs_profile_add_sample_type(p, "inuse_objects", "count");
    hs_profile_add_sample_type(p, "inuse_space", "bytes");
    p->period = 1;
    p->time_nanos = t * 1000000000LL + 1;
    uint64_t f = hs_profile_add_function(p, fn, fn, "x.c", 1);
    uint64_t g = hs_profile_add_function(p, "main", "main", "x.c", 1);
    hs_line_t l1 = {f, 2}, l2 = {g, 3};
    uint64_t locs[2] = {hs_profile_add_location(p, 0, 0x1000, &l1, 1),
                        hs_profile_add_location(p, 0, 0x2000, &l2, 1)};
    int64_t v[2] = {bytes / 100, bytes};
    if (bytes > 0) {
        hs_profile_add_sample(p, locs, 2, v);
        if (reach)
            hs_profile_add_label(p, p->nsamples - 1, "reachable", reach, 0, NULL);
    }
    for (size_t i = 0; comments && comments[i]; i++)
        hs_profile_add_comment(p, comments[i]);
    return p;
}

static size_t count(const hs_diagnosis_t *d, hs_diag_kind_t k)
{
    size_t n = 0;
    for (size_t i = 0; i < d->n; i++)
        n += d->f[i].kind == k;
    return n;
}

static bool noted(const hs_diagnosis_t *d, const char *s)
{
    for (size_t i = 0; i < d->nnotes; i++)
        if (strstr(d->notes[i], s))
            return true;
    return false;
}

static void diagnose(hs_diagnosis_t *d, hs_profile_t **p, size_t n)
{
    char err[256] = "";
    int rc = hs_diagnose_profiles(d, (const hs_profile_t *const *)p, n, err, sizeof(err));
    CHECK(rc == 0, "hs_diagnose_profiles: %d %s", rc, err);
    for (size_t i = 0; i < n; i++)
        hs_profile_free(p[i]);
}

#define GLIBC(free_, top)                                                                          \
    "allocator: glibc arena=0 mmap=0 mmap_chunks=0 in_use=100000000 free=" free_ " releasable"     \
    "=" top
#define ACCT(heap)                                                                                 \
    "rss: rss=300000000 anon=290000000 file=10000000 swap=0",                                      \
        "maps: heap=" heap " stacks=100000 code=10000000 other_anon=1000000",                      \
        "profiler: maps=100000 heap=0"

static void test_accounting(void)
{
    hs_diagnosis_t d;
    hs_profile_t *p[2];

    p[0] = prof("site_a", 1000000, NULL, 1, NULL); /* no accounting */
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_FRAGMENTATION) == 0 && count(&d, HS_DIAG_NOT_HEAP) == 0, "claimed");
    CHECK(noted(&d, "fragmentation and not_heap: not answered"), "no note");
    CHECK(d.rss_bytes == -1, "rss %lld", (long long)d.rss_bytes);
    hs_diagnosis_free(&d);

    static const char *const frag[] = {ACCT("280000000"), GLIBC("180000000", "100000"), NULL};
    p[0] = prof("site_a", 1000000, NULL, 1, frag);
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_FRAGMENTATION) == 1 && d.f[0].kind == HS_DIAG_FRAGMENTATION &&
              d.f[0].bytes == 180000000,
          "fragmentation %zu", d.n);
    CHECK(strstr(d.f[0].advice, "malloc_trim"), "advice");
    CHECK(strcmp(d.allocator, "glibc") == 0 && d.rss_bytes == 300000000, "%s", d.allocator);
    hs_diagnosis_free(&d);

    static const char *const small[] = {ACCT("280000000"), GLIBC("500000", "100000"), NULL};
    p[0] = prof("site_a", 1000000, NULL, 1, small);
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_FRAGMENTATION) == 0, "500 kB free is fragmentation");
    hs_diagnosis_free(&d);

    /* The heap counted larger than the RSS: the parts add up to more than it. */
    static const char *const over[] = {ACCT("400000000"), GLIBC("180000000", "100000"), NULL};
    p[0] = prof("site_a", 1000000, NULL, 1, over);
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_FRAGMENTATION) == 0, "fragmentation claimed on bad accounting");
    CHECK(noted(&d, "more than the RSS"), "no note");
    hs_diagnosis_free(&d);

    static const char *const other[] = {ACCT("280000000"), "allocator: unknown", NULL};
    p[0] = prof("site_a", 1000000, NULL, 1, other);
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_FRAGMENTATION) == 0 && noted(&d, "fragmentation: not answered"),
          "unknown allocator");
    hs_diagnosis_free(&d);
}

static void test_samples(void)
{
    hs_diagnosis_t d;
    hs_profile_t *p[3];

    /* steady: the same bytes in three dumps */
    for (int i = 0; i < 3; i++)
        p[i] = prof("site_a", 5000000, NULL, i + 1, NULL);
    diagnose(&d, p, 3);
    CHECK(count(&d, HS_DIAG_GROWTH) == 0, "steady grows");
    CHECK(count(&d, HS_DIAG_TOP_SITE) == 1 && d.f[0].bytes == 5000000, "top site");
    CHECK(count(&d, HS_DIAG_LEAK) == 0 && noted(&d, "leak: not answered"), "leak");
    hs_diagnosis_free(&d);

    /* growing 10 MB a step, exact (rate 1), given newest first: put in time order */
    for (int i = 0; i < 3; i++)
        p[i] = prof("site_g", 10000000 * (3 - i), NULL, 3 - i, NULL);
    diagnose(&d, p, 3);
    CHECK(count(&d, HS_DIAG_GROWTH) == 1, "no growth");
    for (size_t i = 0; i < d.n; i++)
        if (d.f[i].kind == HS_DIAG_GROWTH)
            CHECK(d.f[i].bytes == 20000000 && strcmp(d.f[i].site, "site_g <- main") == 0,
                  "growth %lld %s", (long long)d.f[i].bytes, d.f[i].site);
    hs_diagnosis_free(&d);

    /* rising by 100 kB a step at rate 512 KiB (50 objects of 100 kB: a sampling noise of
     * megabytes): a positive slope, but within noise */
    for (int i = 0; i < 3; i++) {
        p[i] = prof("site_n", 5000000 + 100000 * i, NULL, i + 1, NULL);
        p[i]->period = 524288;
    }
    diagnose(&d, p, 3);
    CHECK(count(&d, HS_DIAG_GROWTH) == 0, "growth within sampling noise claimed");
    CHECK(noted(&d, "growth: none"), "no note");
    hs_diagnosis_free(&d);

    p[0] = prof("site_r", 5000000, "yes", 1, NULL); /* all reachable: no leak, no note */
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_LEAK) == 0 && !noted(&d, "leak"), "reachable memory is a leak");
    hs_diagnosis_free(&d);

    p[0] = prof("site_u", 3000000, "no", 1, NULL);
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_LEAK) == 1, "no leak");
    for (size_t i = 0; i < d.n; i++)
        if (d.f[i].kind == HS_DIAG_LEAK)
            CHECK(d.f[i].bytes == 3000000 && strstr(d.f[i].evidence, "exact"), "leak %lld",
                  (long long)d.f[i].bytes);
    hs_diagnosis_free(&d);

    static const char *const blind[] = {"reach: calls bypass heapsift: malloc defined by x; "
                                        "the memory they allocate is not in its profiles",
                                        NULL};
    p[0] = prof("site_a", 1000, NULL, 1, blind);
    diagnose(&d, p, 1);
    CHECK(count(&d, HS_DIAG_BLIND_SPOT) == 1 && d.f[d.n - 1].kind == HS_DIAG_BLIND_SPOT &&
              d.f[d.n - 1].bytes == 0 && strstr(d.f[d.n - 1].evidence, "unknown"),
          "blind spot");
    hs_diagnosis_free(&d);
}

int main(void)
{
    test_order();
    test_json();
    test_accounting();
    test_samples();
    return hs_check_done("test_diagnose");
}

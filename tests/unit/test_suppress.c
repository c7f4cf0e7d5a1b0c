/*
 * Unit test of the leak suppressions (src/common/reports/suppress.c) and the leak report
 * (src/common/reports/leakreport.c): LSan's template matching, case by case, with its anchors and
 * quirks; the file format (comments, blanks, \r, other types counted and ignored); and a
 * report over a hand-built profile whose sites, sizes and suppressions are known: samples
 * of one stack summed, suppression by module, function and file, largest first, the cap,
 * the summary line, exact and sampled wording.
 */
#include "reports/leakreport.h"
#include "reports/suppress.h"

#include "check.h"

#include <stdlib.h>
#include <string.h>

/* What a parsed set owns (suppress.h): the library never frees its one set, so the
 * test frees its own here rather than the library carrying a function only it calls. */
static void supp_free(hs_supp_t *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->rules[i].pattern);
    free(s->rules);
    memset(s, 0, sizeof(*s));
}

static void test_match(void)
{
    static const struct {
        const char *templ, *str;
        bool want;
    } cases[] = {
        {"foobar", "foobar", true},
        {"foobar", "prefix_foobar_postfix", true},
        {"*foobar*", "foobar", true},
        {"foo*bar", "foo_middle_bar", true},
        {"foo*bar", "foobar", true},
        {"foo*bar*baz", "foo_middle_barbaz", true},
        {"^foobar", "foobar_postfix", true},
        {"^*foobar", "prefix_foobar", true},
        {"foobar$", "prefix_foobar", true},
        {"*foobar*$", "foobar_postfix", true},
        {"^foobar$", "foobar", true},
        {"", "anything", true},
        {"*", "x", true},
        {"foo", "baz", false},
        {"foobarbaz", "barbaz", false},
        {"foo*bar", "foo_baz", false},
        {"^foobar", "prefix_foobar", false},
        {"foobar$", "foobar_postfix", false},
        {"^foobar$", "prefix_foobar", false},
        {"foo^bar", "foobar", false},
        {"foo$bar", "foobar", false},
        {"foo$^bar", "foobar", false},
        {"foo$", "foofoo", false}, /* leftmost piece, no backtracking: LSan's quirk */
        {"foo", "", false},
        {"", "", false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
        CHECK(hs_supp_template_match(cases[i].templ, cases[i].str) == cases[i].want,
              "'%s' vs '%s': want %d", cases[i].templ, cases[i].str, cases[i].want);
    CHECK(!hs_supp_template_match("x", NULL), "NULL string");
}

static void test_parse(void)
{
    const char text[] = "  \t# comment\n"
                        "\n"
                        " \tleak:bar \t\n"
                        "leak:baz* *baz\r\n"
                        "race:foo\n"
                        "nonsense\n"
                        "leak:last";
    hs_supp_t s;
    memset(&s, 0, sizeof(s));
    CHECK(hs_supp_parse(&s, text, strlen(text), "f") == 0, "parse");
    CHECK(s.n == 3, "3 rules, got %zu", s.n);
    if (s.n == 3) {
        CHECK(strcmp(s.rules[0].pattern, "bar") == 0, "rule 0 '%s'", s.rules[0].pattern);
        CHECK(strcmp(s.rules[1].pattern, "baz* *baz") == 0, "rule 1 '%s'", s.rules[1].pattern);
        CHECK(strcmp(s.rules[2].pattern, "last") == 0, "rule 2 '%s'", s.rules[2].pattern);
        CHECK(s.rules[0].line == 3 && s.rules[2].line == 7, "line numbers %u %u", s.rules[0].line,
              s.rules[2].line);
    }
    CHECK(s.unknown == 2 && s.unknown_line == 5 && strcmp(s.unknown_type, "race") == 0,
          "unknown %u line %u type '%s'", s.unknown, s.unknown_line, s.unknown_type);
    CHECK(hs_supp_match(&s, "xbarx") == 0 && hs_supp_match(&s, "baz baz") == 1 &&
              hs_supp_match(&s, "nothing") == -1,
          "match indices");
    supp_free(&s);
    memset(&s, 0, sizeof(s));
    CHECK(hs_supp_parse(&s, hs_supp_builtin, strlen(hs_supp_builtin), "built-in") == 0 && s.n > 0 &&
              s.unknown == 0,
          "built-in list parses: %zu rules, %u unknown", s.n, s.unknown);
    supp_free(&s);
}

/* A profile with the four heap sample types and one location per function name. */
static hs_profile_t *make_profile(void)
{
    hs_profile_t *p = hs_profile_new();
    const char *types[] = {"alloc_objects", "alloc_space", "inuse_objects", "inuse_space"};
    for (int i = 0; i < 4; i++)
        hs_profile_add_sample_type(p, types[i], i % 2 ? "bytes" : "count");
    hs_mapping_t exe = {.memory_start = 0x1000,
                        .memory_limit = 0x9000,
                        .file_offset = 0,
                        .filename = hs_profile_str(p, "/bin/prog")};
    hs_mapping_t lib = {.memory_start = 0x10000,
                        .memory_limit = 0x20000,
                        .file_offset = 0x1000,
                        .filename = hs_profile_str(p, "/lib/libthird.so.1")};
    uint64_t me = hs_profile_add_mapping(p, &exe), ml = hs_profile_add_mapping(p, &lib);
    const char *fn[][2] = {{"main", "prog.c"},      {"leak_a", "a.c"},    {"leak_b", "b.c"},
                           {"global_cache", "a.c"}, {"third", "third.c"}, {"helper", "cache.h"}};
    for (int i = 0; i < 6; i++) {
        hs_line_t l = {hs_profile_add_function(p, fn[i][0], fn[i][0], fn[i][1], 0), 10 + i};
        hs_profile_add_location(p, i == 4 ? ml : me, (i == 4 ? 0x10100u : 0x1100u) + 16u * i, &l,
                                1);
    }
    return p;
}

static void add(hs_profile_t *p, uint64_t leaf, int64_t io, int64_t ib)
{
    uint64_t locs[2] = {leaf, 1};
    int64_t v[4] = {io + 1, ib + 100, io, ib};
    hs_profile_add_sample(p, locs, 2, v);
}

static void test_report(void)
{
    hs_profile_t *p = make_profile();
    add(p, 2, 2, 200);  /* leak_a */
    add(p, 2, 1, 100);  /* leak_a again (other labels): summed to 3 objects, 300 bytes */
    add(p, 3, 1, 1000); /* leak_b: the largest */
    add(p, 4, 5, 500);  /* global_cache: suppressed by function */
    add(p, 5, 1, 7);    /* in libthird.so: suppressed by module */
    add(p, 6, 2, 20);   /* helper from cache.h: suppressed by file */
    add(p, 2, 0, 0);    /* freed: not a site (different stack length would still be 0) */
    hs_supp_t s;
    memset(&s, 0, sizeof(s));
    const char text[] = "leak:^global_cache$\nleak:libthird.so\nleak:cache.h\nleak:unused\n";
    hs_supp_parse(&s, text, strlen(text), "supp");
    hs_leak_opts_t o = {.rate = 1, .max_sites = 0, .program = "prog", .pid = 42};
    hs_buf_t out = HS_BUF_INIT;
    hs_leak_result_t r;
    CHECK(hs_leak_report(p, &s, &o, &out, &r) == 0, "report");
    hs_buf_append(&out, "", 1);
    const char *t = (const char *)out.data;
    CHECK(r.sites == 2 && r.objects == 4 && r.bytes == 1300, "sites %llu objects %g bytes %g",
          (unsigned long long)r.sites, r.objects, r.bytes);
    CHECK(r.suppressed_sites == 3 && r.supp_objects == 8 && r.supp_bytes == 527,
          "suppressed %llu %g %g", (unsigned long long)r.suppressed_sites, r.supp_objects,
          r.supp_bytes);
    const char *b = strstr(t, "heapsift: 1000 bytes in 1 object allocated from:\n"
                              "    #0 0x1120 in leak_b b.c:12 (prog+0x120)\n"
                              "    #1 0x1100 in main prog.c:10 (prog+0x100)\n");
    const char *a = strstr(t, "heapsift: 300 bytes in 3 objects allocated from:\n"
                              "    #0 0x1110 in leak_a a.c:11 (prog+0x110)\n");
    CHECK(a && b && b < a, "sites, largest first:\n%s", t);
    CHECK(strstr(t, "heapsift:   500 bytes in 5 objects from 1 site: leak:^global_cache$ (supp:1)"),
          "function rule:\n%s", t);
    CHECK(strstr(t, "heapsift:   7 bytes in 1 object from 1 site: leak:libthird.so (supp:2)"),
          "module rule:\n%s", t);
    CHECK(strstr(t, "heapsift:   20 bytes in 2 objects from 1 site: leak:cache.h (supp:3)"),
          "file rule:\n%s", t);
    CHECK(!strstr(t, "unused"), "unused rule listed:\n%s", t);
    CHECK(strstr(t, "heapsift: 1300 bytes in 4 objects still allocated at exit from 2 sites "
                    "(exact: HEAPSIFT_RATE=1; 3 sites suppressed) in prog (pid 42)\n"),
          "summary:\n%s", t);
    out.len = 0;
    o.max_sites = 1;
    o.rate = 4096;
    CHECK(hs_leak_report(p, &s, &o, &out, &r) == 0, "report 2");
    hs_buf_append(&out, "", 1);
    t = (const char *)out.data;
    CHECK(strstr(t, "heapsift: ~1000 bytes in ~1 object allocated from:") && !strstr(t, "leak_a"),
          "cap 1:\n%s", t);
    CHECK(strstr(t, "... and 1 more site: ~300 bytes in ~3 objects"), "rest:\n%s", t);
    CHECK(strstr(t, "1-exp(-s/4096)") && strstr(t, "(estimates at HEAPSIFT_RATE=4096; "),
          "sampled wording:\n%s", t);
    hs_buf_free(&out);
    supp_free(&s);
    hs_profile_free(p);
}

int main(void)
{
    test_match();
    test_parse();
    test_report();
    return hs_check_done("test_suppress");
}

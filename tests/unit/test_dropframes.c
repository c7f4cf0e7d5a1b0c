/*
 * Unit test of drop_frames (src/common/model/dropframes.c) and of its use by the views
 * (report.c) and the leak report (leakreport.c):
 *  - heapsift's rule on names that must drop (allocator entry points and plumbing of C,
 *    C++ and Rust, demangled as libiberty, __cxa_demangle and pprof's demangler leave them,
 *    and mangled: Itanium, Rust legacy and v0) and names that must stay (container methods,
 *    user functions, a user function generic over alloc::alloc::Global);
 *  - pprof's simplifyFunc, case by case;
 *  - pprof's Prune on a hand-built profile whose answer is worked out by hand: the cut at
 *    the root-most allocator frame past the first user frame, allocator frames at the root
 *    kept, a stack all allocator kept whole, inlined lines trimmed from a location's inner
 *    side or the location dropped whole, keep_frames; planned (dense and sparse ids) and
 *    applied in place;
 *  - a report: leaves, the merge before the prune, --no-drop-frames; the leak report's
 *    first frame.
 */
#include "model/dropframes.h"
#include "reports/leakreport.h"
#include "reports/report.h"

#include "check.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const must_drop[] = {
    /* C */
    "malloc",
    "calloc",
    "realloc",
    "free",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
    "reallocarray",
    "__libc_malloc",
    "__libc_calloc",
    "__posix_memalign",
    /* jemalloc, mimalloc, tcmalloc */
    "mallocx",
    "rallocx",
    "xallocx",
    "sdallocx",
    "dallocx",
    "je_malloc",
    "je_mallocx",
    "_rjem_mallocx",
    "_rjem_sdallocx",
    "_rjem_je_prof_backtrace",
    "mi_malloc_aligned",
    "mi_zalloc_aligned",
    "mi_free",
    "_mi_malloc_generic",
    "tc_malloc",
    "tc_newarray_nothrow",
    "tcmalloc::allocate_full_malloc_oom(unsigned long)",
    "TCMallocInternalNew",
    /* C++, demangled in full (__cxa_demangle, libiberty) */
    "operator new(unsigned long)",
    "operator new[](unsigned long)",
    "operator new(unsigned long, std::align_val_t)",
    "operator new(unsigned long, std::nothrow_t const&)",
    "operator new[](unsigned long, std::align_val_t, std::nothrow_t const&)",
    "operator delete(void*, unsigned long)",
    "operator delete[](void*)",
    "Pool::operator new(unsigned long)",
    "std::__new_allocator<char>::allocate(unsigned long, void const*)",
    "std::__new_allocator<std::function<void (int)> >::allocate(unsigned long, void const*)",
    "__gnu_cxx::new_allocator<char>::allocate(unsigned long, void const*)",
    "std::allocator_traits<std::allocator<char> >::allocate(std::allocator<char>&, unsigned long)",
    "std::allocator<char>::allocate(unsigned long)",
    "std::_Vector_base<char, std::allocator<char> >::_M_allocate(unsigned long)",
    "std::__1::allocator<char>::allocate[abi:v15006](unsigned long)",
    "std::__1::__libcpp_allocate[abi:v15006](unsigned long, unsigned long)",
    /* C++ as pprof's demangler leaves a mangled name (no parameters, no template args) */
    "operator new",
    "std::__new_allocator::allocate",
    "__gnu_cxx::new_allocator::allocate",
    "std::allocator_traits::allocate",
    "_M_allocate",
    "allocate",
    /* C++ mangled (Itanium, x86-64) */
    "_Znwm",
    "_Znam",
    "_ZnwmSt11align_val_t",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    "_ZdlPv",
    "_ZdlPvm",
    "_ZdaPv",
    "_ZdlPvSt11align_val_t",
    "_ZNSt15__new_allocatorIcE8allocateEmPKv",
    "_ZN9__gnu_cxx13new_allocatorIcE8allocateEmPKv",
    "_ZNSt16allocator_traitsISaIcEE8allocateERS0_m",
    "_ZNSaIcE8allocateEm",
    "_ZNSt12_Vector_baseIcSaIcEE11_M_allocateEm",
    /* Rust, demangled (libiberty legacy without its hash, v0) */
    "__rust_alloc",
    "__rust_alloc_zeroed",
    "__rust_realloc",
    "__rust_dealloc",
    "__rustc::__rust_alloc",
    "__rustc::__rdl_realloc",
    "__rg_alloc",
    "__rdl_alloc_zeroed",
    "std::alloc::__default_lib_allocator::__rdl_alloc",
    "std::alloc::rust_oom",
    "alloc::alloc::exchange_malloc",
    "alloc::alloc::Global::alloc_impl",
    "alloc::raw_vec::finish_grow",
    "alloc::raw_vec::RawVec<T,A>::grow_one",
    "alloc::raw_vec::RawVecInner<A>::reserve::do_reserve_and_handle",
    "<alloc::raw_vec::RawVec<u64>>::grow_one",
    "<alloc::alloc::Global>::alloc_impl",
    "alloc::raw_vec::finish_grow::<alloc::alloc::Global>",
    "<alloc::alloc::Global as core::alloc::Allocator>::allocate",
    "<tikv_jemallocator::Jemalloc as core::alloc::global::GlobalAlloc>::alloc",
    "<mimalloc::MiMalloc as core::alloc::global::GlobalAlloc>::realloc",
    "<std::alloc::System as core::alloc::global::GlobalAlloc>::alloc",
    "std::sys::alloc::unix::<impl core::alloc::global::GlobalAlloc for std::alloc::System>::alloc",
    "std::sys::pal::unix::alloc::aligned_malloc",
    "tikv_jemallocator::layout_to_flags",
    /* Rust legacy as __cxa_demangle leaves it (hash kept, $LT$ escapes) */
    "alloc::raw_vec::finish_grow::h0123456789abcdef",
    "alloc::raw_vec::RawVec$LT$T$C$A$GT$::grow_one::h0123456789abcdef",
    "_$LT$alloc..alloc..Global$u20$as$u20$core..alloc..Allocator$GT$::allocate::h0123456789abcdef",
    "_$LT$tikv_jemallocator..Jemalloc$u20$as$u20$core..alloc..global..GlobalAlloc$GT$::alloc::"
    "h0123456789abcdef",
    "std::sys::alloc::unix::_$LT$impl$u20$core..alloc..global..GlobalAlloc$u20$for$u20$std.."
    "alloc..System$GT$::alloc::h0123456789abcdef",
    "std::alloc::__default_lib_allocator::__rdl_alloc::h0123456789abcdef",
    /* Rust legacy, mangled */
    "_ZN5alloc7raw_vec11finish_grow17h0123456789abcdefE",
    "_ZN5alloc7raw_vec19RawVec$LT$T$C$A$GT$8grow_one17h0123456789abcdefE",
    "_ZN5alloc5alloc15exchange_malloc17h0123456789abcdefE",
    "_ZN63_$LT$alloc..alloc..Global$u20$as$u20$core..alloc..Allocator$GT$8allocate17h0123456789a"
    "bcdefE",
    "_ZN3std5alloc24__default_lib_allocator11__rdl_alloc17h0123456789abcdefE",
    "_ZN3std3sys5alloc4unix83_$LT$impl$u20$core..alloc..global..GlobalAlloc$u20$for$u20$std..al"
    "loc..System$GT$5alloc17h0123456789abcdefE",
    "_ZN76_$LT$tikv_jemallocator..Jemalloc$u20$as$u20$core..alloc..global..GlobalAlloc$GT$5alloc"
    "17h0123456789abcdefE",
    /* Rust v0, mangled */
    "_RNvMs_NtCs1a2B3_5alloc7raw_vecINtB4_6RawVecyE8grow_one",
    "_RINvNtCs1a2B3_5alloc7raw_vec11finish_growNtNtB4_5alloc6GlobalECs9z_6leafrs",
    "_RNCNvNtCs1a2B3_5alloc7raw_vec11finish_grow0",
    "_RNvCsfLfy6EI15iL_7___rustc13___rdl_realloc",
    "_RNvCsfLfy6EI15iL_7___rustc19___rust_alloc_zeroed",
    "_RNvNtNtNtCsjrHSEGnQ3l9_3std3sys5alloc4unix14aligned_malloc",
    "_RINvNvMs2_NtCslNYArtu3iFV_5alloc7raw_vecINtB8_11RawVecInnerpE7reserve21do_reserve_and_"
    "handleNtNtBa_5alloc6GlobalECs4X4t9plMPHF_9addr2line",
    "_ZN3std3sys5alloc4unix14aligned_malloc17h0123456789abcdefE",
    "_RNvCs7q_7___rustc12___rust_alloc",
    "_RNvXs_NtCs1a2B3_5alloc5allocNtB4_6GlobalNtNtCs8p_4core5alloc9Allocator8allocate",
    "_RNvXCs5t_17tikv_jemallocatorNtB2_8JemallocNtNtNtCs8p_4core5alloc6global11GlobalAlloc5alloc",
    /* heapsift's own hooks, should one show */
    "hs_slow_alloc",
    "hs_thunk_judge_new_plain",
};

static const char *const must_stay[] = {
    "main",
    "site_vec",
    "site_vec()",
    "strdup",
    "allocate_buffer",
    "my_allocate",
    "rallocate",
    "mallocx_wrapper",
    "freelist_push",
    "operator_new_count",
    "new_allocator",
    "(anonymous namespace)::make(int)",
    "Foo::operator()(int) const",
    "std::vector<char, std::allocator<char> >::reserve(unsigned long)",
    "std::vector<int, std::allocator<int> >::_M_realloc_insert<int const&>(__gnu_cxx::__normal_"
    "iterator<int*, std::vector<int, std::allocator<int> > >, int const&)",
    "std::vector<int, std::allocator<int> >::_M_realloc_append<int const&>(int const&)",
    "std::vector<int, std::allocator<int> >::_M_default_append(unsigned long)",
    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> "
    ">::_M_create(unsigned long&, unsigned long)",
    "std::__detail::_Hashtable_alloc<std::allocator<std::__detail::_Hash_node<int, false> > "
    ">::_M_allocate_node<int const&>(int const&)",
    "std::vector<char, std::allocator<char> >::_M_allocate_and_copy<char*>(unsigned long, char*, "
    "char*)",
    "_ZNSt6vectorIcSaIcEE7reserveEm",
    "_ZNSt6vectorIiSaIiEE17_M_realloc_insertIJRKiEEEvN9__gnu_cxx17__normal_iteratorIPiS1_EEDpOT_",
    "_ZNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEE9_M_createERmm",
    "_Z8site_vecv",
    "alloc::vec::Vec<T,A>::push",
    "alloc::vec::Vec<T,A>::reserve",
    "<alloc::vec::Vec<u64>>::push",
    "<alloc::vec::Vec<u8> as core::clone::Clone>::clone",
    "alloc::string::String::push_str",
    "core::ptr::drop_in_place<alloc::raw_vec::RawVec<u8>>",
    "leafrs::site_vec",
    "rjemu::hold_site",
    "hashbrown::raw::RawTable<T,A>::reserve_rehash",
    "alloc::vec::Vec<T,A>::reserve::h0123456789abcdef",
    "_ZN5alloc3vec16Vec$LT$T$C$A$GT$7reserve17h0123456789abcdefE",
    "_ZN6leafrs8site_vec17h0123456789abcdefE",
    "_RNvCs9z_6leafrs8site_vec",
    "_RNvMs0_NtCs1a2B3_5alloc3vecINtB5_3VecyE7reserveCs9z_6leafrs",
    "_RINvCs9z_4user3fooNtNtCs1a2B3_5alloc5alloc6GlobalE",
    "user::foo::<alloc::alloc::Global>",
    "runtime.mallocgc",
    "",
    "(",
    "(malloc)",
    /* the __rustc crate's panic entry points are no allocator's */
    "_RNvCsfLfy6EI15iL_7___rustc10rust_panic",
    "_RNvCsfLfy6EI15iL_7___rustc17rust_begin_unwind",
    "_RNvCsfLfy6EI15iL_7___rustc18___rust_start_panic",
    "__rustc::rust_begin_unwind",
    "_RINvNtNtCsjrHSEGnQ3l9_3std3sys9backtrace26___rust_end_short_backtraceNCNvNtB6_9panicking13"
    "panic_handler0zEB6_",
    "_ZN3std3sys9backtrace26__rust_end_short_backtrace17h0123456789abcdefE",
};

static void test_rule(void)
{
    hs_dropframes_rx_t *rx = NULL;
    int rc = hs_dropframes_compile(hs_dropframes_rule, NULL, &rx);
    CHECK(rc == 0 && rx, "heapsift's rule does not compile: %d", rc);
    if (!rx)
        return;
    for (size_t i = 0; i < sizeof(must_drop) / sizeof(must_drop[0]); i++)
        CHECK(hs_dropframes_match(rx, must_drop[i]), "should drop: %s", must_drop[i]);
    for (size_t i = 0; i < sizeof(must_stay) / sizeof(must_stay[0]); i++)
        CHECK(!hs_dropframes_match(rx, must_stay[i]), "should stay: %s", must_stay[i]);
    hs_dropframes_rx_free(rx);
    /* pprof's legacy expression for gperftools profiles compiles and drops its own */
    CHECK(hs_dropframes_compile("malloc|operator new(\\[\\])?", "keep_me", &rx) == 0, "compile");
    CHECK(hs_dropframes_match(rx, "operator new[](unsigned long)"), "operator new[]");
    CHECK(!hs_dropframes_match(rx, "keep_me"), "keep");
    hs_dropframes_rx_free(rx);
    CHECK(hs_dropframes_compile("(", NULL, &rx) == -EINVAL && !rx, "a bad expression");
}

static void test_simplify(void)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        {"foo", "foo"},
        {"foo(int)", "foo"},
        {".foo(int)", "foo"},
        {"(anonymous namespace)::f(int)", "(anonymous namespace)::f"},
        {"A::operator()(int) const", "A::operator()"},
        {"operator new(unsigned long)", "operator new"},
        {"std::__new_allocator<std::function<void (int)> >::allocate(unsigned long)",
         "std::__new_allocator<std::function<void "},
        {"(x)", ""},
        {"f<(anonymous namespace)::X>(operator())", "f<(anonymous namespace)::X>"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *s;
        size_t n = hs_dropframes_simplify(cases[i].in, &s);
        CHECK(n == strlen(cases[i].want) && strncmp(s, cases[i].want, n) == 0,
              "simplify(%s) = %.*s, want %s", cases[i].in, (int)n, s, cases[i].want);
    }
}

/* The profile: functions by name, locations of one or more lines (inner first). */
enum { F_MALLOC = 1, F_NEW, F_ALLOCATOR, F_SITE, F_MAIN, F_START, F_RESERVE, F_USER, F_KEEP };
static const char *const fnames[] = {
    NULL,
    "malloc",
    "operator new(unsigned long)",
    "std::__new_allocator<char>::allocate(unsigned long, void const*)",
    "site_vec()",
    "main",
    "__libc_start_main",
    "std::vector<char, std::allocator<char> >::reserve(unsigned long)",
    "user_fn",
    "keep_alloc",
};

/* Locations (ids): 1..8 one line each, of functions 1..8; 9 operator new inlined into
 * vector::reserve (the inner line drops: the location stays, trimmed to reserve); 10 malloc
 * inlined into the allocator template (both drop: it goes whole); 11 keep_alloc (drop
 * matches it, keep_frames too). drop_frames ends in ".*alloc"; keep_frames keeps one. */
static hs_profile_t *build(void)
{
    hs_profile_t *p = hs_profile_new();
    hs_profile_add_sample_type(p, "alloc_objects", "count");
    hs_profile_add_sample_type(p, "alloc_space", "bytes");
    hs_profile_add_sample_type(p, "inuse_objects", "count");
    hs_profile_add_sample_type(p, "inuse_space", "bytes");
    for (int f = F_MALLOC; f <= F_KEEP; f++)
        hs_profile_add_function(p, fnames[f], fnames[f], "x.c", 0);
    for (int f = F_MALLOC; f <= F_USER; f++) {
        hs_line_t l = {(uint64_t)f, 10};
        hs_profile_add_location(p, 0, 0x1000 + (uint64_t)f, &l, 1);
    }
    hs_line_t inl[2] = {{F_NEW, 1}, {F_RESERVE, 2}}, both[2] = {{F_MALLOC, 1}, {F_ALLOCATOR, 2}};
    hs_profile_add_location(p, 0, 0x2009, inl, 2);
    hs_profile_add_location(p, 0, 0x200a, both, 2);
    hs_line_t k = {F_KEEP, 3};
    hs_profile_add_location(p, 0, 0x200b, &k, 1);
    static const uint64_t stacks[][7] = {
        {1, 2, 3, 4, 5, 6, 0}, /* 0: cut at the allocator's frame: starts at site (3) */
        {1, 9, 4, 5, 6, 0},    /* 1: 9 stays, trimmed to reserve: starts at 1 */
        {1, 4, 2, 0},          /* 2: new at the root is kept: starts at site (1) */
        {1, 2, 0},             /* 3: all allocator: whole */
        {10, 4, 5, 0},         /* 4: 10 goes whole: starts at site (1) */
        {11, 4, 5, 0},         /* 5: keep_alloc kept by keep_frames */
        {2, 3, 4, 5, 6, 0},    /* 6: the same as 0 once pruned, another stack before */
    };
    for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++) {
        size_t n = 0;
        while (stacks[i][n])
            n++;
        int64_t v[4] = {1, 100 * (int64_t)(i + 1), 1, 100 * (int64_t)(i + 1)};
        hs_profile_add_sample(p, stacks[i], n, v);
    }
    p->drop_frames = hs_profile_str(p, "malloc|operator new|std::__new_allocator[<:].*|.*alloc");
    p->keep_frames = hs_profile_str(p, "keep_alloc");
    return p;
}

static const size_t want_start[] = {3, 1, 1, 0, 1, 0, 2};

static void check_plan(const hs_profile_t *p, const char *what)
{
    hs_dropframes_plan_t plan;
    int rc = hs_dropframes_plan(p, hs_profile_get_str(p, p->drop_frames),
                                hs_profile_get_str(p, p->keep_frames), &plan);
    CHECK(rc == 0 && plan.cut, "%s: plan %d", what, rc);
    if (rc)
        return;
    for (size_t i = 0; i < p->nsamples; i++) {
        size_t s = hs_dropframes_start(&plan, p, &p->samples[i]);
        CHECK(s == want_start[i], "%s: sample %zu starts at %zu, want %zu", what, i, s,
              want_start[i]);
    }
    CHECK(hs_dropframes_trim(&plan, 8, 2) == 1, "%s: location 9 keeps reserve", what);
    CHECK(hs_dropframes_trim(&plan, 9, 2) == 0 && plan.cut[9] == 2, "%s: 10 whole", what);
    CHECK(plan.cut[0] == 1 && plan.cut[3] == 0 && plan.cut[10] == 0, "%s: cuts", what);
    hs_dropframes_plan_free(&plan);
}

/* The same profile with ids that are not index + 1. */
static void sparse_ids(hs_profile_t *p)
{
    for (size_t i = 0; i < p->nfunctions; i++)
        p->functions[i].id = 1000 - 7 * i;
    for (size_t i = 0; i < p->nlocations; i++) {
        p->locations[i].id = 50 + 3 * (p->nlocations - i);
        for (size_t j = 0; j < p->locations[i].nlines; j++)
            p->locations[i].lines[j].function_id =
                1000 - 7 * (p->locations[i].lines[j].function_id - 1);
    }
    for (size_t i = 0; i < p->nsamples; i++)
        for (size_t k = 0; k < p->samples[i].nlocs; k++)
            p->samples[i].location_ids[k] =
                50 + 3 * (p->nlocations - (p->samples[i].location_ids[k] - 1));
}

static void test_prune(void)
{
    hs_profile_t *p = build();
    check_plan(p, "dense");
    hs_dropframes_plan_t plan;
    CHECK(hs_dropframes_plan(p, "", NULL, &plan) == 0 && !plan.cut, "no rule: no plan");
    CHECK(hs_dropframes_start(&plan, p, &p->samples[0]) == 0, "no rule: whole stacks");
    CHECK(hs_dropframes_plan(p, "(", NULL, &plan) == 0 && !plan.cut, "bad rule: no plan");
    CHECK(hs_dropframes_apply(p, hs_profile_get_str(p, p->drop_frames),
                              hs_profile_get_str(p, p->keep_frames)) == 0,
          "apply");
    static const size_t want_n[] = {3, 4, 2, 2, 2, 3, 3};
    for (size_t i = 0; i < p->nsamples; i++)
        CHECK(p->samples[i].nlocs == want_n[i], "applied: sample %zu has %zu frames, want %zu", i,
              p->samples[i].nlocs, want_n[i]);
    CHECK(p->samples[0].location_ids[0] == 4 && p->samples[1].location_ids[0] == 9,
          "applied: leaves");
    CHECK(p->locations[8].nlines == 1 && p->locations[8].lines[0].function_id == F_RESERVE,
          "applied: location 9 trimmed to reserve");
    CHECK(p->locations[9].nlines == 2, "applied: a location dropped whole keeps its lines");
    hs_profile_free(p);
    p = build();
    sparse_ids(p);
    check_plan(p, "sparse");
    hs_profile_free(p);
}

/* Flat of the node named name in r. */
static int64_t flat_of(const hs_report_t *r, const char *name)
{
    int64_t v = 0;
    for (size_t i = 0; i < r->nsamples; i++)
        if (strcmp(r->nodes[r->samples[i].frames[0]].fname, name) == 0)
            v += r->samples[i].value;
    return v;
}

static void test_report(void)
{
    hs_profile_t *p = build();
    const hs_profile_t *pp = p;
    int sign = 1;
    char err[256];
    hs_report_opts_t o = {.sample_type = "inuse_space"};
    hs_report_t r;
    CHECK(hs_report_build(&r, &pp, &sign, 1, &o, err, sizeof(err)) == 0, "report: %s", err);
    /* sample i holds 100 (i + 1) bytes: 0, 2, 4 and 6 end at site; 1 at reserve; 3 at
     * malloc (all allocator); 5 at keep_alloc */
    CHECK(flat_of(&r, "site_vec()") == 100 + 300 + 500 + 700, "site's flat %lld",
          (long long)flat_of(&r, "site_vec()"));
    CHECK(flat_of(&r, fnames[F_RESERVE]) == 200, "reserve's flat");
    CHECK(flat_of(&r, "malloc") == 400, "malloc's flat (a stack all allocator)");
    CHECK(flat_of(&r, "keep_alloc") == 600, "keep_alloc's flat");
    CHECK(r.nsamples == 7, "pprof merges before it prunes: %zu samples", r.nsamples);
    hs_report_free(&r);
    o.no_drop_frames = true;
    CHECK(hs_report_build(&r, &pp, &sign, 1, &o, err, sizeof(err)) == 0, "report: %s", err);
    CHECK(flat_of(&r, "malloc") == 100 + 200 + 300 + 400 + 500,
          "--no-drop-frames: malloc's flat %lld", (long long)flat_of(&r, "malloc"));
    hs_report_free(&r);
    hs_profile_free(p);
}

static void test_leak_report(void)
{
    hs_profile_t *p = build();
    hs_buf_t out = HS_BUF_INIT;
    hs_leak_opts_t o = {.rate = 1, .program = "t", .pid = 1};
    hs_leak_result_t res;
    CHECK(hs_leak_report(p, NULL, &o, &out, &res) == 0, "leak report");
    CHECK(hs_buf_append(&out, "", 1) == 0, "nul");
    const char *txt = out.data ? (const char *)out.data : "";
    /* the largest site: sample 6 (700 bytes), whose first frame left is site_vec */
    const char *s = strstr(txt, "700 bytes in 1 object allocated from:\n");
    CHECK(s && strstr(s, "\n    #0 0x1004 in site_vec() x.c:10\n"), "leak report:\n%s", txt);
    CHECK(strstr(txt, "heapsift: 100 bytes in 1 object allocated from:\n"
                      "    #0 0x1004 in site_vec() x.c:10\n"),
          "leak report: site 0's first frame is not site_vec");
    hs_buf_free(&out);
    hs_profile_free(p);
}

int main(void)
{
    test_rule();
    test_simplify();
    test_prune();
    test_report();
    test_leak_report();
    return hs_check_done("test_dropframes");
}

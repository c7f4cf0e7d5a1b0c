/*
 * Unit test of the demangler (src/common/model/demangle.c, demangle_profile.c): C++ names with
 * their parameters, Rust legacy names without their hash, Rust v0 names, C names and
 * garbage left alone, names cut with "..." on a character boundary, the input limit; no
 * call of malloc on the way but for Unicode identifiers (the preloaded library demangles
 * at dump time); the stack names cost, measured on a painted thread stack; and the
 * readers' pass over a profile (hs_profile_demangle).
 */
#define _GNU_SOURCE
#include "model/demangle.h"
#include "model/profile.h"
#include "base/utf8.h"

#include "check.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ------------------------------------------------ counting malloc's callers ---- */

#ifndef __SANITIZE_ADDRESS__
/* The test's own malloc family, forwarding to glibc's: counts calls while armed. */
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void __libc_free(void *);
static __thread int armed, calls;

void *malloc(size_t n)
{
    calls += armed;
    return __libc_malloc(n);
}

void *calloc(size_t n, size_t k)
{
    calls += armed;
    return __libc_calloc(n, k);
}

void *realloc(void *p, size_t n)
{
    calls += armed;
    return __libc_realloc(p, n);
}

void free(void *p)
{
    __libc_free(p);
}
#define COUNTING 1
#else
static int armed, calls;
#define COUNTING 0
#endif

/* ------------------------------------------------------------------ names ---- */

static const struct {
    const char *mangled, *want;
} good[] = {
    {"_ZN3foo3barEv", "foo::bar()"},
    {"_ZNSt6vectorIiSaIiEE9push_backERKi",
     "std::vector<int, std::allocator<int> >::push_back(int const&)"},
    {"_Znwm", "operator new(unsigned long)"},
    {"_ZnwmSt11align_val_t", "operator new(unsigned long, std::align_val_t)"},
    {"_ZN5sites10make_nodesEv.cold", "sites::make_nodes() [clone .cold]"},
    /* Rust legacy: the hash goes; $u7b$ and friends are decoded */
    {"_ZN5rjemu9hold_site17h99b5704e51b4a513E", "rjemu::hold_site"},
    {"_ZN5sites14site_rust_keep28_$u7b$$u7b$closure$u7d$$u7d$17h0123456789abcdefE",
     "sites::site_rust_keep::{{closure}}"},
    {"_ZN5alloc7raw_vec11finish_grow17h1a2b3c4d5e6f7a8bE", "alloc::raw_vec::finish_grow"},
    /* Rust v0: the crate's disambiguator is not shown */
    {"_RNvCsbmgHvNAAWCU_5rjemu9hold_site", "rjemu::hold_site"},
    {"_RNvNtCsbmgHvNAAWCU_5rjemu5inner4deep", "rjemu::inner::deep"},
    {"_RNvCsbmgHvNAAWCU_5rjemuu3zca", "rjemu::\xc3\x9f"},
};

static const char *const left_alone[] = {
    "main",
    "malloc",
    "_start",
    "__libc_start_main",
    "hs_demangle",
    "",
    "_",
    /* the form, but not a name either demangler takes */
    "_Z",
    "_R",
    "_Zgarbage",
    "_ZN5rjemu",
    "_RNv",
    "_RNvC",
    "_R!!",
    "_ZN3foo",
};

static void test_names(void)
{
    char out[512];
    for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
        armed = 1, calls = 0;
        size_t n = hs_demangle(good[i].mangled, HS_DEMANGLE_MAX_IN_PROCESS, out, sizeof(out));
        armed = 0;
        CHECK(n == strlen(good[i].want) && strcmp(out, good[i].want) == 0, "%s: '%s', want '%s'",
              good[i].mangled, out, good[i].want);
        CHECK(n == strlen(out), "%s: length %zu of '%s'", good[i].mangled, n, out);
        /* (a Unicode identifier, punycode in v0, is decoded in memory from malloc) */
        CHECK(calls == 0 || strstr(good[i].mangled, "u3zca"), "%s: %d malloc calls",
              good[i].mangled, calls);
        CHECK(hs_demangle_is_mangled(good[i].mangled), "%s", good[i].mangled);
    }
    for (size_t i = 0; i < sizeof(left_alone) / sizeof(left_alone[0]); i++) {
        memset(out, 'x', sizeof(out));
        armed = 1, calls = 0;
        size_t n = hs_demangle(left_alone[i], HS_DEMANGLE_MAX, out, sizeof(out));
        armed = 0;
        CHECK(n == 0 && out[0] == '\0', "'%s' gave %zu: '%.40s'", left_alone[i], n, out);
        CHECK(calls == 0, "%s: %d malloc calls", left_alone[i], calls);
    }
    CHECK(!hs_demangle_is_mangled(NULL) && !hs_demangle_is_mangled("main"));
    CHECK(hs_demangle(NULL, HS_DEMANGLE_MAX, out, sizeof(out)) == 0 && out[0] == '\0');
    CHECK(hs_demangle("_Znwm", HS_DEMANGLE_MAX, out, 7) == 0, "outlen 7 is refused");
    printf("demangle: %zu names demangled, %zu left alone%s\n", sizeof(good) / sizeof(good[0]),
           sizeof(left_alone) / sizeof(left_alone[0]),
           COUNTING ? ", no malloc but for a Unicode identifier"
                    : " (malloc not counted under ASan)");
}

/* A nested name of depth parts "_ZN1a1a...1aEv": demangles to "a::a::...::a()". */
static char *nested(size_t parts)
{
    char *s = malloc(3 + 2 * parts + 3);
    strcpy(s, "_ZN");
    for (size_t i = 0; i < parts; i++)
        memcpy(s + 3 + 2 * i, "1a", 2);
    strcpy(s + 3 + 2 * parts, "Ev");
    return s;
}

static void test_long(void)
{
    char out[64], big[4096];
    char *name = nested(100); /* "a::a:: ... ::a()": 100 * 3 - 2 + 2 = 300 bytes */
    size_t n = hs_demangle(name, HS_DEMANGLE_MAX, out, sizeof(out));
    CHECK(n == sizeof(out) - 1 && strlen(out) == n, "cut to %zu (strlen %zu)", n, strlen(out));
    CHECK(strncmp(out, "a::a::", 6) == 0 && strcmp(out + n - 3, "...") == 0, "'%s'", out);
    CHECK(hs_demangle(name, HS_DEMANGLE_MAX, big, sizeof(big)) == 300 &&
              strcmp(big + 295, "::a()") == 0,
          "'%.20s...'", big);
    /* exactly fitting: not cut */
    n = hs_demangle(name, HS_DEMANGLE_MAX, big, 301);
    CHECK(n == 300 && strcmp(big + 295, "::a()") == 0, "%zu '%s'", n, big + 290);
    CHECK(hs_demangle(name, HS_DEMANGLE_MAX, big, 300) == 299 && strcmp(big + 296, "...") == 0);
    /* the input limit: strlen 205 */
    CHECK(hs_demangle(name, 204, big, sizeof(big)) == 0 && big[0] == '\0');
    CHECK(hs_demangle(name, 205, big, sizeof(big)) == 300);
    free(name);
    /* a cut inside a two-byte character backs off to its start: "rjemu::ß::ß::ß" */
    const char *v0 = "_RNvNvNvCsbmgHvNAAWCU_5rjemuu3zcau3zcau3zca";
    n = hs_demangle(v0, HS_DEMANGLE_MAX, big, sizeof(big));
    CHECK(strcmp(big, "rjemu::\xc3\x9f::\xc3\x9f::\xc3\x9f") == 0, "'%s'", big);
    n = hs_demangle(v0, HS_DEMANGLE_MAX, out, 12);
    CHECK(n == 10 && strcmp(out, "rjemu::...") == 0, "%zu '%s'", n, out);
    char safe[64];
    CHECK(hs_utf8_safe(out, safe, sizeof(safe)) == out, "cut inside a character: '%s'", out);
}

/* ------------------------------------------------------------------ stack ---- */

#define STACK_SIZE (1024 * 1024)
#define PAINT 0xa5

typedef struct {
    const char *name;
    size_t n;
} stack_job_t;

static void *stack_run(void *arg)
{
    stack_job_t *j = arg;
    static char out[8192];
    j->n = hs_demangle(j->name, HS_DEMANGLE_MAX_IN_PROCESS, out, sizeof(out));
    return NULL;
}

/* Bytes of a painted 1 MiB thread stack that demangling name touched (the thread's own
 * frames included); *n gets hs_demangle's result. */
static size_t stack_used(const char *name, size_t *n)
{
    unsigned char *stack =
        mmap(NULL, STACK_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    CHECK(stack != MAP_FAILED);
    if (stack == MAP_FAILED)
        return 0;
    memset(stack, PAINT, STACK_SIZE);
    pthread_attr_t a;
    pthread_t t;
    stack_job_t j = {.name = name};
    pthread_attr_init(&a);
    pthread_attr_setstack(&a, stack, STACK_SIZE);
    CHECK(pthread_create(&t, &a, stack_run, &j) == 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    size_t low = 0;
    while (low < STACK_SIZE && stack[low] == PAINT)
        low++;
    munmap(stack, STACK_SIZE);
    *n = j.n;
    return STACK_SIZE - low;
}

/* The stack a name costs (demangle.h): a real long one (of LLVM, in rustc's
 * librustc_driver: the one of its 110,194 symbols that costs the most) stays under 64 KiB;
 * crafted ones at the in-process limit (HS_DEMANGLE_MAX_IN_PROCESS bytes: nested scopes, a
 * template of as many arguments as bytes, the worst case of cp-demangle's recursion) under
 * 512 KiB. */
static void test_stack(void)
{
    static const char llvm[] =
        "_ZN4llvm12DenseMapBaseINS_8DenseMapIPNS_11AnalysisKeyESt10unique_ptrINS_6detail19"
        "AnalysisPassConceptINS_8FunctionENS_15AnalysisManagerIS7_JEE11InvalidatorEJEEESt14"
        "default_deleteISB_EENS_12DenseMapInfoIS3_vEENS5_12DenseMapPairIS3_SE_EEEES3_SE_SG_"
        "SI_E22findBucketForInsertionIS3_EEPSI_RKT_SM_.cold";
    size_t parts = (HS_DEMANGLE_MAX_IN_PROCESS - 5) / 2, n = 0;
    char *deep = nested(parts);
    char *targs = malloc(HS_DEMANGLE_MAX_IN_PROCESS + 1);
    strcpy(targs, "_Z1fI");
    size_t k = strlen(targs);
    while (k < HS_DEMANGLE_MAX_IN_PROCESS - 4)
        targs[k++] = 'i';
    strcpy(targs + k, "EvT_");
    const char *names[] = {llvm, deep, targs};
    const char *what[] = {"LLVM", "nested", "template"};
    for (size_t i = 0; i < 3; i++) {
        size_t len = strlen(names[i]);
        size_t used = stack_used(names[i], &n);
        size_t limit = i ? 512 * 1024 : 64 * 1024;
        CHECK(i == 0 || (len <= HS_DEMANGLE_MAX_IN_PROCESS && len > HS_DEMANGLE_MAX_IN_PROCESS - 8),
              "%zu", len);
        CHECK(n > 0, "a %zu-byte name did not demangle", len);
        CHECK(used < limit, "%zu bytes of stack for a %zu-byte %s name", used, len, what[i]);
        printf("demangle: a %zu-byte %s name took %zu bytes of stack\n", len, what[i], used);
    }
    free(deep);
    free(targs);
}

/* ---------------------------------------------------------------- profile ---- */

static const char *fname(const hs_profile_t *p, uint64_t id)
{
    return hs_profile_get_str(p, hs_profile_function(p, id)->name);
}

static const char *fsys(const hs_profile_t *p, uint64_t id)
{
    return hs_profile_get_str(p, hs_profile_function(p, id)->system_name);
}

static void test_profile(void)
{
    const char *legacy = "_ZN5rjemu9hold_site17h99b5704e51b4a513E";
    const char *v0 = "_RNvCsbmgHvNAAWCU_5rjemu9hold_site";
    hs_profile_t *p = hs_profile_new();
    uint64_t f_leg = hs_profile_add_function(p, legacy, legacy, "a.rs", 1);
    uint64_t f_v0 = hs_profile_add_function(p, v0, NULL, "a.rs", 2);
    uint64_t f_old =
        hs_profile_add_function(p, "rjemu::hold_site::h99b5704e51b4a513", legacy, "a.rs", 3);
    uint64_t f_cc = hs_profile_add_function(p, "_ZN3foo3barEv", "_ZN3foo3barEv", "a.cc", 4);
    uint64_t f_main = hs_profile_add_function(p, "main", "main", "a.c", 5);
    uint64_t f_done = hs_profile_add_function(p, "std::f<int>", "_Z1fIiEvv", "f.h", 6);
    uint64_t f_bad = hs_profile_add_function(p, "_Zgarbage", "_Zgarbage", "", 0);
    uint64_t f_h = hs_profile_add_function(p, "a::h0123456789abcdef", "a", "", 0);
    CHECK(hs_profile_demangle(p) == 4);
    CHECK(strcmp(fname(p, f_leg), "rjemu::hold_site") == 0 && strcmp(fsys(p, f_leg), legacy) == 0,
          "%s / %s", fname(p, f_leg), fsys(p, f_leg));
    CHECK(strcmp(fname(p, f_v0), "rjemu::hold_site") == 0 && strcmp(fsys(p, f_v0), v0) == 0,
          "%s / %s", fname(p, f_v0), fsys(p, f_v0));
    CHECK(strcmp(fname(p, f_old), "rjemu::hold_site") == 0 && strcmp(fsys(p, f_old), legacy) == 0,
          "%s / %s", fname(p, f_old), fsys(p, f_old));
    CHECK(strcmp(fname(p, f_cc), "foo::bar()") == 0 && strcmp(fsys(p, f_cc), "_ZN3foo3barEv") == 0);
    CHECK(strcmp(fname(p, f_main), "main") == 0 && strcmp(fsys(p, f_main), "main") == 0);
    CHECK(strcmp(fname(p, f_done), "std::f<int>") == 0);
    CHECK(strcmp(fname(p, f_bad), "_Zgarbage") == 0);
    CHECK(strcmp(fname(p, f_h), "a::h0123456789abcdef") == 0);
    /* a second pass finds nothing left to do */
    CHECK(hs_profile_demangle(p) == 0);
    hs_profile_free(p);
}

int main(void)
{
    test_names();
    test_long();
    test_stack();
    test_profile();
    return hs_check_done("test_demangle");
}

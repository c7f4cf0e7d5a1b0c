/*
 * drop_frames (see dropframes.h): heapsift's rule, and pprof's Profile.Prune over the
 * profile model, planned once per profile (each function name is matched once, whatever
 * the number of lines that name it) so that the views can apply it while they read a
 * profile they must not change, or applied in place. Pure: no I/O, no globals but the rule.
 */
#include "dropframes.h"
#include "base/sort.h"

#include <errno.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>

/* Every alternative is matched against the whole simplified name. */
const char hs_dropframes_rule[] =
    /* pprof's allocRxStr (profile/legacy_profile.go) as it stands, but for `runtime\..*`:
     * heapsift profiles native code, where a Go runtime frame is cgo's, between user frames;
     * its tc_ names are all of tc_.* here */
    "calloc|cfree|malloc|free|memalign|do_memalign|(__)?posix_memalign|pvalloc|valloc|realloc|"
    "tcmalloc::.*|tc_.*|malloc_zone_(malloc|calloc|valloc|realloc|memalign|free)|"
    "BaseArena::.*|(::)?do_malloc_no_errno|(::)?do_malloc_pages|(::)?do_malloc|"
    "DoSampledAllocation|MallocedMemBlock::MallocedMemBlock|_M_allocate|"
    "__builtin_(vec_)?delete|__builtin_(vec_)?new|__gnu_cxx::new_allocator::allocate|"
    "__libc_malloc|__malloc_alloc_template::allocate|allocate|cpp_alloc|operator new(\\[\\])?|"
    "simple_alloc::allocate|"
    /* the C library's other entry points */
    "reallocarray|aligned_alloc|__libc_(calloc|realloc|free|memalign|valloc|pvalloc)|"
    /* C++: every operator new and delete (sized, aligned, nothrow, arrays, a class's own),
     * demangled and mangled; the allocator templates of libstdc++ (std::__new_allocator since
     * GCC 12, __gnu_cxx::new_allocator before), of libc++, and _Vector_base::_M_allocate,
     * with template arguments, without (pprof's own demangler drops them), and mangled */
    "(.*::)?operator (new|delete)(\\[\\])?|_Zn[wa][jmy].*|_Zd[la]Pv.*|"
    "std::(__1::)?(allocator|allocator_traits|__new_allocator)[<:].*|"
    "__gnu_cxx::new_allocator[<:].*|std::__1::__(libcpp_allocate|libcpp_operator_new).*|"
    "(.*::)?_M_allocate|_ZNSt15__new_allocatorI.*|_ZN9__gnu_cxx13new_allocatorI.*|"
    "_ZNSt16allocator_traitsI.*|_ZNSaI.*|_ZNSt12_Vector_baseI.*E11_M_allocateE[jmy]|"
    /* Rust: the allocator shims (__rust_alloc & co; in the __rustc crate since 1.88), std's
     * default allocator, alloc::alloc and alloc::raw_vec, and the GlobalAlloc and Allocator
     * impls of any allocator (tikv_jemallocator::Jemalloc, mimalloc::MiMalloc,
     * std::alloc::System, alloc::alloc::Global); demangled (legacy with or without its hash,
     * and v0), as __cxa_demangle leaves legacy names ($LT$, $u20$), and mangled */
    "(.*::)?__r(ust|dl|g)_(alloc|alloc_zeroed|realloc|dealloc|oom|alloc_error_handler)"
    "(::h[0-9a-f]{16})?|"
    "std::alloc::.*|std::sys::(.*::)?alloc::.*|<?alloc::(alloc|raw_vec)::.*|"
    "(tikv_)?jemallocator::.*|<.* as core::alloc::(global::GlobalAlloc|Allocator)>::.*|"
    ".*<impl core::alloc::(global::GlobalAlloc|Allocator) for .*|"
    ".*\\$u20\\$as\\$u20\\$core\\.\\.alloc\\.\\.(global\\.\\.GlobalAlloc|Allocator)\\$GT\\$.*|"
    ".*\\$LT\\$impl\\$u20\\$core\\.\\.alloc\\.\\.(global\\.\\.GlobalAlloc|Allocator)\\$u20\\$.*|"
    "(_ZN[0-9]+)?_\\$LT\\$alloc\\.\\.(alloc|raw_vec)\\.\\..*|"
    "_ZN(5alloc(5alloc|7raw_vec)|3std(3sys([0-9]+[a-z_][a-z0-9_]*)*)?5alloc|"
    "(17tikv_|12)jemallocator)[0-9].*|"
    "_R[0-9]*(N[A-Za-z]|[IMXY]|s[0-9A-Za-z]*_)*C(s[0-9A-Za-z]*_)?"
    "(5alloc(5alloc|7raw_vec)|3std(3sys([0-9]+[a-z_][a-z0-9_]*)*)?5alloc|"
    "(17tikv_|12)jemallocator).*|"
    "_RNvC(s[0-9A-Za-z]*_)?7___rustc[0-9]+___r(ust|dl|g)_"
    "(alloc|alloc_zeroed|realloc|dealloc|oom|alloc_error_handler)|"
    "_R.*X.*4core5alloc(6global11GlobalAlloc|9Allocator).*|"
    /* jemalloc (its API; je_ or, as tikv-jemallocator builds it, _rjem_ prefixed), mimalloc,
     * tcmalloc's newer entry points, and heapsift's own hooks, should one show */
    "mallocx|rallocx|xallocx|sdallocx|dallocx|nallocx|sallocx|je_.*|_rjem_.*|_?mi_.*|"
    "TCMallocInternal.*|hs_(slow|thunk|hooks|unwind)_.*";

size_t hs_dropframes_simplify(const char *name, const char **start)
{
    static const char an[] = "(anonymous namespace)", op[] = "operator()";
    const char *f = *name == '.' ? name + 1 : name, *p = f;
    *start = f;
    for (; *p; p++) { /* pprof's bracketRx: the reserved names first, leftmost first */
        if (strncmp(p, an, sizeof(an) - 1) == 0)
            p += sizeof(an) - 2;
        else if (strncmp(p, op, sizeof(op) - 1) == 0)
            p += sizeof(op) - 2;
        else if (*p == '(')
            break;
    }
    return (size_t)(p - f);
}

/* ---- expressions --------------------------------------------------------------------- */

struct hs_dropframes_rx {
    regex_t drop, keep;
    bool have_drop, have_keep;
};

void hs_dropframes_rx_free(hs_dropframes_rx_t *rx)
{
    if (!rx)
        return;
    if (rx->have_drop)
        regfree(&rx->drop);
    if (rx->have_keep)
        regfree(&rx->keep);
    free(rx);
}

/* regcomp of ^(s)$: 0, -EINVAL or -ENOMEM. */
static int df_anchored(regex_t *re, const char *s)
{
    size_t n = strlen(s) + 5;
    char *a = malloc(n);
    if (!a)
        return -ENOMEM;
    memcpy(a, "^(", 2);
    memcpy(a + 2, s, n - 5);
    memcpy(a + n - 3, ")$", 3);
    int rc = regcomp(re, a, REG_EXTENDED | REG_NOSUB);
    free(a);
    return rc == 0 ? 0 : rc == REG_ESPACE ? -ENOMEM : -EINVAL;
}

int hs_dropframes_compile(const char *drop, const char *keep, hs_dropframes_rx_t **out)
{
    hs_dropframes_rx_t *rx = calloc(1, sizeof(*rx));
    int rc = rx ? df_anchored(&rx->drop, drop ? drop : "") : -ENOMEM;
    if (rc == 0) {
        rx->have_drop = true;
        if (keep && *keep && (rc = df_anchored(&rx->keep, keep)) == 0)
            rx->have_keep = true;
    }
    if (rc) {
        hs_dropframes_rx_free(rx);
        rx = NULL;
    }
    *out = rx;
    return rc;
}

/* regexec over s[0..len): the simplified name is a prefix of the name. */
static bool df_exec(const regex_t *re, const char *s, size_t len)
{
    regmatch_t m = {.rm_so = 0, .rm_eo = (regoff_t)len};
    return regexec(re, s, 1, &m, REG_STARTEND) == 0;
}

bool hs_dropframes_match(const hs_dropframes_rx_t *rx, const char *name)
{
    const char *s;
    if (!name || !*name)
        return false;
    size_t len = hs_dropframes_simplify(name, &s);
    return df_exec(&rx->drop, s, len) && !(rx->have_keep && df_exec(&rx->keep, s, len));
}

/* ---- ids ----------------------------------------------------------------------------- */

typedef struct {
    uint64_t id;
    size_t idx;
} df_pair_t;

static int df_cmp_pair(const void *a, const void *b)
{
    uint64_t x = ((const df_pair_t *)a)->id, y = ((const df_pair_t *)b)->id;
    return x < y ? -1 : x > y;
}

/* id -> index over n records of stride bytes whose first field is the id: direct when every
 * id is its index + 1, else a sorted copy (*pairs, freed by the caller). */
static int df_idmap(const void *arr, size_t n, size_t stride, df_pair_t **pairs)
{
    bool dense = true;
    *pairs = NULL;
    for (size_t i = 0; i < n && dense; i++)
        dense = *(const uint64_t *)((const char *)arr + i * stride) == i + 1;
    if (dense)
        return 0;
    if (!(*pairs = malloc((n ? n : 1) * sizeof(df_pair_t))))
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        (*pairs)[i] = (df_pair_t){*(const uint64_t *)((const char *)arr + i * stride), i};
    hs_sort(*pairs, n, sizeof(df_pair_t), df_cmp_pair);
    return 0;
}

static size_t df_index(const df_pair_t *pairs, size_t n, uint64_t id)
{
    if (!pairs)
        return id >= 1 && id <= n ? (size_t)(id - 1) : SIZE_MAX;
    df_pair_t key = {id, 0};
    const df_pair_t *f = bsearch(&key, pairs, n, sizeof(key), df_cmp_pair);
    return f ? f->idx : SIZE_MAX;
}

/* ---- the plan ------------------------------------------------------------------------ */

typedef struct {
    const hs_profile_t *p;
    const hs_dropframes_rx_t *rx;
    df_pair_t *funcs; /* function id -> index, NULL when dense */
    uint8_t *verdict; /* per function index: 0 not yet matched, 1 drops, 2 stays */
} df_ctx_t;

static bool df_drops(df_ctx_t *c, uint64_t fid)
{
    size_t i = df_index(c->funcs, c->p->nfunctions, fid);
    if (i == SIZE_MAX)
        return false; /* pprof: a line without a function never matches */
    if (!c->verdict[i]) {
        const char *name = hs_profile_get_str(c->p, c->p->functions[i].name);
        c->verdict[i] = hs_dropframes_match(c->rx, name) ? 1 : 2;
    }
    return c->verdict[i] == 1;
}

/* The cut of every location: the outermost matching line and every line inside it. */
static void df_cuts(df_ctx_t *c, uint32_t *cut)
{
    for (size_t i = 0; i < c->p->nlocations; i++) {
        const hs_location_t *l = &c->p->locations[i];
        size_t k = l->nlines;
        while (k > 0 && !df_drops(c, l->lines[k - 1].function_id))
            k--;
        cut[i] = (uint32_t)k;
    }
}

void hs_dropframes_plan_free(hs_dropframes_plan_t *plan)
{
    free(plan->cut);
    free(plan->ids);
    free(plan->idx);
    memset(plan, 0, sizeof(*plan));
}

/* The plan's location id -> index map, when the ids are not dense. */
static int df_plan_locs(const hs_profile_t *p, hs_dropframes_plan_t *plan)
{
    df_pair_t *pairs;
    if (df_idmap(p->locations, p->nlocations, sizeof(hs_location_t), &pairs))
        return -ENOMEM;
    if (!pairs)
        return 0;
    plan->ids = malloc((p->nlocations + 1) * sizeof(uint64_t));
    plan->idx = malloc((p->nlocations + 1) * sizeof(size_t));
    for (size_t i = 0; plan->ids && plan->idx && i < p->nlocations; i++) {
        plan->ids[i] = pairs[i].id;
        plan->idx[i] = pairs[i].idx;
    }
    free(pairs);
    return plan->ids && plan->idx ? 0 : -ENOMEM;
}

int hs_dropframes_plan(const hs_profile_t *p, const char *drop, const char *keep,
                       hs_dropframes_plan_t *plan)
{
    memset(plan, 0, sizeof(*plan));
    if (!drop || !*drop || p->nlocations == 0)
        return 0;
    df_ctx_t c = {.p = p};
    hs_dropframes_rx_t *rx = NULL;
    int rc = hs_dropframes_compile(drop, keep, &rx);
    if (rc)
        return rc == -ENOMEM ? rc : 0; /* pprof: a rule that does not compile prunes nothing */
    c.rx = rx;
    rc = -ENOMEM;
    if (df_idmap(p->functions, p->nfunctions, sizeof(hs_function_t), &c.funcs))
        goto out;
    c.verdict = calloc(p->nfunctions + 1, 1);
    plan->cut = calloc(p->nlocations, sizeof(uint32_t));
    plan->n = p->nlocations;
    if (!c.verdict || !plan->cut || df_plan_locs(p, plan))
        goto out;
    df_cuts(&c, plan->cut);
    rc = 0;
out:
    if (rc)
        hs_dropframes_plan_free(plan);
    hs_dropframes_rx_free(rx);
    free(c.funcs);
    free(c.verdict);
    return rc;
}

static size_t df_loc_index(const hs_dropframes_plan_t *plan, uint64_t id)
{
    if (!plan->ids)
        return id >= 1 && id <= plan->n ? (size_t)(id - 1) : SIZE_MAX;
    size_t lo = 0, hi = plan->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (plan->ids[mid] < id)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < plan->n && plan->ids[lo] == id ? plan->idx[lo] : SIZE_MAX;
}

size_t hs_dropframes_start(const hs_dropframes_plan_t *plan, const hs_profile_t *p,
                           const hs_sample_t *s)
{
    bool user = false;
    if (!plan->cut)
        return 0;
    for (size_t i = s->nlocs; i-- > 0;) { /* from the root */
        size_t li = df_loc_index(plan, s->location_ids[i]);
        uint32_t c = li == SIZE_MAX ? 0 : plan->cut[li];
        if (c == 0) {
            user = true;
            continue;
        }
        if (user) /* the whole location goes, or the lines inside its match do */
            return c >= p->locations[li].nlines ? i + 1 : i;
    }
    return 0;
}

int hs_dropframes_apply(hs_profile_t *p, const char *drop, const char *keep)
{
    hs_dropframes_plan_t plan;
    int rc = hs_dropframes_plan(p, drop, keep, &plan);
    if (rc || !plan.cut)
        return rc;
    for (size_t i = 0; i < p->nsamples; i++) { /* before the lines: it reads their counts */
        hs_sample_t *s = &p->samples[i];
        size_t start = hs_dropframes_start(&plan, p, s);
        if (start == 0)
            continue; /* (a sample without locations has none to move) */
        memmove(s->location_ids, s->location_ids + start,
                (s->nlocs - start) * sizeof(*s->location_ids));
        s->nlocs -= start;
    }
    for (size_t i = 0; i < p->nlocations; i++) {
        hs_location_t *l = &p->locations[i];
        size_t t = hs_dropframes_trim(&plan, i, l->nlines);
        if (t == 0)
            continue; /* (a location without lines has none to move) */
        memmove(l->lines, l->lines + t, (l->nlines - t) * sizeof(*l->lines));
        l->nlines -= t;
    }
    hs_dropframes_plan_free(&plan);
    return 0;
}

/*
 * The legacy text heap profile readers (see read_legacy.h): one line scanner, the
 * `heap profile:` family (gperftools and Go debug=1, unsampled as pprof's
 * legacy_profile.go does: per-sample truncation, all frames moved back by one byte to
 * land on the call; `@ growthz` and `@ fragmentationz` unscaled, as objects/space),
 * jemalloc's threaded heap_v2 (unsampled as jeprof's AdjustSamples does, in floating
 * point per record; each sample keeps those values in fvalues, which the views sum and
 * truncate only when a sum is shown, as jeprof does; its integer values are those
 * apportioned by largest remainder, so that they add up to jeprof's totals), and the
 * entry points. The memory map section it
 * finds is read by read_legacy_maps.c; what both files share is in read_legacy_int.h. Never trusts
 * the input: every number is range-checked. A sample or stack line that does not parse is skipped
 * and counted (p->nskipped, first at p->skipped_line), as pprof and jeprof go on reading; a bad
 * header fails, naming it.
 */
#define _GNU_SOURCE /* memmem */
#include "read_legacy_int.h"
#include "base/utf8.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char hs_legacy_alloc_drop_rx[] =
    "calloc|cfree|malloc|free|memalign|do_memalign|(__)?posix_memalign|pvalloc|valloc|realloc|"
    "tcmalloc::.*|tc_calloc|tc_cfree|tc_malloc|tc_free|tc_memalign|tc_posix_memalign|"
    "tc_pvalloc|tc_valloc|tc_realloc|tc_new|tc_delete|tc_newarray|tc_deletearray|"
    "tc_new_nothrow|tc_newarray_nothrow|malloc_zone_malloc|malloc_zone_calloc|"
    "malloc_zone_valloc|malloc_zone_realloc|malloc_zone_memalign|malloc_zone_free|"
    "runtime\\..*|BaseArena::.*|(::)?do_malloc_no_errno|(::)?do_malloc_pages|(::)?do_malloc|"
    "DoSampledAllocation|MallocedMemBlock::MallocedMemBlock|_M_allocate|"
    "__builtin_(vec_)?delete|__builtin_(vec_)?new|__gnu_cxx::new_allocator::allocate|"
    "__libc_malloc|__malloc_alloc_template::allocate|allocate|cpp_alloc|operator new(\\[\\])?|"
    "simple_alloc::allocate";
const char hs_legacy_alloc_keep_rx[] = "runtime\\.panic|runtime\\.reflectcall|runtime\\.call[0-9]*";

/* jeprof's RemoveUninterestingFrames for heap profiles, the rule of a jemalloc file: its
 * names, each also with Mach's "_" prefix, and TCMalloc|^tcmalloc:: unanchored. jeprof
 * matches a name without arguments and template arguments; pprof's simplified name keeps
 * the latter, hence newImpl's. pprof's list differs: it also drops allocate, cpp_alloc,
 * _M_allocate, __libc_malloc and more, which jeprof keeps as the allocating function. */
const char hs_legacy_jeprof_drop_rx[] =
    "_?(calloc|cfree|malloc|(void\\* )?newImpl(<.*>)?|free|memalign|posix_memalign|"
    "aligned_alloc|pvalloc|valloc|realloc|mallocx|rallocx|xallocx|dallocx|sdallocx|"
    "sdallocx_noflags|tc_calloc|tc_cfree|tc_malloc|tc_free|tc_memalign|tc_posix_memalign|"
    "tc_pvalloc|tc_valloc|tc_realloc|tc_new|tc_delete|tc_newarray|tc_deletearray|"
    "tc_new_nothrow|tc_newarray_nothrow|do_malloc|::do_malloc|::do_malloc_or_cpp_alloc|"
    "DoSampledAllocation|simple_alloc::allocate|__malloc_alloc_template::allocate|"
    "__builtin_delete|__builtin_new|__builtin_vec_delete|__builtin_vec_new|operator new|"
    "operator new\\[\\]|malloc_zone_malloc|malloc_zone_calloc|malloc_zone_valloc|"
    "malloc_zone_realloc|malloc_zone_memalign|malloc_zone_free|__start_google_malloc|"
    "__stop_google_malloc|__start_malloc_hook|__stop_malloc_hook)|.*TCMalloc.*|tcmalloc::.*";

static int lg_fail(hs_legacy_parser_t *ps, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int lg_fail(hs_legacy_parser_t *ps, const char *fmt, ...)
{
    int n = snprintf(ps->err, ps->errlen, "line %zu: ", ps->lineno);
    if (n >= 0 && (size_t)n < ps->errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -EINVAL;
}

/* ---- line scanning (the token scanners: read_legacy_int.h) ---------------------------- */

/* The next line without its end of line and surrounding blanks; false at end of input. */
static bool lg_next_line(hs_legacy_parser_t *ps, const char **s, const char **e)
{
    if (ps->pos >= ps->end)
        return false;
    const char *nl = memchr(ps->pos, '\n', (size_t)(ps->end - ps->pos));
    const char *le = nl ? nl : ps->end;
    const char *b = ps->pos;
    ps->pos = nl ? nl + 1 : ps->end;
    ps->lineno++;
    while (b < le && (*b == ' ' || *b == '\t'))
        b++;
    while (le > b && (le[-1] == ' ' || le[-1] == '\t' || le[-1] == '\r'))
        le--;
    *s = b;
    *e = le;
    return true;
}

/* Skips blanks, then expects ch. */
static bool lg_char(const char **c, const char *e, char ch)
{
    lg_ws(c, e);
    if (*c >= e || **c != ch)
        return false;
    (*c)++;
    return true;
}

/* "N1: S1 [N2: S2]": in-use count and bytes, then allocated count and bytes. */
static bool lg_quad(const char **c, const char *e, int64_t q[4])
{
    return lg_int(c, e, &q[0]) && lg_char(c, e, ':') && lg_int(c, e, &q[1]) && lg_char(c, e, '[') &&
           lg_int(c, e, &q[2]) && lg_char(c, e, ':') && lg_int(c, e, &q[3]) && lg_char(c, e, ']');
}

/* ---- locations ------------------------------------------------------------------------- */

static uint64_t lg_hash(uint64_t a)
{
    a ^= a >> 33;
    a *= 0xff51afd7ed558ccdull;
    a ^= a >> 33;
    return a;
}

static int lg_hash_grow(hs_legacy_parser_t *ps)
{
    size_t ncap = ps->hcap ? ps->hcap * 2 : 1024;
    uint64_t *keys = calloc(ncap, sizeof(*keys));
    uint32_t *ids = calloc(ncap, sizeof(*ids));
    if (!keys || !ids) {
        free(keys);
        free(ids);
        return -ENOMEM;
    }
    for (size_t i = 0; i < ps->hcap; i++) {
        if (!ps->hids[i])
            continue;
        size_t j = lg_hash(ps->hkeys[i]) & (ncap - 1);
        while (ids[j])
            j = (j + 1) & (ncap - 1);
        keys[j] = ps->hkeys[i];
        ids[j] = ps->hids[i];
    }
    free(ps->hkeys);
    free(ps->hids);
    ps->hkeys = keys;
    ps->hids = ids;
    ps->hcap = ncap;
    return 0;
}

/* The slot of address a: holding its id, or the empty slot where it goes. */
static size_t lg_hash_slot(const hs_legacy_parser_t *ps, uint64_t a)
{
    size_t j = lg_hash(a) & (ps->hcap - 1);
    while (ps->hids[j] && ps->hkeys[j] != a)
        j = (j + 1) & (ps->hcap - 1);
    return j;
}

/* The location of address a (already moved onto the call), created on first sight. */
static uint64_t lg_location(hs_legacy_parser_t *ps, uint64_t a)
{
    if ((ps->hused + 1) * 2 > ps->hcap && lg_hash_grow(ps))
        return 0;
    size_t j = lg_hash_slot(ps, a);
    if (ps->hids[j])
        return ps->hids[j];
    if (ps->p->nlocations >= UINT32_MAX - 1)
        return 0;
    uint64_t id = hs_profile_add_location(ps->p, 0, a, NULL, 0);
    if (!id)
        return 0;
    ps->hkeys[j] = a;
    ps->hids[j] = (uint32_t)id;
    ps->hused++;
    return id;
}

/* The next "0xADDR" of a stack line; false at its end or at a bad one (*bad set). */
static bool lg_next_addr(hs_legacy_parser_t *ps, const char **c, const char *e, uint64_t *a,
                         bool *bad)
{
    lg_ws(c, e);
    if (*c >= e)
        return false;
    const char *d = *c + 2;
    *bad = e - *c < 2 || (*c)[0] != '0' || (*c)[1] != 'x' ||
           !lg_hexdigits_cached(ps->hexcache, &d, e, ps->end, a) ||
           (d < e && *d != ' ' && *d != '\t');
    *c = d;
    return !*bad;
}

/* Parses "0xADDR 0xADDR ..." into ps->stack, leaf first, each address minus one. The
 * line is read whole into ps->stack first, so that a bad one leaves no locations behind;
 * then each address there is replaced by its location. */
static int lg_stack(hs_legacy_parser_t *ps, const char *c, const char *e)
{
    uint64_t a;
    bool bad = false;
    ps->nstack = 0;
    while (lg_next_addr(ps, &c, e, &a, &bad)) {
        if (ps->nstack == ps->stack_cap) {
            size_t ncap = ps->stack_cap ? ps->stack_cap * 2 : 64;
            uint64_t *s = realloc(ps->stack, ncap * sizeof(*s));
            if (!s)
                return -ENOMEM;
            ps->stack = s;
            ps->stack_cap = ncap;
        }
        ps->stack[ps->nstack++] = a;
    }
    if (bad) {
        ps->nstack = 0;
        return lg_fail(ps, "bad address in stack (want 0x-prefixed hexadecimal)");
    }
    for (size_t i = 0; i < ps->nstack; i++) {
        uint64_t id = lg_location(ps, ps->stack[i] - 1);
        if (!id)
            return -ENOMEM;
        ps->stack[i] = id;
    }
    return 0;
}

/* ---- values ------------------------------------------------------------------------------ */

/* Float to int64 the way Go truncates in range; clamped outside it, 0 for NaN. */
static int64_t lg_f2i(double f)
{
    if (f != f)
        return 0;
    if (f >= 9.2233720368547748e18)
        return INT64_MAX;
    if (f <= -9.2233720368547758e18)
        return INT64_MIN;
    return (int64_t)f;
}

/* pprof's scaleHeapSample: count and size divided by the probability 1-exp(-avg/rate)
 * that an object of the average size was sampled. */
static void lg_scale_pprof(int64_t rate, int64_t *count, int64_t *size)
{
    if (*count == 0 || *size == 0) {
        *count = *size = 0;
        return;
    }
    if (rate <= 1)
        return;
    double avg = (double)*size / (double)*count;
    double scale = 1 / (1 - exp(-avg / (double)rate));
    *count = lg_f2i((double)*count * scale);
    *size = lg_f2i((double)*size * scale);
}

/* One (count, size) pair of a `heap profile:` record, as pprof's parseHeapSample. */
static int lg_pair_pprof(hs_legacy_parser_t *ps, int64_t count, int64_t size, int64_t *out,
                         int64_t *blocksize)
{
    if (count == 0 && size != 0)
        return lg_fail(ps, "count is 0 but bytes is %lld", (long long)size);
    if (count != 0) {
        *blocksize = (count == -1) ? (size == INT64_MIN ? INT64_MAX : -size) : size / count;
        if (ps->v2)
            lg_scale_pprof(ps->rate, &count, &size);
    }
    out[0] = count;
    out[1] = size;
    return 0;
}

/* jeprof's AdjustSamples (version 2) for one pair, in floating point. */
static void lg_scale_jeprof(int64_t rate, int64_t n, int64_t s, double *fn, double *fs)
{
    *fn = (double)n;
    *fs = (double)s;
    if (rate == 0 || n == 0)
        return;
    double ratio = ((double)s / (double)n) / (double)rate;
    double scale = 1 / (1 - exp(-ratio));
    if (isfinite(scale)) {
        *fn *= scale;
        *fs *= scale;
    }
}

static int lg_emit(hs_legacy_parser_t *ps, const int64_t *vals, int64_t blocksize)
{
    int rc = hs_profile_add_sample(ps->p, ps->stack, ps->nstack, vals);
    if (rc == 0 && ps->bytes_key == 0) /* "bytes", interned once (0 is always "") */
        ps->bytes_key = hs_profile_str(ps->p, "bytes");
    if (rc == 0 && ps->bytes_key < 0)
        rc = -ENOMEM;
    hs_label_t l = {ps->bytes_key, 0, blocksize, 0};
    return rc ? rc : hs_profile_add_label_interned(ps->p, ps->p->nsamples - 1, l);
}

/* A jemalloc "t*: N1: S1 [N2: S2]" record for the stack in ps->stack. Its integer values
 * are truncated here (lg_apportion rounds some up at the end); the unrounded ones go
 * along, since jeprof sums those and truncates only a printed sum. */
static int lg_jemalloc_record(hs_legacy_parser_t *ps, const int64_t q[4])
{
    double f[4], fv[4];
    int64_t v[4];
    size_t k = 0;
    lg_scale_jeprof(ps->rate, q[0], q[1], &f[2], &f[3]);
    lg_scale_jeprof(ps->rate, q[2], q[3], &f[0], &f[1]);
    for (int i = ps->has_alloc ? 0 : 2; i < 4; i++) {
        fv[k] = f[i];
        v[k++] = lg_f2i(f[i]);
    }
    int64_t n = q[0] ? q[0] : q[2], s = q[0] ? q[1] : q[3];
    int64_t bs = n > 0 ? s / n : 0;
    int rc = lg_emit(ps, v, bs);
    return rc ? rc : hs_profile_set_fvalues(ps->p, fv);
}

/* The unrounded value of sample i's type t, and what truncation took from it. */
typedef struct {
    double frac;
    size_t i;
} lg_rem_t;

static int lg_rem_cmp(const void *a, const void *b)
{
    const lg_rem_t *x = a, *y = b;
    if (x->frac != y->frac)
        return x->frac > y->frac ? -1 : 1;
    return x->i < y->i ? -1 : x->i > y->i;
}

/* The integer values of a file unsampled in floating point, apportioned by largest
 * remainder: per sample type, the samples whose truncation lost the most get one more,
 * until the integers add up to the truncated sum of the unrounded values, the total
 * jeprof prints. Each sample stays within one of its unrounded value, so a pprof file
 * written from the profile has jeprof's totals. */
static int lg_apportion(hs_profile_t *p)
{
    lg_rem_t *r = malloc((p->nsamples + 1) * sizeof(*r));
    if (!r)
        return -ENOMEM;
    for (size_t t = 0; t < p->ntypes; t++) {
        double sum = 0;
        bool sane = true;
        for (size_t i = 0; i < p->nsamples; i++) {
            const hs_sample_t *s = &p->samples[i];
            double f = s->fvalues ? s->fvalues[t] : (double)s->values[t];
            sane = sane && f >= 0;
            sum += f;
            r[i].frac = f - (double)s->values[t];
            r[i].i = i;
        }
        /* Negative counts, or sums above 2^53 where a double holds no fractions to give
         * out (and integers could overflow): such absurd files keep their truncations. */
        if (!sane || !(sum < 9007199254740992.0))
            continue;
        int64_t have = 0; /* below sum: no overflow */
        for (size_t i = 0; i < p->nsamples; i++)
            have += p->samples[i].values[t];
        int64_t extra = lg_f2i(sum) - have;
        if (extra <= 0)
            continue;
        qsort(r, p->nsamples, sizeof(*r), lg_rem_cmp);
        for (size_t k = 0; k < p->nsamples && (int64_t)k < extra; k++)
            p->samples[r[k].i].values[t]++;
    }
    free(r);
    return 0;
}

/* "N1: S1 [N2: S2] @ 0x... 0x..." of the `heap profile:` family. */
static int lg_heap_sample(hs_legacy_parser_t *ps, const char *c, const char *e)
{
    int64_t q[4], v[4], bs = 0;
    if (!lg_quad(&c, e, q) || !lg_char(&c, e, '@'))
        return lg_fail(ps, "expected 'N: BYTES [N: BYTES] @ ADDRESSES'");
    int rc = lg_stack(ps, c, e);
    if (rc)
        return rc;
    int64_t *out = v;
    if (ps->has_alloc) {
        if ((rc = lg_pair_pprof(ps, q[2], q[3], out, &bs)))
            return rc;
        out += 2;
    }
    if ((rc = lg_pair_pprof(ps, q[0], q[1], out, &bs)))
        return rc;
    ps->record++;
    return lg_emit(ps, v, bs);
}

/* Appends function name (with its "+0x.." offset cut), file and line to location id. */
static int lg_add_line(hs_legacy_parser_t *ps, uint64_t id, const char *name, size_t nlen,
                       const char *file, size_t flen, int64_t line)
{
    const char *plus = NULL;
    for (size_t i = 0; i + 2 < nlen; i++)
        if (name[i] == '+' && name[i + 1] == '0' && name[i + 2] == 'x')
            plus = name + i;
    if (plus)
        nlen = (size_t)(plus - name);
    size_t elen;
    char *n = hs_str_escape_ctl(name, nlen, &elen), *f = hs_str_escape_ctl(file, flen, &elen);
    uint64_t fid = (n && f) ? hs_profile_add_function(ps->p, n, n, f, 0) : 0;
    free(n);
    free(f);
    if (!fid)
        return -ENOMEM;
    hs_location_t *l = &ps->p->locations[id - 1];
    hs_line_t *lines = realloc(l->lines, (l->nlines + 1) * sizeof(*lines));
    if (!lines)
        return -ENOMEM;
    lines[l->nlines].function_id = fid;
    lines[l->nlines].line = line;
    l->lines = lines;
    l->nlines++;
    return 0;
}

/* Go debug=1 frame comment "# 0xPC name+0xOFF file:line" after a record: the names of
 * the record's locations, innermost inlined frame first. Other comments are skipped. */
static int lg_go_comment(hs_legacy_parser_t *ps, const char *c, const char *e)
{
    uint64_t pc;
    c++; /* '#' */
    lg_ws(&c, e);
    if (!lg_lit(&c, e, "0x") || !lg_hexdigits(&c, e, &pc) || c >= e || (*c != ' ' && *c != '\t'))
        return 0;
    lg_ws(&c, e);
    const char *name = c;
    while (c < e && *c != ' ' && *c != '\t')
        c++;
    size_t nlen = (size_t)(c - name);
    lg_ws(&c, e);
    const char *colon = e;
    while (colon > c && colon[-1] != ':')
        colon--;
    const char *lc = colon;
    int64_t line;
    if (nlen == 0 || colon <= c + 1 || !lg_int(&lc, e, &line) || lc != e || ps->hcap == 0)
        return 0;
    size_t j = lg_hash_slot(ps, pc);
    if (!ps->hids[j])
        return 0;
    uint64_t id = ps->hids[j];
    if (id >= ps->filled_cap) {
        size_t ncap = ps->p->nlocations + 1;
        uint32_t *f = realloc(ps->filled, ncap * sizeof(*f));
        if (!f)
            return -ENOMEM;
        memset(f + ps->filled_cap, 0, (ncap - ps->filled_cap) * sizeof(*f));
        ps->filled = f;
        ps->filled_cap = ncap;
    }
    const hs_location_t *l = &ps->p->locations[id - 1];
    if (l->nlines && ps->filled[id] != ps->record)
        return 0; /* named by an earlier record */
    ps->filled[id] = ps->record;
    return lg_add_line(ps, id, name, nlen, c, (size_t)(colon - 1 - c), line);
}

/* gperftools' GetHeapGrowthStacks (`@ growthz`, brpc `@ growth`) and its fragmentation
 * form: the stacks where the heap grew, read by pprof unscaled as objects/space. */
static bool lg_is_growth(const char *t, size_t tlen)
{
    static const char *const names[] = {"growth", "growthz", "fragmentation", "fragmentationz"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (tlen == strlen(names[i]) && memcmp(t, names[i], tlen) == 0)
            return true;
    return false;
}

/* "heap profile: N: S [N: S] @ TYPE/RATE", as pprof's parseHeapHeader. */
static int lg_heap_header(hs_legacy_parser_t *ps, const char *c, const char *e)
{
    int64_t q[4], rate = 0;
    c += strlen("heap profile:");
    if (!lg_quad(&c, e, q))
        return lg_fail(ps, "bad header counts (want 'heap profile: N: BYTES [N: BYTES]')");
    if (!lg_char(&c, e, '@'))
        return lg_fail(ps, "header has no '@ heap.../RATE' sampling type");
    lg_ws(&c, e);
    const char *t = c;
    while (c < e && ((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_'))
        c++;
    size_t tlen = (size_t)(c - t);
    if (c < e && *c == '/') {
        c++;
        if (c < e && (!lg_int(&c, e, &rate) || rate < 0))
            return lg_fail(ps, "bad sampling rate in header");
    }
    ps->has_alloc = (q[2] != q[0] && q[2] != 0) || (q[3] != q[1] && q[3] != 0);
    if (lg_is_growth(t, tlen)) {
        ps->has_alloc = false; /* pprof: period 1, no scaling, objects/space only */
        ps->rate = 1;
    } else if ((tlen == 7 && memcmp(t, "heap_v2", 7) == 0) ||
               (tlen == 8 && memcmp(t, "heapz_v2", 8) == 0)) {
        ps->v2 = true;
        ps->rate = rate;
    } else if (tlen == 11 && memcmp(t, "heapprofile", 11) == 0) {
        ps->rate = 1;
    } else if (tlen == 4 && memcmp(t, "heap", 4) == 0) {
        ps->v2 = true; /* Go and old tcmalloc write twice the mean sampling interval */
        ps->rate = rate / 2;
    } else {
        return lg_fail(ps, "unsupported heap profile type '%.*s'", (int)tlen, t);
    }
    return 0;
}

/* "heap_v2/RATE", jemalloc's header. */
static int lg_jemalloc_header(hs_legacy_parser_t *ps, const char *c, const char *e)
{
    c += strlen("heap_v2/");
    if (!lg_int(&c, e, &ps->rate) || ps->rate < 0 || c != e)
        return lg_fail(ps, "bad jemalloc header (want 'heap_v2/RATE')");
    ps->jemalloc = true;
    ps->v2 = true;
    return 0;
}

static int lg_types(hs_legacy_parser_t *ps)
{
    hs_profile_t *p = ps->p;
    int rc = 0;
    if (ps->has_alloc) {
        rc = hs_profile_add_sample_type(p, "alloc_objects", "count");
        if (!rc)
            rc = hs_profile_add_sample_type(p, "alloc_space", "bytes");
    }
    /* pprof names the pair without a prefix when the file has no allocation counts;
     * jemalloc's counts are explicitly the current (in-use) ones. */
    bool bare = !ps->has_alloc && !ps->jemalloc;
    if (!rc)
        rc = hs_profile_add_sample_type(p, bare ? "objects" : "inuse_objects", "count");
    if (!rc)
        rc = hs_profile_add_sample_type(p, bare ? "space" : "inuse_space", "bytes");
    p->default_sample_type = hs_profile_str(p, bare ? "space" : "inuse_space");
    p->period_type.type = hs_profile_str(p, "space");
    p->period_type.unit = hs_profile_str(p, "bytes");
    p->period = ps->rate;
    p->drop_frames =
        hs_profile_str(p, ps->jemalloc ? hs_legacy_jeprof_drop_rx : hs_legacy_alloc_drop_rx);
    p->keep_frames = hs_profile_str(p, ps->jemalloc ? "" : hs_legacy_alloc_keep_rx);
    if (rc || p->default_sample_type < 0 || p->period_type.type < 0 || p->period_type.unit < 0 ||
        p->drop_frames < 0 || p->keep_frames < 0)
        return -ENOMEM;
    return 0;
}

/* ---- the two body grammars ------------------------------------------------------------ */

/* ---- jemalloc: its own frames --------------------------------------------------------- */

static bool lg_is_jemalloc_map(const hs_profile_t *p, uint64_t mapping_id)
{
    const hs_mapping_t *m = mapping_id ? hs_profile_mapping(p, mapping_id) : NULL;
    const char *f = m ? hs_profile_get_str(p, m->filename) : "";
    const char *base = strrchr(f, '/');
    return strncmp(base ? base + 1 : f, "libjemalloc", 11) == 0;
}

/* Drops the unused locations and renumbers the rest densely, in order. */
static int lg_compact_locations(hs_profile_t *p)
{
    uint64_t *newid = calloc(p->nlocations + 1, sizeof(*newid));
    if (!newid)
        return -ENOMEM;
    for (size_t i = 0; i < p->nsamples; i++)
        for (size_t k = 0; k < p->samples[i].nlocs; k++)
            newid[p->samples[i].location_ids[k]] = 1;
    size_t n = 0;
    for (size_t i = 0; i < p->nlocations; i++) {
        if (!newid[i + 1]) {
            free(p->locations[i].lines);
            continue;
        }
        p->locations[n] = p->locations[i];
        p->locations[n].id = n + 1;
        newid[i + 1] = ++n;
    }
    p->nlocations = n;
    for (size_t i = 0; i < p->nsamples; i++)
        for (size_t k = 0; k < p->samples[i].nlocs; k++)
            p->samples[i].location_ids[k] = newid[p->samples[i].location_ids[k]];
    free(newid);
    return 0;
}

/* A leaf frame that lg_trim_leaves cuts: one inside libjemalloc for a jemalloc profile
 * (its profiler, then malloc: jeprof cuts everything up to the allocator's entry point);
 * for a Go profile, one without a name: Go's debug=1 text lists the runtime's own leaf
 * frames (runtime.mallocgc, makeslicecopy) in a record's addresses but names none of
 * them, and its protobuf profile leaves them out. */
static bool lg_cut_leaf(const hs_profile_t *p, const hs_location_t *l, bool jemalloc)
{
    return jemalloc ? lg_is_jemalloc_map(p, l->mapping_id) : l->nlines == 0;
}

/* Cuts each stack's leading frames that lg_cut_leaf names; a stack made only of them is
 * kept whole. */
static int lg_trim_leaves(hs_profile_t *p, bool jemalloc)
{
    bool trimmed = false;
    for (size_t i = 0; i < p->nsamples; i++) {
        hs_sample_t *s = &p->samples[i];
        size_t k = 0;
        while (k < s->nlocs && lg_cut_leaf(p, &p->locations[s->location_ids[k] - 1], jemalloc))
            k++;
        if (k == 0 || k == s->nlocs)
            continue;
        memmove(s->location_ids, s->location_ids + k, (s->nlocs - k) * sizeof(uint64_t));
        s->nlocs -= k;
        trimmed = true;
    }
    return trimmed ? lg_compact_locations(p) : 0;
}

/* pprof looks for the sentinels anywhere in a line. */
static bool lg_is_sentinel(const char *c, const char *e)
{
    size_t n = (size_t)(e - c);
    if (!memchr(c, 'M', n)) /* both hold one: most lines are gone in one quick scan */
        return false;
    return memmem(c, n, "MAPPED_LIBRARIES:", 17) || memmem(c, n, "--- Memory map: ---", 19);
}

/* A sample or stack line that did not parse (rc -EINVAL): counted and skipped. */
static int lg_skipped(hs_legacy_parser_t *ps, int rc)
{
    if (rc != -EINVAL)
        return rc;
    if (ps->p->nskipped++ == 0)
        ps->p->skipped_line = ps->lineno;
    return 0;
}

static int lg_maps_section(hs_legacy_parser_t *ps)
{
    const char *c, *e;
    int rc = 0;
    while (rc == 0 && lg_next_line(ps, &c, &e))
        rc = hs_legacy_maps_line(ps, c, e);
    return rc;
}

static int lg_heap_body(hs_legacy_parser_t *ps)
{
    const char *c, *e;
    while (lg_next_line(ps, &c, &e)) {
        int rc = 0;
        if (c == e)
            continue;
        if (lg_is_sentinel(c, e))
            return lg_maps_section(ps);
        if (*c == '#')
            rc = lg_go_comment(ps, c, e);
        else
            rc = lg_skipped(ps, lg_heap_sample(ps, c, e));
        if (rc)
            return rc;
    }
    return 0;
}

/* "t*: ..." or "tN: ...": *all is set for the summed record. */
static bool lg_thread_record(const char **c, const char *e, bool *all, int64_t q[4])
{
    int64_t tid;
    if (!lg_lit(c, e, "t"))
        return false;
    *all = lg_lit(c, e, "*");
    if (!*all && (!lg_int(c, e, &tid) || tid < 0))
        return false;
    return lg_char(c, e, ':') && lg_quad(c, e, q) && *c == e;
}

static int lg_typed_maps(hs_legacy_parser_t *ps, bool typed)
{
    int rc = typed ? 0 : lg_types(ps);
    return rc ? rc : lg_maps_section(ps);
}

static int lg_jemalloc_body(hs_legacy_parser_t *ps)
{
    const char *c, *e;
    bool in_stack = false, typed = false;
    while (lg_next_line(ps, &c, &e)) {
        int rc = 0;
        int64_t q[4];
        bool all;
        if (c == e)
            continue;
        if (lg_is_sentinel(c, e))
            return lg_typed_maps(ps, typed);
        if (*c == '@') {
            if (!typed && (rc = lg_types(ps)))
                return rc;
            typed = true;
            rc = lg_stack(ps, c + 1, e);
            in_stack = rc == 0; /* records under a bad stack line go with it */
            rc = lg_skipped(ps, rc);
        } else if (lg_thread_record(&c, e, &all, q)) {
            if (!in_stack && all)
                ps->has_alloc = ps->has_alloc || q[2] != 0 || q[3] != 0;
            else if (in_stack && all)
                rc = lg_jemalloc_record(ps, q);
        } else {
            rc = lg_skipped(ps, -EINVAL);
        }
        if (rc)
            return rc;
    }
    /* jemalloc always ends its dump with the mappings: without them it was cut short. */
    return lg_fail(ps, "truncated: no MAPPED_LIBRARIES section after the last record");
}

/* ---- entry points ---------------------------------------------------------------------- */

/* The first line that is neither blank nor a "--- heap" style preamble, at *c. */
static void lg_skip_preamble(const uint8_t *data, size_t len, const char **c, const char **e)
{
    const char *s = (const char *)data, *end = s + len;
    while (s < end) {
        const char *nl = memchr(s, '\n', (size_t)(end - s));
        const char *le = nl ? nl : end;
        const char *b = s;
        while (b < le && (*b == ' ' || *b == '\t' || *b == '\r'))
            b++;
        if (b < le && !(le - b >= 3 && memcmp(b, "---", 3) == 0)) {
            *c = b;
            *e = le;
            return;
        }
        s = nl ? nl + 1 : end;
    }
    *c = *e = end;
}

bool hs_legacy_detect(const uint8_t *data, size_t len)
{
    const char *c, *e;
    lg_skip_preamble(data, len, &c, &e);
    return lg_lit(&c, e, "heap profile:") || lg_lit(&c, e, "heap_v2/");
}

static void lg_free(hs_legacy_parser_t *ps)
{
    free(ps->hkeys);
    free(ps->hids);
    free(ps->stack);
    free(ps->filled);
    free(ps->maps);
    free(ps->hexcache);
}

int hs_legacy_parse(const uint8_t *data, size_t len, hs_profile_t **out, char *err, size_t errlen)
{
    hs_legacy_parser_t ps = {0};
    const char *c, *e;
    ps.err = err;
    ps.errlen = errlen;
    ps.pos = (const char *)data;
    ps.end = ps.pos + len;
    ps.p = hs_profile_new();
    ps.hexcache = calloc(1, sizeof(*ps.hexcache));
    if (!ps.p || !ps.hexcache) {
        hs_profile_free(ps.p);
        free(ps.hexcache);
        return -ENOMEM;
    }
    int rc;
    for (;;) {
        if (!lg_next_line(&ps, &c, &e)) {
            rc = lg_fail(&ps, "no heap profile header");
            goto out;
        }
        if (c < e && !(e - c >= 3 && memcmp(c, "---", 3) == 0))
            break;
    }
    if (e - c >= 13 && memcmp(c, "heap profile:", 13) == 0) {
        rc = lg_heap_header(&ps, c, e);
        if (!rc)
            rc = lg_types(&ps);
        if (!rc)
            rc = lg_heap_body(&ps);
    } else if (e - c >= 8 && memcmp(c, "heap_v2/", 8) == 0) {
        rc = lg_jemalloc_header(&ps, c, e);
        if (!rc)
            rc = lg_jemalloc_body(&ps);
    } else {
        rc = lg_fail(&ps, "not a heap profile (want 'heap profile:' or 'heap_v2/')");
    }
    if (!rc)
        rc = hs_legacy_maps_finish(&ps);
    if (!rc && ps.jemalloc)
        rc = lg_apportion(ps.p);
    if (!rc && (ps.jemalloc || ps.filled))
        rc = lg_trim_leaves(ps.p, ps.jemalloc);
    /* Go: runtime.goexit named and pprof's pruning applied here (read_legacy_go.c), so
     * the profile carries no expressions for a second pass. */
    if (!rc && ps.filled)
        rc = hs_legacy_go_finish(ps.p);
    if (!rc && ps.filled)
        rc = lg_compact_locations(ps.p);
    if (!rc && ps.filled)
        ps.p->drop_frames = ps.p->keep_frames = 0;
out:
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s", strerror(ENOMEM));
    if (rc) {
        hs_profile_free(ps.p);
        ps.p = NULL;
    }
    *out = ps.p;
    lg_free(&ps);
    return rc;
}

/*
 * DWARF frames of an address for the symbolizer (symbolize.c): the inlined subroutines
 * and the subprogram that contain it, with their names, call sites and declaration lines.
 *
 * Each compilation unit is indexed on the first address that falls in it: its outermost
 * code scopes (subprograms, inlined subroutines, entry points, lexical, try and catch
 * blocks) with their pc ranges, in DIE order, and those ranges sorted by address. A
 * scope's children are indexed the first time a lookup descends into it, one level at a
 * time, so a dump that needs a few addresses of a big unit reads only the levels they
 * lie in (the exit profile of a C++ program with 23 addresses spent 8.9 of its 28
 * million instructions indexing every function of one unit, and later 4.7 of 15 million
 * indexing the whole subtrees of the functions it needed). A lookup is a binary search
 * for the outermost scope and a walk down through the children, in memory once
 * indexed, where walking the DIEs of the unit cost 0.5 ms per address with 3000
 * functions in one unit. The walk keeps the semantics of a guided descent of the DIE
 * tree (at each level the first scope in DIE order whose ranges hold the pc; a scope
 * without ranges hides its subtree; namespaces are transparent; 64 levels at most), so
 * the frames are those libdw's own scope search gives. Names and call sites of a
 * function scope are read once and kept in the index. An address falls back to
 * dwarf_getscopes only where the index may be incomplete (no memory, or a unit that
 * imports others).
 *
 * Same context as the symbolizer: not thread-safe, never on the allocation path, and any
 * failure (including no memory for an index) is fewer frames, never a crash.
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "model/demangle.h"
#include "base/sort.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* Nesting of scopes followed below a compilation unit (namespaces count). */
#define HS_SYM_MAX_DEPTH 64

enum { HS_SCOPE_BLOCK, HS_SCOPE_FUNC, HS_SCOPE_INLINED };

/* A function scope's names, read once; strings interned. */
typedef struct {
    const char *name, *system_name;
    const char *call_file; /* inlined scopes: the call site, in the caller */
    int64_t start_line;
    int call_line;
} hs_sym_fn_t;

/* Marks for hs_sym_scope_t.kids: children not indexed yet; no memory to index them. */
#define HS_SYM_UNREAD UINT32_MAX
#define HS_SYM_FAILED (UINT32_MAX - 1)

/* One code scope with pc ranges (56 bytes). Its children that are code scopes with
 * ranges (namespaces passed through), in DIE order, are scopes[kids .. kids + nkids),
 * indexed the first time a lookup descends into it. */
typedef struct {
    Dwarf_Die die;
    uint32_t range, nranges; /* its ranges: cu->ranges[range .. range + nranges) */
    uint32_t kids, nkids;    /* kids: HS_SYM_UNREAD or HS_SYM_FAILED before or instead */
    uint32_t depth;          /* chain depth (namespaces count) */
    uint32_t fn : 30;        /* 1 + index of its names in cu->fns once read, 0 before */
    uint32_t kind : 2;       /* HS_SCOPE_* */
} hs_sym_scope_t;

typedef struct {
    uint64_t lo, hi;
} hs_sym_pcr_t;

/* A range of an outermost scope; maxhi is the largest hi of this and every earlier
 * entry, so a backward scan can stop as soon as nothing before reaches the pc. */
typedef struct {
    uint64_t lo, hi, maxhi;
    uint32_t scope;
} hs_sym_top_t;

struct hs_sym_cu {
    Dwfl_Module *mod;
    Dwarf_Off off;
    bool ok;      /* false: no memory while indexing, use the fallback */
    bool imports; /* it imports units (DWZ), which the index does not follow: so may miss */
    hs_sym_scope_t *scopes;
    uint32_t nscopes, scopecap;
    hs_sym_pcr_t *ranges;
    uint32_t nranges, rangecap;
    hs_sym_top_t *top;
    uint32_t ntop;
    uint32_t nouter; /* the outermost scopes: scopes[0 .. nouter) */
    hs_sym_fn_t *fns;
    uint32_t nfns, fncap;
};

/* ----------------------------------------------------------- building ---- */

static bool sym_is_code_scope(int tag)
{
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_lexical_block || tag == DW_TAG_entry_point || tag == DW_TAG_try_block ||
           tag == DW_TAG_catch_block;
}

static bool sym_is_function(Dwarf_Die *die)
{
    int tag = dwarf_tag(die);
    return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine ||
           tag == DW_TAG_entry_point;
}

/* Doubles *cap (from first) until it holds need elements of size; false on no memory. */
static bool sym_grow(void **p, uint32_t *cap, uint32_t need, size_t size, uint32_t first)
{
    if (need <= *cap)
        return true;
    uint64_t c = *cap ? *cap : first;
    while (c < need)
        c *= 2;
    if (c > UINT32_MAX)
        return false;
    void *t = realloc(*p, (size_t)c * size);
    if (t == NULL)
        return false;
    *p = t;
    *cap = (uint32_t)c;
    return true;
}

/* Appends die's pc ranges to c->ranges as dwarf_haspc reads them (those before an
 * error count, empty ones never hold a pc); returns how many, -1 on no memory. */
static int64_t sym_cu_ranges(hs_sym_cu_t *c, Dwarf_Die *die)
{
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    uint32_t first = c->nranges;
    /* dwarf_ranges finds a non-unit DIE's ranges in DW_AT_high_pc (with DW_AT_low_pc) or
     * DW_AT_ranges, read from the DIE itself; dwarf_hasattr asks the abbreviation alone,
     * where dwarf_ranges' misses skip every attribute value: declarations and abstract
     * instances are passed over cheaply. */
    if (!dwarf_hasattr(die, DW_AT_high_pc) && !dwarf_hasattr(die, DW_AT_ranges))
        return 0;
    while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
        if (lo >= hi)
            continue;
        if (!sym_grow((void **)&c->ranges, &c->rangecap, c->nranges + 1, sizeof(*c->ranges), 4))
            return -1;
        c->ranges[c->nranges++] = (hs_sym_pcr_t){lo, hi};
    }
    return c->nranges - first;
}

/* Adds the code scope die (at chain depth depth), its children unread; a scope without
 * ranges is skipped with its subtree, as a descent by pc never enters it. */
static bool sym_cu_add(hs_sym_cu_t *c, Dwarf_Die *die, int tag, int depth)
{
    uint32_t first = c->nranges, i = c->nscopes;
    int64_t n = sym_cu_ranges(c, die);
    if (n <= 0)
        return n == 0;
    if (!sym_grow((void **)&c->scopes, &c->scopecap, i + 1, sizeof(*c->scopes), 4))
        return false;
    hs_sym_scope_t *sc = &c->scopes[c->nscopes++];
    memset(sc, 0, sizeof(*sc));
    sc->die = *die;
    sc->range = first;
    sc->nranges = (uint32_t)n;
    sc->kids = HS_SYM_UNREAD;
    sc->depth = (uint32_t)depth;
    sc->kind = tag == DW_TAG_inlined_subroutine ? HS_SCOPE_INLINED
               : sym_is_function(die)           ? HS_SCOPE_FUNC
                                                : HS_SCOPE_BLOCK;
    return true;
}

/* Collects the code scopes right below parent (itself at chain depth depth - 1), not
 * their children: one level of the guided descent, which namespaces pass through. */
static bool sym_cu_collect(hs_sym_cu_t *c, Dwarf_Die *parent, int depth)
{
    Dwarf_Die child;
    if (depth >= HS_SYM_MAX_DEPTH || dwarf_child(parent, &child) != 0)
        return true;
    do {
        int tag = dwarf_tag(&child);
        if (sym_is_code_scope(tag)) {
            if (!sym_cu_add(c, &child, tag, depth))
                return false;
        } else if (tag == DW_TAG_namespace || tag == DW_TAG_module) {
            if (!sym_cu_collect(c, &child, depth + 1))
                return false;
        } else if (tag == DW_TAG_imported_unit) {
            c->imports = true;
        }
    } while (dwarf_siblingof(&child, &child) == 0);
    return true;
}

static int sym_top_cmp(const void *a, const void *b)
{
    const hs_sym_top_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->scope < y->scope ? -1 : x->scope > y->scope;
}

/* Sorts the ranges of the outermost scopes (all the scopes collected so far, in DIE
 * order) by address. */
static bool sym_cu_top(hs_sym_cu_t *c)
{
    uint32_t n = 0;
    c->nouter = c->nscopes;
    for (uint32_t i = 0; i < c->nscopes; i++)
        n += c->scopes[i].nranges;
    if ((c->top = malloc((n ? n : 1) * sizeof(*c->top))) == NULL)
        return false;
    for (uint32_t i = 0; i < c->nscopes; i++) {
        const hs_sym_scope_t *sc = &c->scopes[i];
        for (uint32_t k = 0; k < sc->nranges; k++) {
            const hs_sym_pcr_t *r = &c->ranges[sc->range + k];
            c->top[c->ntop++] = (hs_sym_top_t){.lo = r->lo, .hi = r->hi, .scope = i};
        }
    }
    hs_sort(c->top, c->ntop, sizeof(*c->top), sym_top_cmp);
    for (uint32_t i = 0; i < c->ntop; i++) {
        uint64_t prev = i ? c->top[i - 1].maxhi : 0;
        c->top[i].maxhi = c->top[i].hi > prev ? c->top[i].hi : prev;
    }
    return true;
}

/* Gives back the unused tail of an array grown by doubling (most units of a C library
 * hold one or two functions, so the slack would outweigh the index). */
static void *sym_shrink(void *p, size_t n, size_t size)
{
    if (n == 0) {
        free(p);
        return NULL;
    }
    void *t = realloc(p, n * size);
    return t != NULL ? t : p;
}

/* Indexes the unit cudie; a unit that ran out of memory is kept with ok false. */
static hs_sym_cu_t *sym_cu_build(Dwfl_Module *mod, Dwarf_Die *cudie, Dwarf_Off off)
{
    hs_sym_cu_t *c = calloc(1, sizeof(*c));
    if (c == NULL)
        return NULL;
    c->mod = mod;
    c->off = off;
    c->ok = sym_cu_collect(c, cudie, 1) && sym_cu_top(c);
    c->scopes = sym_shrink(c->scopes, c->nscopes, sizeof(*c->scopes));
    c->ranges = sym_shrink(c->ranges, c->nranges, sizeof(*c->ranges));
    c->scopecap = c->nscopes;
    c->rangecap = c->nranges;
    if (!c->ok) {
        free(c->scopes);
        free(c->ranges);
        free(c->top);
        c->scopes = NULL;
        c->ranges = NULL;
        c->top = NULL;
        c->nscopes = c->nranges = c->ntop = c->nouter = 0;
    }
    return c;
}

/* ------------------------------------------------------------- units ---- */

static size_t sym_cu_hash(Dwfl_Module *mod, Dwarf_Off off)
{
    uint64_t h = ((uint64_t)(uintptr_t)mod >> 4) ^ (off * 0x9e3779b97f4a7c15ull);
    return (size_t)((h * 0xff51afd7ed558ccdull) >> 20);
}

static bool sym_cus_grow(hs_symbolizer_t *s)
{
    size_t cap = s->cucap ? s->cucap * 2 : 64;
    hs_sym_cu_t **t = calloc(cap, sizeof(*t));
    if (t == NULL)
        return false;
    for (size_t i = 0; i < s->cucap; i++) {
        if (s->cus[i] == NULL)
            continue;
        size_t h = sym_cu_hash(s->cus[i]->mod, s->cus[i]->off) & (cap - 1);
        while (t[h] != NULL)
            h = (h + 1) & (cap - 1);
        t[h] = s->cus[i];
    }
    free(s->cus);
    s->cus = t;
    s->cucap = cap;
    return true;
}

/* The index of the unit cudie of mod, built on first use; NULL when out of memory. */
static hs_sym_cu_t *sym_cu_get(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Die *cudie)
{
    Dwarf_Off off = dwarf_dieoffset(cudie);
    hs_sym_cu_t *c = s->lastcu;
    if (c != NULL && c->mod == mod && c->off == off)
        return c;
    if (2 * (s->ncus + 1) > s->cucap && !sym_cus_grow(s))
        return NULL;
    size_t h = sym_cu_hash(mod, off) & (s->cucap - 1);
    for (; (c = s->cus[h]) != NULL; h = (h + 1) & (s->cucap - 1)) {
        if (c->mod == mod && c->off == off)
            return s->lastcu = c;
    }
    if ((c = sym_cu_build(mod, cudie, off)) == NULL)
        return NULL;
    s->cus[h] = c;
    s->ncus++;
    return s->lastcu = c;
}

void hs_sym_dwarf_free(hs_symbolizer_t *s)
{
    for (size_t i = 0; i < s->cucap; i++) {
        hs_sym_cu_t *c = s->cus[i];
        if (c == NULL)
            continue;
        free(c->scopes);
        free(c->ranges);
        free(c->top);
        free(c->fns);
        free(c);
    }
    free(s->cus);
    s->cus = NULL;
    s->ncus = s->cucap = 0;
    s->lastcu = NULL;
    hs_sym_units_free(s);
}

/* ------------------------------------------------------------ lookups ---- */

static bool sym_scope_has(const hs_sym_cu_t *c, const hs_sym_scope_t *sc, uint64_t pc)
{
    const hs_sym_pcr_t *r = &c->ranges[sc->range];
    for (uint32_t k = 0; k < sc->nranges; k++) {
        if (pc >= r[k].lo && pc < r[k].hi)
            return true;
    }
    return false;
}

/* The first outermost scope in DIE order whose ranges hold pc, -1 if none: a binary
 * search, then a step back over the (rare) earlier ranges that still reach pc. */
static int64_t sym_cu_find_top(const hs_sym_cu_t *c, uint64_t pc)
{
    size_t lo = 0, hi = c->ntop;
    int64_t best = -1;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (c->top[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i > 0 && c->top[i - 1].maxhi > pc; i--) {
        const hs_sym_top_t *t = &c->top[i - 1];
        if (pc < t->hi && (best < 0 || t->scope < (uint64_t)best))
            best = t->scope;
    }
    return best;
}

/* Indexes the children of scope i on first use; false when there was no memory for
 * them (then never retried: the lookup falls back to libdw). */
static bool sym_cu_kids(hs_sym_cu_t *c, uint32_t i)
{
    if (c->scopes[i].kids == HS_SYM_UNREAD) {
        uint32_t start = c->nscopes, nr = c->nranges;
        Dwarf_Die die = c->scopes[i].die;
        if (sym_cu_collect(c, &die, (int)c->scopes[i].depth + 1)) {
            c->scopes[i].kids = start; /* scopes may have moved */
            c->scopes[i].nkids = c->nscopes - start;
        } else {
            c->nscopes = start; /* the part collected is dropped */
            c->nranges = nr;
            c->scopes[i].kids = HS_SYM_FAILED;
        }
    }
    return c->scopes[i].kids != HS_SYM_FAILED;
}

/* The scopes holding pc, outermost first, into chain; returns the count, -1 when a
 * level could not be indexed. At each level the first child in DIE order that holds pc
 * is taken, as a descent of the DIEs would; only the levels a lookup passes through are
 * ever indexed (a function's whole subtree was: 4.7M of the 15M instructions of
 * bench/cppmap's exit dump, most of them skipping DIEs no address lay in). */
static int sym_cu_chain(hs_sym_cu_t *c, uint64_t pc, uint32_t *chain)
{
    int64_t t = sym_cu_find_top(c, pc);
    if (t < 0)
        return 0;
    int n = 0;
    uint32_t i = (uint32_t)t;
    chain[n++] = i;
    while (n < HS_SYM_MAX_DEPTH) {
        if (!sym_cu_kids(c, i))
            return -1;
        uint32_t k = c->scopes[i].kids, end = k + c->scopes[i].nkids;
        while (k < end && !sym_scope_has(c, &c->scopes[k], pc))
            k++;
        if (k == end)
            break;
        chain[n++] = i = k;
    }
    return n;
}

/* ------------------------------------------------------------- frames ---- */

/* Names of a subprogram or inlined-subroutine DIE, following abstract origin and
 * specification. system_name is the linkage name when there is one; name is its
 * demangled form (C++, Rust legacy and v0: DW_AT_name alone would say "hold_site" where
 * the user reads "rjemu::hold_site"), or DW_AT_name for a linkage name that is not
 * mangled (C's asm aliases such as glibc's __GI___clock_gettime are linkage names a user
 * never wrote). A mangled name that does not demangle here stays whole, for the CLI's
 * readers to try again with a larger limit (demangle.h). */
static bool sym_die_names(hs_symbolizer_t *s, Dwarf_Die *die, hs_symbol_t *f)
{
    Dwarf_Attribute a;
    const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (link == NULL)
        link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    const char *plain = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a));
    if (link != NULL) {
        hs_sym_set_names(s, f, link);
        if (plain != NULL && !hs_demangle_is_mangled(link))
            f->name = hs_sym_intern(s, plain);
        return f->name != NULL;
    }
    if (plain == NULL)
        return false;
    f->name = f->system_name = hs_sym_intern(s, plain);
    return f->name != NULL;
}

/* The source file a DW_AT_call_file index names in the CU of die. */
static const char *sym_call_file(hs_symbolizer_t *s, Dwarf_Die *die, Dwarf_Word idx)
{
    Dwarf_Die cu;
    Dwarf_Files *files = NULL;
    Dwarf_Attribute a;
    size_t nfiles = 0;
    if (dwarf_diecu(die, &cu, NULL, NULL) == NULL)
        return NULL;
    if (dwarf_getsrcfiles(&cu, &files, &nfiles) != 0 || idx >= nfiles)
        return NULL;
    const char *dir = dwarf_formstring(dwarf_attr(&cu, DW_AT_comp_dir, &a));
    return hs_sym_file_path(s, dir, dwarf_filesrc(files, idx, NULL, NULL));
}

/* Reads the names, declaration line and (inlined instances) call site of die. */
static void sym_fn_read(hs_symbolizer_t *s, Dwarf_Die *die, hs_sym_fn_t *fn)
{
    hs_symbol_t f;
    Dwarf_Attribute a;
    Dwarf_Word w = 0;
    int decl = 0;
    memset(&f, 0, sizeof(f));
    memset(fn, 0, sizeof(*fn));
    if (sym_die_names(s, die, &f)) {
        fn->name = f.name;
        fn->system_name = f.system_name;
    }
    fn->start_line = dwarf_decl_line(die, &decl) == 0 ? decl : 0;
    if (dwarf_tag(die) != DW_TAG_inlined_subroutine)
        return;
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_file, &a), &w) == 0)
        fn->call_file = sym_call_file(s, die, w);
    if (dwarf_formudata(dwarf_attr(die, DW_AT_call_line, &a), &w) == 0)
        fn->call_line = (int)w;
}

/* The names of function scope sc, read on first use and kept in c->fns (in *tmp when
 * that cannot grow). */
static const hs_sym_fn_t *sym_scope_fn(hs_symbolizer_t *s, hs_sym_cu_t *c, hs_sym_scope_t *sc,
                                       hs_sym_fn_t *tmp)
{
    if (sc->fn != 0)
        return &c->fns[sc->fn - 1];
    if (c->nfns + 1 >= (1u << 30) ||
        !sym_grow((void **)&c->fns, &c->fncap, c->nfns + 1, sizeof(*c->fns), 4)) {
        sym_fn_read(s, &sc->die, tmp);
        return tmp;
    }
    sym_fn_read(s, &sc->die, &c->fns[c->nfns]);
    sc->fn = ++c->nfns;
    return &c->fns[sc->fn - 1];
}

/* The frame of function fn at *file:*line into out; for an inlined fn, *file and *line
 * become its call site, the position in the next (outer) frame. */
static void sym_emit(const hs_sym_fn_t *fn, bool inlined, const char **file, int *line,
                     hs_symbol_t *out)
{
    *out = (hs_symbol_t){.name = fn->name,
                         .system_name = fn->system_name,
                         .file = *file,
                         .line = *line,
                         .start_line = fn->start_line};
    if (inlined) {
        *file = fn->call_file;
        *line = fn->call_line;
    }
}

/* libdw's own scope search, for an address the index places in no function (code the
 * unit does not describe, or an index that ran out of memory): the scopes holding the
 * innermost one, innermost first. */
static size_t sym_fallback_frames(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr,
                                  const char *file, int line, hs_symbol_t *out, size_t max)
{
    Dwarf_Addr bias = 0;
    Dwarf_Die cu, *scopes = NULL, inner;
    size_t n = 0;
    int ns =
        hs_sym_unit_die(s, mod, addr, &cu, &bias) ? dwarf_getscopes(&cu, addr - bias, &scopes) : 0;
    if (ns <= 0)
        goto out;
    inner = scopes[0];
    free(scopes);
    scopes = NULL;
    ns = dwarf_getscopes_die(&inner, &scopes);
    for (int i = 0; i < ns && n < max; i++) {
        if (!sym_is_function(&scopes[i]))
            continue;
        hs_sym_fn_t fn;
        bool inlined = dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine;
        sym_fn_read(s, &scopes[i], &fn);
        sym_emit(&fn, inlined, &file, &line, &out[n++]);
        if (!inlined)
            break;
    }
out:
    free(scopes);
    return n;
}

size_t hs_sym_dwarf_frames(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr, const char *file,
                           int line, hs_symbol_t *out, size_t max)
{
    uint32_t chain[HS_SYM_MAX_DEPTH];
    hs_sym_fn_t tmp;
    Dwarf_Addr bias = 0;
    Dwarf_Die cudie;
    if (!hs_sym_unit_die(s, mod, addr, &cudie, &bias))
        return 0;
    hs_sym_cu_t *c = sym_cu_get(s, mod, &cudie);
    int nchain = c != NULL && c->ok ? sym_cu_chain(c, addr - bias, chain) : 0;
    bool gap = c == NULL || !c->ok || c->imports || nchain < 0;
    size_t n = 0;
    for (int i = nchain - 1; i >= 0 && n < max; i--) {
        hs_sym_scope_t *sc = &c->scopes[chain[i]];
        if (sc->kind == HS_SCOPE_BLOCK)
            continue;
        sym_emit(sym_scope_fn(s, c, sc, &tmp), sc->kind == HS_SCOPE_INLINED, &file, &line,
                 &out[n++]);
        if (sc->kind != HS_SCOPE_INLINED)
            break;
    }
    /* A complete index places every address libdw's search would (test_symbolize checks
     * 4000): the search, a walk of the whole unit, is for the index's gaps alone. It cost
     * 1.3M instructions in bench/cppmap's exit dump, for _start (the outermost frame of
     * most stacks), which no unit describes, to find nothing. */
    if (n == 0 && gap) {
        n = sym_fallback_frames(s, mod, addr, file, line, out, max);
        s->dwarf_fallbacks += n > 0;
    }
    return n;
}

/*
 * Which of the addresses announced for a separate compressed debug file its DWARF can name
 * a function at (symbolize_zdebug.c inflates .debug_info, .debug_abbrev and .debug_line
 * only as far as the units of those addresses). An address that no function symbol of the
 * debug file holds is left out: assembly outside any function, such as ld.so's _start and
 * _dl_start_user, whose unit (rtld.c's, near the end of ld.so's .debug_info) was the only
 * reason to inflate 588 KB of units for a frame that comes out unnamed anyway: DWARF names
 * a function where the compiler emitted one, and a debug file's symbol table (a copy of the
 * whole .symtab) holds every such function with its size. A function symbol of size 0 is
 * taken to reach to the next function symbol. Left-out addresses are looked up as before;
 * only when their unit lies past what the others need do they lack lines (libdw finds no
 * unit there), which such code rarely has (none at ld.so's _start). A file without function
 * symbols keeps every address. Same context as the symbolizer.
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "base/sort.h"

#include <gelf.h>
#include <stdlib.h>

typedef struct {
    uint64_t lo, size;
} zw_fn_t;

/* Unsized function symbols followed per address at most: past that many, the rest of the
 * addresses that follow one are kept (keeping one only costs inflating more). */
#define ZW_MAX_AFTER 64

static int zw_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The function symbols of dbg's .symtab (defined ones, ifuncs too); NULL when none or
 * no memory. */
static zw_fn_t *zw_functions(Elf *dbg, size_t *nfn)
{
    zw_fn_t *fn = NULL;
    size_t n = 0, cap = 0;
    Elf_Scn *scn = NULL;
    GElf_Shdr sh;
    while ((scn = elf_nextscn(dbg, scn)) != NULL) {
        Elf_Data *d;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB || !sh.sh_entsize ||
            !(d = elf_getdata(scn, NULL)))
            continue;
        for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
            GElf_Sym sym;
            int t;
            if (!gelf_getsym(d, (int)k, &sym) || sym.st_shndx == SHN_UNDEF ||
                ((t = GELF_ST_TYPE(sym.st_info)) != STT_FUNC && t != STT_GNU_IFUNC))
                continue;
            if (n == cap) {
                zw_fn_t *g = realloc(fn, (cap = cap ? 2 * cap : 1024) * sizeof(*g));
                if (!g) {
                    free(fn);
                    return NULL;
                }
                fn = g;
            }
            fn[n++] = (zw_fn_t){sym.st_value, sym.st_size};
        }
    }
    *nfn = n;
    return fn;
}

/* The first of want[0..n) (sorted) at or above lo. */
static size_t zw_first_at(const uint64_t *want, size_t n, uint64_t lo)
{
    size_t a = 0, b = n;
    while (a < b) {
        size_t mid = a + (b - a) / 2;
        if (want[mid] < lo)
            a = mid + 1;
        else
            b = mid;
    }
    return a;
}

/* For the addresses no sized function holds (in[i] false): sets in[i] where the nearest
 * function symbol of size 0 at or below want[i] has no sized one starting between them
 * (a symbol of size 0 is taken to reach to the next one). */
static void zw_unsized(const zw_fn_t *fn, size_t nfn, const uint64_t *want, size_t n, bool *in)
{
    uint64_t after[ZW_MAX_AFTER];
    size_t idx[ZW_MAX_AFTER], m = 0;
    for (size_t i = 0; i < n; i++) {
        if (in[i])
            continue;
        uint64_t best = UINT64_MAX;
        for (size_t k = 0; k < nfn; k++) /* the nearest unsized symbol at or below */
            if (fn[k].size == 0 && fn[k].lo <= want[i] && (best == UINT64_MAX || fn[k].lo > best))
                best = fn[k].lo;
        if (best == UINT64_MAX)
            continue;
        if (m == ZW_MAX_AFTER) {
            in[i] = true;
            continue;
        }
        after[m] = best;
        idx[m++] = i;
    }
    for (size_t j = 0; j < m; j++) { /* no sized symbol starts between it and the address */
        bool reached = true;
        for (size_t k = 0; k < nfn && reached; k++)
            reached = !(fn[k].size && fn[k].lo > after[j] && fn[k].lo <= want[idx[j]]);
        in[idx[j]] = reached;
    }
}

size_t hs_sym_zdebug_named(Elf *dbg, uint64_t *want, size_t n)
{
    size_t nfn = 0, kept = 0, nunsized = 0;
    zw_fn_t *fn = n ? zw_functions(dbg, &nfn) : NULL;
    bool *in = fn ? calloc(n, sizeof(*in)) : NULL;
    if (!in) {
        free(fn);
        return n;
    }
    hs_sort(want, n, sizeof(*want), zw_cmp_u64);
    for (size_t k = 0; k < nfn; k++) {
        nunsized += fn[k].size == 0;
        for (size_t i = zw_first_at(want, n, fn[k].lo); i < n && want[i] - fn[k].lo < fn[k].size;
             i++)
            in[i] = true;
    }
    if (nunsized)
        zw_unsized(fn, nfn, want, n, in);
    for (size_t i = 0; i < n; i++)
        if (in[i])
            want[kept++] = want[i];
    if (kept == 0) /* none left: all kept, as before (an empty list would inflate all) */
        kept = n;
    free(in);
    free(fn);
    return kept;
}

/*
 * Which compilation unit of a module holds an address, and the line table row of that
 * address, for the symbolizer (symbolize.c, symbolize_dwarf.c).
 *
 * libdw (0.188) finds the unit through .debug_aranges alone, and fails for the whole
 * module when that table does not read: a set holding a pair (0, 0) before its end (an
 * empty function in its own section, dropped by --gc-sections: jemalloc's arena.c,
 * prof.c and rtree.c in the Rust programs that link jemalloc-sys) ends the set early
 * for libdw, which then reads the rest of the set as the next header and gives up with
 * "invalid DWARF"; a module without .debug_aranges (clang emits none) gets no unit
 * either. Every address of such a module then had no line and no DWARF frame. For those
 * modules the units are indexed here from their own DIEs' ranges (DW_AT_low_pc and
 * DW_AT_high_pc, or DW_AT_ranges in .debug_ranges or .debug_rnglists), once per module;
 * the other modules keep libdw's lookup untouched.
 *
 * Same context as the symbolizer: not thread-safe, never on the allocation path; no
 * memory is fewer lines, never a crash.
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "base/sort.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdlib.h>
#include <string.h>

/* A range of a unit; maxhi is the largest hi of this and every earlier entry. */
typedef struct {
    uint64_t lo, hi, maxhi;
    Dwarf_Off die;
} hs_sym_urange_t;

struct hs_sym_units {
    Dwfl_Module *mod;
    Dwarf *dw;          /* NULL: the module has no DWARF */
    Dwarf_Addr bias;    /* module address = DWARF address + bias */
    bool own;           /* libdw cannot find units: use ranges below */
    hs_sym_urange_t *r; /* by lo */
    size_t n, cap;
};

static int sym_urange_cmp(const void *a, const void *b)
{
    const hs_sym_urange_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    return x->die < y->die ? -1 : x->die > y->die;
}

static bool sym_units_push(hs_sym_units_t *u, uint64_t lo, uint64_t hi, Dwarf_Off die)
{
    if (u->n == u->cap) {
        size_t cap = u->cap ? u->cap * 2 : 64;
        hs_sym_urange_t *t = realloc(u->r, cap * sizeof(*t));
        if (t == NULL)
            return false;
        u->r = t;
        u->cap = cap;
    }
    u->r[u->n++] = (hs_sym_urange_t){.lo = lo, .hi = hi, .die = die};
    return true;
}

/* Indexes the ranges of every compile (or skeleton) unit of u->dw; on no memory the
 * ranges read so far stay, so some addresses find no unit. */
static void sym_units_build(hs_sym_units_t *u)
{
    Dwarf_CU *cu = NULL;
    Dwarf_Die cudie;
    Dwarf_Half version;
    uint8_t type;
    while (dwarf_get_units(u->dw, cu, &cu, &version, &type, &cudie, NULL) == 0) {
        if (type != DW_UT_compile && type != DW_UT_skeleton)
            continue;
        Dwarf_Addr base, lo, hi;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0) {
            if (lo < hi && !sym_units_push(u, lo, hi, dwarf_dieoffset(&cudie)))
                goto out;
        }
    }
out:
    hs_sort(u->r, u->n, sizeof(*u->r), sym_urange_cmp);
    for (size_t i = 0; i < u->n; i++) {
        uint64_t prev = i ? u->r[i - 1].maxhi : 0;
        u->r[i].maxhi = u->r[i].hi > prev ? u->r[i].hi : prev;
    }
}

/* The record of mod, made on first use; NULL when out of memory. */
static hs_sym_units_t *sym_units_get(hs_symbolizer_t *s, Dwfl_Module *mod)
{
    for (size_t i = 0; i < s->nunits; i++) {
        if (s->units[i]->mod == mod)
            return s->units[i];
    }
    if (s->nunits == s->unitcap) {
        size_t cap = s->unitcap ? s->unitcap * 2 : 8;
        hs_sym_units_t **t = realloc(s->units, cap * sizeof(*t));
        if (t == NULL)
            return NULL;
        s->units = t;
        s->unitcap = cap;
    }
    hs_sym_units_t *u = calloc(1, sizeof(*u));
    if (u == NULL)
        return NULL;
    u->mod = mod;
    u->dw = dwfl_module_getdwarf(mod, &u->bias);
    Dwarf_Aranges *ar = NULL;
    size_t nar = 0;
    if (u->dw != NULL && (dwarf_getaranges(u->dw, &ar, &nar) != 0 || nar == 0)) {
        u->own = true;
        sym_units_build(u);
    }
    s->units[s->nunits++] = u;
    return u;
}

/* The unit whose ranges hold pc (a DWARF address), by the index of u. */
static bool sym_units_find(hs_sym_units_t *u, uint64_t pc, Dwarf_Die *cudie)
{
    size_t lo = 0, hi = u->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (u->r[mid].lo <= pc)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i > 0 && u->r[i - 1].maxhi > pc; i--) {
        if (pc < u->r[i - 1].hi)
            return dwarf_offdie(u->dw, u->r[i - 1].die, cudie) != NULL;
    }
    return false;
}

bool hs_sym_unit_die(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *cudie,
                     Dwarf_Addr *bias)
{
    hs_sym_units_t *u = sym_units_get(s, mod);
    if (u == NULL || !u->own) {
        Dwarf_Die *d = dwfl_module_addrdie(mod, addr, bias);
        if (d != NULL)
            *cudie = *d;
        return d != NULL;
    }
    *bias = u->bias;
    return addr >= u->bias && sym_units_find(u, addr - u->bias, cudie);
}

void hs_sym_unit_line(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr, const char **file,
                      int *line)
{
    hs_sym_units_t *u = sym_units_get(s, mod);
    Dwarf_Attribute a;
    Dwarf_Die cudie;
    Dwarf_Addr bias = 0;
    *file = NULL;
    *line = 0;
    if (u == NULL || !u->own) {
        Dwfl_Line *l = dwfl_module_getsrc(mod, addr);
        if (l != NULL)
            *file = hs_sym_file_path(s, dwfl_line_comp_dir(l),
                                     dwfl_lineinfo(l, NULL, line, NULL, NULL, NULL));
        return;
    }
    if (!hs_sym_unit_die(s, mod, addr, &cudie, &bias))
        return;
    Dwarf_Line *l = dwarf_getsrc_die(&cudie, addr - bias);
    if (l == NULL || dwarf_lineno(l, line) != 0) {
        *line = 0;
        return;
    }
    const char *dir = dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &a));
    *file = hs_sym_file_path(s, dir, dwarf_linesrc(l, NULL, NULL));
}

size_t hs_sym_units_own(const hs_symbolizer_t *s)
{
    size_t n = 0;
    for (size_t i = 0; i < s->nunits; i++)
        n += s->units[i]->own;
    return n;
}

void hs_sym_units_free(hs_symbolizer_t *s)
{
    for (size_t i = 0; i < s->nunits; i++) {
        free(s->units[i]->r);
        free(s->units[i]);
    }
    free(s->units);
    s->units = NULL;
    s->nunits = s->unitcap = 0;
}

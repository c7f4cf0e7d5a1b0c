/*
 * The symbolizer's insides, shared by its files: symbolize.c (strings, line tables, the
 * address cache, modules and the API), symbolize_symtab.c (symbol tables), symbolize_batch.c (a
 * symbol table's names for many addresses in one pass),
 * symbolize_dwarf.c (DWARF frames through a per-compilation-unit index of code scopes),
 * symbolize_units.c (the unit and line of an address), symbolize_debug.c (finding separate debug
 * files) and symbolize_zdebug.c (compressed debug files inflated as far as needed). Nothing outside
 * them (and their unit test) includes this; the rest of heapsift uses symbolize.h. Same context as
 * the symbolizer: not thread-safe, never on the allocation path.
 */
#ifndef HS_SYMBOLIZE_INT_H
#define HS_SYMBOLIZE_INT_H

#include "symbolize.h"

#include <elfutils/libdwfl.h>

#include "base/dwload.h" /* libdw through dlopen: after the elfutils headers */

/* One interned string; demangled is filled lazily for mangled names (the string itself
 * when it does not demangle). */
typedef struct {
    const char *str;
    const char *demangled;
    uint64_t hash;
} hs_sym_str_t;

/* A block of the string arena; strings never move, so pointers stay valid. */
typedef struct hs_sym_chunk {
    struct hs_sym_chunk *next;
    size_t used, cap;
    char data[];
} hs_sym_chunk_t;

/* addr -> frames[first .. first+n); key 0 means empty (addr+1 is stored). */
typedef struct {
    uint64_t key;
    uint32_t first, n;
} hs_sym_cache_t;

typedef struct {
    const char *path; /* interned */
    uint64_t bias;
} hs_sym_file_t;

/* A function symbol (symbolize_symtab.c); name points into libelf's string table, alive
 * as long as the Dwfl, and is read on the first lookup that needs it. */
typedef struct {
    uint64_t lo, size; /* size: st_size, or up to the end of its section when 0 */
    const char *name;  /* NULL until named (or when it has none) */
    uint32_t idx;      /* symbol index in the module */
    int rank;          /* lower is preferred among aliases at one address */
    bool sized, named;
} hs_sym_func_t;

/* Function symbols by address, then rank, then symbol index. The radix sort expects
 * f in symbol index order with sym_rank0's ranks, and returns false (f untouched) when
 * it cannot sort them; qsort with the comparison always can. */
int hs_sym_func_cmp(const void *a, const void *b);
bool hs_sym_funcs_radix(hs_sym_func_t *f, size_t n);

/* A module's one symbol table read directly (symbolize_symtab.c): the table libdwfl
 * numbers its symbols by, in an ELF whose symbols get the file's bias. */
typedef struct {
    Elf *elf;
    Elf_Data *data;
    const Elf64_Sym *tab; /* data's symbols in memory, when they are 64-bit ones */
    Dwarf_Addr bias;
    size_t n;
} hs_sym_raw_t;

/* A module's function symbols sorted by address, then rank, built on the lookup after
 * the first few (each of those scans the raw table for its one address). */
typedef struct {
    Dwfl_Module *mod;
    hs_sym_func_t *funcs;
    size_t n;
    bool built;     /* funcs built */
    uint32_t scans; /* lookups answered by a scan */
    int nsyms;
    hs_sym_raw_t raw;
    bool batched;                  /* hs_sym_batch has run (answers or not) */
    struct hs_sym_answer *answers; /* the hinted addresses' names, by address */
    size_t nanswers;
} hs_sym_modtab_t;

/* The name of one hinted address, found by hs_sym_batch; ok: the table's answer. */
typedef struct hs_sym_answer {
    uint64_t addr;
    const char *name;
    bool ok;
} hs_sym_answer_t;

/* The symbols at the HS_SYM_KEEP_GROUPS highest addresses seen (up to HS_SYM_KEEP_FUNCS
 * of them), sorted as the table: what a scan for one address keeps. dropped: a function
 * symbol below those kept was seen. */
#define HS_SYM_KEEP_GROUPS 8
#define HS_SYM_KEEP_FUNCS 32
typedef struct {
    hs_sym_func_t f[HS_SYM_KEEP_FUNCS];
    size_t n, groups;
    bool dropped;
} hs_sym_keep_t;

/* at is below every kept group and the groups are full (so a symbol there is dropped). */
static inline bool hs_sym_keep_below(const hs_sym_keep_t *k, uint64_t at)
{
    return k->groups == HS_SYM_KEEP_GROUPS && at < k->f[0].lo;
}
/* Keeps f if it is among the highest groups (dropping the lowest group to make room);
 * false when its group would hold more than HS_SYM_KEEP_FUNCS symbols (k is then
 * unusable). */
bool hs_sym_keep_add(hs_sym_keep_t *k, const hs_sym_func_t *f);

/* A defined, named symbol of a function (or of unknown type with a size). */
static inline bool hs_sym_wanted(const GElf_Sym *sym)
{
    int type = GELF_ST_TYPE(sym->st_info);
    if (sym->st_shndx == SHN_UNDEF || sym->st_name == 0)
        return false;
    return type == STT_FUNC || type == STT_GNU_IFUNC || (type == STT_NOTYPE && sym->st_size);
}
/* Symbol i of t as the table holds it; false when the table leaves it out. */
bool hs_sym_func_at(hs_sym_modtab_t *t, int i, hs_sym_func_t *f);
/*
 * The name for addr among funcs[0, n) (sorted as the table): the last named symbol at or
 * below addr, or one of the few before it (a larger function with a nested symbol
 * inside). A sizeless symbol extends to the next symbol or the end of its section.
 * *exhausted: the walk ran out of symbols before it had tried enough of them.
 */
const char *hs_sym_lookup(Dwfl_Module *mod, hs_sym_func_t *funcs, size_t n, uint64_t addr,
                          bool *exhausted);

/* The names of the hinted addresses (hs_symbolizer_hint, else hs_symbolizer_expect) in
 * t's module, in one pass over its symbols in memory (symbolize_batch.c), into
 * t->answers; sets t->batched. Nothing when there is no hint, no table in memory, or more
 * addresses than one pass is worth. */
void hs_sym_batch(hs_symbolizer_t *s, hs_sym_modtab_t *t);
/* The batch's name for addr when it has the table's answer (*name may be NULL). */
bool hs_sym_batch_answer(const hs_sym_modtab_t *t, uint64_t addr, const char **name);

/* The scope index of one compilation unit (symbolize_dwarf.c). */
typedef struct hs_sym_cu hs_sym_cu_t;

/* A module's units by address, where libdw cannot find them (symbolize_units.c). */
typedef struct hs_sym_units hs_sym_units_t;

struct hs_symbolizer {
    Dwfl *dwfl;
    Dwfl_Callbacks callbacks; /* libdwfl keeps a pointer to it */
    bool reporting;           /* between dwfl_report_begin(_add) and dwfl_report_end */
    bool long_names;          /* the CLI: demangles names up to HS_DEMANGLE_MAX */
    bool names_only;          /* symbol tables only: no DWARF lines or inlined frames */
    hs_sym_debug_t debug;     /* which separate debug files are read */
    bool debug_open;          /* the find_debuginfo callback may open one now */
    bool local_debug;         /* find them with hs_sym_find_debuginfo (else libdwfl's) */
    bool symtab_via_dwfl;     /* tests: read symbols through libdwfl only, never directly */
    uint64_t *want;           /* the addresses the caller will ask about (hs_symbolizer_expect) */
    size_t nwant;
    uint64_t *hint; /* the same for symbol tables only (hs_symbolizer_hint) */
    size_t nhint;
    size_t zdebug_cut;  /* debug files read from a copy with .debug_info cut short */
    size_t zdebug_info; /* bytes of .debug_info inflated into those copies (tests) */

    char *dmbuf; /* demangled names are written here (sym_demangle), then interned */

    hs_sym_chunk_t *chunks;
    hs_sym_str_t *strs; /* open addressing, str == NULL when empty */
    size_t nstrs, strcap;

    hs_symbol_t *frames;
    size_t nframes, framecap;
    hs_sym_cache_t *cache;
    size_t ncache, cachecap;

    hs_sym_file_t *files;
    size_t nfiles, filecap;

    struct hs_sym_image { /* files mapped for libelf, unmapped after dwfl_end */
        void *p;
        size_t n;
    } * images;
    size_t nimages, imagecap;

    hs_sym_modtab_t *mods;
    size_t nmods, modcap, lastmod;

    hs_sym_cu_t **cus; /* open addressing by (module, CU offset), NULL when empty */
    size_t ncus, cucap;
    hs_sym_cu_t *lastcu;
    hs_sym_units_t **units; /* one per module asked about */
    size_t nunits, unitcap;
    /* Addresses that got frames from libdw's scope search after the index placed them in
     * no function; the unit test expects none on a compiler's well-formed DWARF. */
    uint64_t dwarf_fallbacks;
};

/* str copied into the symbolizer's arena once; the same pointer for equal strings. NULL
 * for a NULL str or when out of memory. */
const char *hs_sym_intern(hs_symbolizer_t *s, const char *str);

/* Sets f->system_name to mangled (interned) and f->name to its demangled form (C++ and
 * Rust, demangle.h; the same string for names that are not mangled or do not demangle). */
void hs_sym_set_names(hs_symbolizer_t *s, hs_symbol_t *f, const char *mangled);

/* file made absolute against the compilation directory dir, interned. */
const char *hs_sym_file_path(hs_symbolizer_t *s, const char *dir, const char *file);

/*
 * Frames from DWARF, innermost first: each inlined subroutine containing addr, then the
 * subprogram. The innermost frame gets file and line (interned, from the line table);
 * each outer frame's line is the call site recorded on the inlined instance inside it.
 * Returns the count (0 without DWARF).
 */
size_t hs_sym_dwarf_frames(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr, const char *file,
                           int line, hs_symbol_t *out, size_t max);

/* A Dwfl find_debuginfo callback: separate debug files by build id, then by debuglink,
 * never through debuginfod (symbolize_debug.c). */
int hs_sym_find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                          const char *file, const char *debuglink, GElf_Word crc, char **found);

/* The debug file of mod under /usr/lib/debug/.build-id, checked, opened here rather than
 * by libdwfl (whose own search keeps the Elf it opens, whatever descriptor the
 * find_debuginfo callback returns); -1 when none. *found gets its path (malloc'd). */
int hs_sym_debug_by_build_id(Dwfl_Module *mod, char **found);

/* The debug file open on fd for mod, or, when the caller told which addresses it will ask
 * about and the file's DWARF is compressed, a memfd of it inflated only as far as those
 * need (symbolize_zdebug.c; fd is then closed). */
int hs_sym_zdebug(hs_symbolizer_t *s, Dwfl_Module *mod, int fd);
/* Of want[0..n) (addresses of the debug file dbg), keeps those that a function symbol of
 * its symbol table holds, first, and returns how many (symbolize_zwant.c); all n, sorted,
 * when it has no function symbols, none is held or there is no memory. */
size_t hs_sym_zdebug_named(Elf *dbg, uint64_t *want, size_t n);

/* The symbol table of mod, opened on first use (and its DWARF looked for first when only
 * separate debug files' symbol tables may be read), its sorted table not built yet;
 * NULL when out of memory. */
hs_sym_modtab_t *hs_sym_modtab(hs_symbolizer_t *s, Dwfl_Module *mod);

/* The name of the function symbol containing addr in mod (versioned as in the table),
 * or NULL. */
const char *hs_sym_symtab_name(hs_symbolizer_t *s, Dwfl_Module *mod, uint64_t addr);

/* Releases every module's symbol table. */
void hs_sym_modtabs_free(hs_symbolizer_t *s);

/* Releases the compilation-unit indexes (and the modules' unit ranges). */
void hs_sym_dwarf_free(hs_symbolizer_t *s);

/* The compilation unit DIE of mod holding addr (a module address, as
 * dwfl_module_addrdie takes) into *cudie, and the module's bias; false when none. libdw's
 * lookup through .debug_aranges, or, in a module where that table does not read or is
 * missing, the units' own ranges (symbolize_units.c). */
bool hs_sym_unit_die(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr, Dwarf_Die *cudie,
                     Dwarf_Addr *bias);

/* The line table row of addr in mod, found as hs_sym_unit_die finds its unit: *file
 * (absolute against the unit's directory, interned; NULL when none) and *line (0). */
void hs_sym_unit_line(hs_symbolizer_t *s, Dwfl_Module *mod, Dwarf_Addr addr, const char **file,
                      int *line);

/* How many modules asked about had their units indexed here (the unit test). */
size_t hs_sym_units_own(const hs_symbolizer_t *s);

/* Releases the modules' unit ranges. */
void hs_sym_units_free(hs_symbolizer_t *s);

#endif

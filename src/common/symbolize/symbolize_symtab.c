/*
 * Function names from ELF symbol tables for the symbolizer (symbolize.c): per module, the
 * function symbols sorted by address, searched by bisection (libdwfl's own lookup scans
 * the whole table on every call: 0.2 ms per address in libc).
 *
 * A dump often asks a big library for a handful of addresses, so a module's first few
 * lookups each scan its symbols for their one address (sym_scan), and the sorted table is
 * built, once, on the lookup after them (or when a scan cannot answer as the table would).
 * Both read the symbols straight from the symbol table's section (mapped by libelf, never
 * copied) when it is the module's only table, through libdwfl's per-symbol call (20x
 * dearer) otherwise, and neither reads a name. Aliases at one address (malloc,
 * __libc_malloc, __GI___libc_malloc) are ranked first by size and binding; the names that
 * break the remaining ties are read on the first lookup that lands on that address. So
 * the string table's pages are touched only for the names a profile needs (libc6-dbg's
 * .strtab alone is 130 KB).
 *
 * Same context as the symbolizer: not thread-safe, never on the allocation path; no
 * memory means no names, never a crash.
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "base/sort.h"

#include <gelf.h>
#include <stdlib.h>
#include <string.h>

/* Rank parts known without the name: sized first, then global, weak, local. */
static int sym_rank0(const GElf_Sym *sym)
{
    int bind = GELF_ST_BIND(sym->st_info);
    int r = sym->st_size ? 0 : 10000;
    return r + (bind == STB_GLOBAL ? 0 : bind == STB_WEAK ? 1000 : 2000);
}

/* The rest of the rank, under 1000: not glibc-internal, then fewer leading underscores,
 * then shorter: the name a user would have written. */
static int sym_rank_name(const char *name)
{
    int r = 0;
    if (strncmp(name, "__GI_", 5) == 0 || strstr(name, ".localalias") != NULL)
        r += 500;
    size_t us = strspn(name, "_"), len = strcspn(name, "@");
    return r + (int)(us > 9 ? 90 : us * 10) + (len > 9 ? 9 : (int)len);
}

int hs_sym_func_cmp(const void *a, const void *b)
{
    const hs_sym_func_t *x = a, *y = b;
    if (x->lo != y->lo)
        return x->lo < y->lo ? -1 : 1;
    if (x->rank != y->rank)
        return x->rank < y->rank ? -1 : 1;
    return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* sym_rank0's six values in order, as 0..5. */
static uint64_t sym_rank0_code(int rank0)
{
    return (uint64_t)(rank0 / 10000 * 3 + rank0 % 10000 / 1000);
}

/* Sorts f[0..n), in symbol index order, as qsort with hs_sym_func_cmp would (rank is still
 * sym_rank0's then), by an LSD radix sort of keys (address - lowest, rank code, position)
 * 11 bits a pass, every pass's counts taken in one read of the keys and a pass whose digit
 * is the same in every key skipped: cc1's 28,900 symbols (43-bit keys) in 4 scatters, not
 * 8-bit digits' 6 counts and 6 scatters (5.4 M instructions, a third of a short cc1's exit
 * profile). false (f untouched) when the keys need more than 64 bits or there is no memory. */
#define SYM_DIGIT 11
#define SYM_BUCKETS (1u << SYM_DIGIT)
bool hs_sym_funcs_radix(hs_sym_func_t *f, size_t n)
{
    uint64_t lo = UINT64_MAX, hi = 0;
    for (size_t i = 0; i < n; i++) {
        lo = f[i].lo < lo ? f[i].lo : lo;
        hi = f[i].lo > hi ? f[i].lo : hi;
    }
    int pbits = 1, abits = 0;
    while (pbits < 64 && ((size_t)1 << pbits) < n)
        pbits++;
    while (abits < 64 && ((hi - lo) >> abits) != 0)
        abits++;
    int bits = abits + 3 + pbits;
    if (n < 2 || bits > 64)
        return n < 2;
    int passes = (bits + SYM_DIGIT - 1) / SYM_DIGIT;
    uint64_t *key = malloc(2 * n * sizeof(*key));
    size_t *count = calloc((size_t)passes * SYM_BUCKETS, sizeof(*count));
    hs_sym_func_t *out = malloc(n * sizeof(*out));
    if (key == NULL || out == NULL || count == NULL) {
        free(key);
        free(count);
        free(out);
        return false;
    }
    uint64_t *tmp = key + n;
    for (size_t i = 0; i < n; i++) {
        key[i] = ((f[i].lo - lo) << (3 + pbits)) | (sym_rank0_code(f[i].rank) << pbits) | i;
        for (int p = 0; p < passes; p++)
            count[(size_t)p * SYM_BUCKETS + ((key[i] >> (p * SYM_DIGIT)) & (SYM_BUCKETS - 1))]++;
    }
    for (int p = 0; p < passes; p++) {
        size_t *c = count + (size_t)p * SYM_BUCKETS, sum = 0;
        int shift = p * SYM_DIGIT;
        if (c[(key[0] >> shift) & (SYM_BUCKETS - 1)] == n)
            continue; /* one digit in every key: this pass would move nothing */
        for (size_t d = 0; d < SYM_BUCKETS; d++) { /* counts to starting places */
            size_t k = c[d];
            c[d] = sum;
            sum += k;
        }
        for (size_t i = 0; i < n; i++)
            tmp[c[(key[i] >> shift) & (SYM_BUCKETS - 1)]++] = key[i];
        uint64_t *swap = key;
        key = tmp;
        tmp = swap;
    }
    uint64_t pmask = ((uint64_t)1 << pbits) - 1;
    for (size_t i = 0; i < n; i++)
        out[i] = f[key[i] & pmask];
    memcpy(f, out, n * sizeof(*f));
    free(key < tmp ? key : tmp); /* the allocation's start */
    free(count);
    free(out);
    return true;
}

/* Bytes from addr to the end of section shndx of elf (placed at bias): how far a
 * sizeless symbol (hand-written assembly, _init) may extend; 256 when unknown. */
static uint64_t sym_section_rest(Elf *elf, GElf_Word shndx, Dwarf_Addr bias, GElf_Addr addr)
{
    GElf_Shdr shdr;
    Elf_Scn *scn = elf != NULL && shndx != (GElf_Word)-1 ? elf_getscn(elf, shndx) : NULL;
    if (scn == NULL || gelf_getshdr(scn, &shdr) == NULL)
        return 256;
    uint64_t end = shdr.sh_addr + shdr.sh_size + bias;
    return end > addr ? end - addr : 0;
}

/* Symbol i of r: from its array in memory when there is one (a copy: gelf_getsym's checks
 * and conversion cost 70 instructions a symbol, the most of a table's build), else with
 * gelf_getsym. */
static bool sym_raw(const hs_sym_raw_t *r, int i, GElf_Sym *sym)
{
    if (r->tab != NULL) {
        if ((size_t)i >= r->n)
            return false;
        *sym = r->tab[i];
        return true;
    }
    return gelf_getsym(r->data, i, sym) != NULL;
}

/* One symbol: raw when r->data is set and the symbol is ordinary, else from libdwfl.
 * false when it is none. */
static bool sym_get(Dwfl_Module *mod, const hs_sym_raw_t *r, int i, GElf_Sym *sym, GElf_Addr *addr,
                    GElf_Word *shndx, Elf **elf, Dwarf_Addr *bias)
{
    if (r->data != NULL && sym_raw(r, i, sym) && sym->st_shndx != SHN_UNDEF &&
        sym->st_shndx < SHN_LORESERVE) {
        *addr = sym->st_value + r->bias;
        *shndx = sym->st_shndx;
        *elf = r->elf;
        *bias = r->bias;
        return true;
    }
    return dwfl_module_getsym_info(mod, i, sym, addr, shndx, elf, bias) != NULL;
}

/* Sets r up for direct reads when it gives what libdwfl gives: the table's count is the
 * module's, and the first, a middle and the last symbols in a section land at the same
 * address and section both ways. */
static void sym_raw_open(Dwfl_Module *mod, int nsyms, hs_sym_raw_t *r)
{
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    memset(r, 0, sizeof(*r));
    if (dwfl_module_getsym_info(mod, nsyms - 1, &sym, &addr, &shndx, &r->elf, &r->bias) == NULL ||
        r->elf == NULL || elf_kind(r->elf) != ELF_K_ELF)
        return;
    GElf_Ehdr eh;
    if (gelf_getehdr(r->elf, &eh) == NULL || eh.e_type == ET_REL)
        return;
    for (int want = SHT_SYMTAB; r->data == NULL && want != 0;
         want = want == SHT_SYMTAB ? SHT_DYNSYM : 0) {
        for (Elf_Scn *scn = elf_nextscn(r->elf, NULL); scn; scn = elf_nextscn(r->elf, scn)) {
            GElf_Shdr sh;
            if (gelf_getshdr(scn, &sh) == NULL || sh.sh_type != (GElf_Word)want)
                continue;
            if (sh.sh_entsize != 0 && sh.sh_size / sh.sh_entsize == (size_t)nsyms)
                r->data = elf_getdata(scn, NULL);
            break;
        }
    }
    if (r->data != NULL && gelf_getclass(r->elf) == ELFCLASS64 && r->data->d_type == ELF_T_SYM &&
        r->data->d_buf != NULL && r->data->d_size / sizeof(Elf64_Sym) >= (size_t)nsyms) {
        r->tab = r->data->d_buf; /* libelf's memory form: native order, aligned */
        r->n = (size_t)nsyms;
    }
    /* 16 symbols spread over the table must match (at least one of them defined). */
    int checked = 0;
    for (int k = 0; r->data != NULL && k < 16; k++) {
        int i = 1 + (int)((int64_t)(nsyms - 2) * k / 15);
        GElf_Sym a, b;
        GElf_Addr aa, ba;
        GElf_Word as, bs;
        Elf *ae, *be;
        Dwarf_Addr ab, bb;
        if (dwfl_module_getsym_info(mod, i, &b, &ba, &bs, &be, &bb) == NULL ||
            !sym_get(mod, r, i, &a, &aa, &as, &ae, &ab) || a.st_value != b.st_value) {
            r->data = NULL;
            break;
        }
        if (b.st_shndx == SHN_UNDEF || b.st_shndx >= SHN_LORESERVE)
            continue;
        if (aa != ba || as != bs || ae != be)
            r->data = NULL;
        checked++;
    }
    if (checked == 0)
        r->data = NULL;
}

bool hs_sym_func_at(hs_sym_modtab_t *t, int i, hs_sym_func_t *f)
{
    GElf_Sym sym;
    GElf_Addr addr = 0;
    GElf_Word shndx = 0;
    Elf *elf = NULL;
    Dwarf_Addr bias = 0;
    /* What the tests below skip whatever libdwfl would say: undefined symbols and those
     * of other types, such as the 1,800 STT_FILE ones (SHN_ABS) in libc's debug file,
     * each a libdwfl call of 190 instructions. */
    if (t->raw.tab != NULL && t->raw.data != NULL && !hs_sym_wanted(&t->raw.tab[i]))
        return false;
    if (!sym_get(t->mod, &t->raw, i, &sym, &addr, &shndx, &elf, &bias))
        return false;
    if (!hs_sym_wanted(&sym) || addr == 0)
        return false;
    *f = (hs_sym_func_t){.lo = addr,
                         .size = sym.st_size,
                         .sized = sym.st_size != 0,
                         .idx = (uint32_t)i,
                         .rank = sym_rank0(&sym)};
    if (!f->sized)
        f->size = sym_section_rest(elf, shndx, bias, addr);
    return true;
}

/* Collects and sorts the function symbols of t->mod (names left unread). */
static void sym_modtab_build(hs_sym_modtab_t *t)
{
    t->built = true;
    if (t->nsyms <= 1 || (t->funcs = malloc((size_t)t->nsyms * sizeof(*t->funcs))) == NULL)
        return;
    for (int i = 1; i < t->nsyms; i++)
        if (hs_sym_func_at(t, i, &t->funcs[t->n]))
            t->n++;
    if (!hs_sym_funcs_radix(t->funcs, t->n))
        hs_sort(t->funcs, t->n, sizeof(*t->funcs), hs_sym_func_cmp);
}

/* The symbol name of index idx without its version ("pthread_create@@GLIBC_2.34" keeps
 * it: sym_set_symtab_name strips it). */
static const char *sym_name_at(Dwfl_Module *mod, uint32_t idx)
{
    GElf_Sym sym;
    GElf_Addr addr;
    GElf_Word shndx;
    Elf *elf;
    Dwarf_Addr bias;
    const char *name = dwfl_module_getsym_info(mod, (int)idx, &sym, &addr, &shndx, &elf, &bias);
    return name != NULL && name[0] != '\0' ? name : NULL;
}

/* The chosen alias of the group funcs[g, end) (equal lo), moved to funcs[g] with its name
 * on first use; NULL when none of them has a name. Only the best-ranked part of the
 * group is read: the name's part of the rank is under the gaps of the rest. */
static const hs_sym_func_t *sym_group(Dwfl_Module *mod, hs_sym_func_t *f, size_t g, size_t end)
{
    if (f[g].named)
        return f[g].name != NULL ? &f[g] : NULL;
    size_t best = end;
    int best_rank = 0;
    for (size_t i = g; i < end; i++) {
        if (best != end && f[i].rank >= best_rank)
            break; /* every later alias ranks lower: a name adds 1 to 599 */
        const char *name = sym_name_at(mod, f[i].idx);
        if (name == NULL)
            continue;
        int r = f[i].rank + sym_rank_name(name);
        f[i].name = name;
        if (best == end || r < best_rank || (r == best_rank && strcmp(name, f[best].name) < 0)) {
            best = i;
            best_rank = r;
        }
    }
    if (best != end && best != g) {
        hs_sym_func_t tmp = f[g];
        f[g] = f[best];
        f[best] = tmp;
    }
    f[g].named = true;
    if (best == end)
        f[g].name = NULL;
    return f[g].name != NULL ? &f[g] : NULL;
}

hs_sym_modtab_t *hs_sym_modtab(hs_symbolizer_t *s, Dwfl_Module *mod)
{
    if (s->lastmod < s->nmods && s->mods[s->lastmod].mod == mod)
        return &s->mods[s->lastmod];
    for (size_t i = 0; i < s->nmods; i++) {
        if (s->mods[i].mod == mod)
            return &s->mods[s->lastmod = i];
    }
    if (s->nmods == s->modcap) {
        size_t cap = s->modcap ? s->modcap * 2 : 32;
        hs_sym_modtab_t *t = realloc(s->mods, cap * sizeof(*t));
        if (t == NULL)
            return NULL;
        s->mods = t;
        s->modcap = cap;
    }
    hs_sym_modtab_t *t = &s->mods[s->lastmod = s->nmods++];
    *t = (hs_sym_modtab_t){.mod = mod};
    if (s->debug == HS_SYM_DEBUG_SYMTAB && !s->names_only) {
        /* The module's DWARF is looked for (and its absence remembered by libdwfl) while
         * no separate file may open; then its symbol table may come from one. */
        Dwarf_Addr bias;
        dwfl_module_getdwarf(mod, &bias);
        s->debug_open = true;
    }
    t->nsyms = dwfl_module_getsymtab(mod);
    if (t->nsyms > 1)
        sym_raw_open(mod, t->nsyms, &t->raw);
    if (s->symtab_via_dwfl)
        t->raw.data = NULL;
    s->debug_open = s->debug == HS_SYM_DEBUG_ALL;
    return t;
}

const char *hs_sym_lookup(Dwfl_Module *mod, hs_sym_func_t *funcs, size_t n, uint64_t addr,
                          bool *exhausted)
{
    size_t lo = 0, hi = n, end, tries = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (funcs[mid].lo <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    bool last = true;
    for (end = lo; end > 0 && tries < 4;) {
        size_t g = end - 1;
        while (g > 0 && funcs[g - 1].lo == funcs[end - 1].lo)
            g--;
        const hs_sym_func_t *f = sym_group(mod, funcs, g, end);
        end = g;
        if (f == NULL)
            continue;
        if (addr - f->lo < f->size && (f->sized || last))
            return f->name;
        last = false;
        tries++;
    }
    *exhausted = end == 0 && tries < 4;
    return NULL;
}

#define SYM_SCAN_LOOKUPS 8 /* lookups per module answered by scans, then the table */

bool hs_sym_keep_add(hs_sym_keep_t *k, const hs_sym_func_t *f)
{
    if (hs_sym_keep_below(k, f->lo)) {
        k->dropped = true;
        return true;
    }
    size_t i = 0; /* f stays sorted by address, then rank, then index */
    while (i < k->n && hs_sym_func_cmp(&k->f[i], f) < 0)
        i++;
    bool new_group = !((i > 0 && k->f[i - 1].lo == f->lo) || (i < k->n && k->f[i].lo == f->lo));
    if (new_group && k->groups == HS_SYM_KEEP_GROUPS) { /* drop the lowest group */
        size_t m = 0;
        while (m < k->n && k->f[m].lo == k->f[0].lo)
            m++;
        memmove(k->f, k->f + m, (k->n - m) * sizeof(*k->f));
        k->n -= m;
        i -= m;
        k->groups--;
        k->dropped = true;
    }
    if (k->n == HS_SYM_KEEP_FUNCS)
        return false;
    memmove(k->f + i + 1, k->f + i, (k->n - i) * sizeof(*k->f));
    k->f[i] = *f;
    k->n++;
    k->groups += new_group;
    return true;
}

/*
 * A scan: the symbols at the HS_SYM_KEEP_GROUPS highest addresses at or below addr, from
 * the table in memory in one pass (12 instructions a symbol where building the sorted
 * table costs 220: a profile asks a big library like libc for two or three names).
 * false when it cannot answer as the table would: no table in memory, too many aliases,
 * or the lookup needs symbols below those kept.
 */
static bool sym_scan(hs_sym_modtab_t *t, uint64_t addr, const char **name)
{
    hs_sym_keep_t k = {.n = 0};
    if (t->raw.tab == NULL || t->raw.data == NULL)
        return false;
    for (int i = 1; i < t->nsyms; i++) {
        const Elf64_Sym *y = &t->raw.tab[i];
        uint64_t at = y->st_value + t->raw.bias; /* the table's address: an ordinary one */
        if (y->st_shndx < SHN_LORESERVE && at > addr)
            continue;
        if (y->st_shndx < SHN_LORESERVE && hs_sym_keep_below(&k, at)) {
            k.dropped = k.dropped || (hs_sym_wanted(y) && at != 0); /* below every group kept */
            continue;
        }
        hs_sym_func_t f;
        if (!hs_sym_func_at(t, i, &f) || f.lo > addr)
            continue;
        if (!hs_sym_keep_add(&k, &f))
            return false;
    }
    /* dropped: a symbol at or below addr is not in kept, so a lookup that ran out of kept
     * symbols is not the table's. */
    bool exhausted = false;
    *name = hs_sym_lookup(t->mod, k.f, k.n, addr, &exhausted);
    return !(exhausted && k.dropped);
}

const char *hs_sym_symtab_name(hs_symbolizer_t *s, Dwfl_Module *mod, uint64_t addr)
{
    hs_sym_modtab_t *t = hs_sym_modtab(s, mod);
    const char *name = NULL;
    bool exhausted;
    if (t == NULL || t->nsyms <= 1)
        return NULL;
    if (!t->batched)
        hs_sym_batch(s, t);
    if (hs_sym_batch_answer(t, addr, &name))
        return name;
    if (!t->built && t->scans < SYM_SCAN_LOOKUPS) {
        t->scans++;
        if (sym_scan(t, addr, &name))
            return name;
    }
    if (!t->built)
        sym_modtab_build(t);
    return hs_sym_lookup(mod, t->funcs, t->n, addr, &exhausted);
}

void hs_sym_modtabs_free(hs_symbolizer_t *s)
{
    for (size_t i = 0; i < s->nmods; i++) {
        free(s->mods[i].funcs);
        free(s->mods[i].answers);
    }
    free(s->mods);
    s->mods = NULL;
    s->nmods = s->modcap = s->lastmod = 0;
}

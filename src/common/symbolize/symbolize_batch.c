/*
 * A module's symbol-table names for many addresses in one pass (for symbolize_symtab.c):
 * when the caller said which addresses it will ask about (hs_symbolizer_hint), the first
 * lookup in a module reads its symbols in memory once and keeps, for each stretch between
 * two hinted addresses, what a scan for the higher one keeps (hs_sym_keep_t); each
 * address's answer is then its stretch's symbols with those of the stretches below, as
 * many as a scan would keep. A short process's exit profile asks a 28,900-symbol
 * executable (cc1) for nine names: 8 scans and the sorted table cost 13.5 M instructions
 * there, one pass well under one.
 *
 * An answer is kept only when the scan's own test says it is the table's; any other
 * address falls through to the scans and the table as before. Same context as the
 * symbolizer: not thread-safe, never on the allocation path; no memory means no answers.
 */
#define _GNU_SOURCE
#include "symbolize_int.h"
#include "base/sort.h"

#include <stdlib.h>
#include <string.h>

/* Hinted addresses in a module beyond which the sorted table serves: 256, or more in a
 * big table, as long as the addresses' kept symbols (1.6 KB each) take less memory than
 * the table's build (some 110 bytes a symbol): a real compile asks cc1 for about 320. */
#define SYM_BATCH_MIN 256
static size_t sym_batch_max(const hs_sym_modtab_t *t)
{
    size_t big = (size_t)t->nsyms * 110 / sizeof(hs_sym_keep_t);
    return big > SYM_BATCH_MIN ? big : SYM_BATCH_MIN;
}

static int sym_u64_cmp(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The hinted addresses inside t's module, sorted and distinct, into a (malloc'd); the
 * count, 0 when none or too many. */
static size_t sym_batch_addrs(const hs_symbolizer_t *s, const hs_sym_modtab_t *t, uint64_t **a)
{
    const uint64_t *h = s->hint ? s->hint : s->want;
    size_t nh = s->hint ? s->nhint : s->nwant, k = 0;
    Dwarf_Addr lo = 0, hi = 0;
    *a = NULL;
    if (nh == 0 || dwfl_module_info(t->mod, NULL, &lo, &hi, NULL, NULL, NULL, NULL) == NULL)
        return 0;
    for (size_t i = 0; i < nh; i++)
        k += h[i] >= lo && h[i] < hi;
    size_t max = sym_batch_max(t);
    if (k == 0 || k > 4 * max || (*a = malloc(k * sizeof(**a))) == NULL)
        return 0;
    k = 0;
    for (size_t i = 0; i < nh; i++)
        if (h[i] >= lo && h[i] < hi)
            (*a)[k++] = h[i];
    hs_sort(*a, k, sizeof(**a), sym_u64_cmp);
    size_t u = 0;
    for (size_t i = 0; i < k; i++)
        if (u == 0 || (*a)[u - 1] != (*a)[i])
            (*a)[u++] = (*a)[i];
    if (u > max)
        u = 0;
    return u;
}

/* The sorted addresses a[0..k) and, to find the first at or above a symbol's address in
 * a few steps (a pass asks this of most of a big table's symbols), that index at the
 * start of each of SYM_BATCH_SPANS equal spans from a[0]. */
#define SYM_BATCH_SPANS 256
typedef struct {
    const uint64_t *a;
    size_t k;
    int shift;
    uint32_t start[SYM_BATCH_SPANS];
} sym_slots_t;

static void sym_slots_init(sym_slots_t *sl, const uint64_t *a, size_t k)
{
    sl->a = a;
    sl->k = k;
    sl->shift = 0;
    while (((a[k - 1] - a[0]) >> sl->shift) >= SYM_BATCH_SPANS)
        sl->shift++;
    size_t j = 0;
    for (size_t b = 0; b < SYM_BATCH_SPANS; b++) {
        uint64_t from = a[0] + ((uint64_t)b << sl->shift);
        while (j < k && a[j] < from)
            j++;
        sl->start[b] = (uint32_t)j;
    }
}

/* The first of a[0..k) at or above at (at <= a[k - 1]). */
static size_t sym_slot(const sym_slots_t *sl, uint64_t at)
{
    if (at <= sl->a[0])
        return 0;
    size_t j = sl->start[(at - sl->a[0]) >> sl->shift];
    while (sl->a[j] < at)
        j++;
    return j;
}

/* One pass over t's symbols: keep[j] gets those in (a[j-1], a[j]] as a scan keeps them;
 * bad[j] when its group overflowed. */
static void sym_batch_pass(hs_sym_modtab_t *t, const sym_slots_t *sl, hs_sym_keep_t *keep,
                           bool *bad)
{
    uint64_t top = sl->a[sl->k - 1];
    for (int i = 1; i < t->nsyms; i++) {
        const Elf64_Sym *y = &t->raw.tab[i];
        bool ordinary = y->st_shndx < SHN_LORESERVE;
        uint64_t at = y->st_value + t->raw.bias; /* the table's address: an ordinary one */
        size_t j = 0;
        if (ordinary) { /* what hs_sym_func_at leaves out, or above every address */
            if (!hs_sym_wanted(y) || at > top || bad[j = sym_slot(sl, at)])
                continue;
            if (hs_sym_keep_below(&keep[j], at)) {
                keep[j].dropped = keep[j].dropped || at != 0;
                continue;
            }
        }
        hs_sym_func_t f;
        if (!hs_sym_func_at(t, i, &f) || f.lo > top)
            continue;
        j = sym_slot(sl, f.lo);
        if (!bad[j] && !hs_sym_keep_add(&keep[j], &f))
            bad[j] = true;
    }
}

/* The answer for a[j]: the HS_SYM_KEEP_GROUPS highest groups of keep[j], keep[j-1], ...
 * as one scan would have kept them. false when a scan could not have answered. */
static bool sym_batch_one(hs_sym_modtab_t *t, const uint64_t *a, size_t j, hs_sym_keep_t *keep,
                          const bool *bad, const char **name)
{
    hs_sym_func_t m[HS_SYM_KEEP_FUNCS];
    size_t p = HS_SYM_KEEP_FUNCS, groups = 0; /* m[p..) holds the groups taken so far */
    bool dropped = false;
    for (size_t jj = j + 1; jj-- > 0;) {
        const hs_sym_keep_t *kk = &keep[jj];
        if (groups == HS_SYM_KEEP_GROUPS) { /* full: anything lower is dropped */
            dropped = dropped || kk->n || kk->dropped || bad[jj];
            continue;
        }
        if (bad[jj])
            return false;
        size_t from = kk->n, g = 0; /* kk's highest groups, as many as still fit */
        while (from > 0 && g < HS_SYM_KEEP_GROUPS - groups) {
            size_t e = from;
            while (from > 0 && kk->f[from - 1].lo == kk->f[e - 1].lo)
                from--;
            g++;
        }
        size_t take = kk->n - from;
        if (take > p)
            return false; /* more symbols than a scan keeps */
        dropped = dropped || from > 0 || kk->dropped;
        p -= take;
        memcpy(m + p, kk->f + from, take * sizeof(*m));
        groups += g;
    }
    bool exhausted = false;
    *name = hs_sym_lookup(t->mod, m + p, HS_SYM_KEEP_FUNCS - p, a[j], &exhausted);
    return !(exhausted && dropped);
}

void hs_sym_batch(hs_symbolizer_t *s, hs_sym_modtab_t *t)
{
    uint64_t *a;
    t->batched = true;
    if (t->raw.tab == NULL || t->raw.data == NULL || t->built)
        return;
    size_t k = sym_batch_addrs(s, t, &a);
    hs_sym_keep_t *keep = k ? calloc(k, sizeof(*keep)) : NULL;
    bool *bad = k ? calloc(k, sizeof(*bad)) : NULL;
    sym_slots_t *sl = k ? malloc(sizeof(*sl)) : NULL;
    t->answers = keep && bad && sl ? malloc(k * sizeof(*t->answers)) : NULL;
    if (t->answers != NULL) {
        sym_slots_init(sl, a, k);
        sym_batch_pass(t, sl, keep, bad);
        for (size_t j = 0; j < k; j++) {
            hs_sym_answer_t *r = &t->answers[j];
            *r = (hs_sym_answer_t){.addr = a[j]};
            r->ok = sym_batch_one(t, a, j, keep, bad, &r->name);
        }
        t->nanswers = k;
    }
    free(a);
    free(keep);
    free(bad);
    free(sl);
}

bool hs_sym_batch_answer(const hs_sym_modtab_t *t, uint64_t addr, const char **name)
{
    size_t lo = 0, hi = t->nanswers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->answers[mid].addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo == t->nanswers || t->answers[lo].addr != addr || !t->answers[lo].ok)
        return false;
    *name = t->answers[lo].name;
    return true;
}

/*
 * Function name -> the address ranges of its code in the loaded modules, for trackers
 * (trackers.h). Runs once per heapsift_tracker_new on the caller's thread, under the
 * guard (libdwfl allocates through the real allocator), never on an allocation path.
 *
 * What is caught:
 *  - every function symbol of that name in every module's symbol table (.symtab, which
 *    names static functions, else .dynsym; a separate debug file's .symtab when the
 *    module is stripped), so a static function defined in several files is all of them;
 *  - the compiler's copies of it: "name.cold", "name.constprop.0", "name.isra.0",
 *    "name.part.0", "name.lto_priv.0" (any "name.<suffix>");
 *  - C++: a plain name matches the global function of that name ("_Z7lru_put..."), a
 *    qualified one ("ns::Cache::put") the member or namespaced function, every overload
 *    and template instance, by their Itanium encodings; names with "<", "(", "~", a space
 *    or "operator" are compared with the demangled symbols (demangle.h);
 *  - inlined copies, from the DWARF inside the module's own file (what -g puts there):
 *    each DW_TAG_inlined_subroutine of a function of that name, by DW_AT_name for C and
 *    by the demangled linkage name for C++.
 * What is not: inlined copies in modules whose DWARF is only in a separate debug file
 * (reading those costs too much: libc6-dbg alone is ~0.1 s), copies inlined across
 * compilation units by LTO (their abstract origin lives in another unit), a function whose
 * only call to the allocator is a tail call (its frame is gone before malloc runs),
 * modules loaded after the tracker was made, and sizeless symbols (hand-written assembly).
 * Caught too much: functions folded into one body (identical code folding) share it.
 */
#define _GNU_SOURCE
#include "model/demangle.h"
#include "runtime/fdtable.h"
#include "base/dwload.h"
#include "base/fdio.h"
#include "base/sort.h"
#include "trackers.h"

#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Room for a demangled name compared with the function asked for. */
#define RESOLVE_DM 4096

typedef struct {
    const char *f;
    size_t flen;
    char itanium[HS_TRACKERS_FUNCTION_MAX * 2]; /* "7lru_put" or "2ns5Cache3put" */
    bool nested;                                /* itanium is a nested name (N...E) */
    bool demangle;                              /* names must be demangled, into dm */
    char *dm;                                   /* RESOLVE_DM bytes on resolve_run's stack */
    uintptr_t *r;                               /* [lo, hi) pairs */
    size_t n, cap;
    bool nomem;
} resolve_ctx_t;

/* f's Itanium encoding: "<len><name>" per "::"-separated component. False when f is not
 * a plain (possibly qualified) identifier. */
static bool resolve_itanium(resolve_ctx_t *c)
{
    const char *p = c->f;
    size_t out = 0, parts = 0;
    while (*p) {
        size_t len = 0;
        while (p[len] && (isalnum((unsigned char)p[len]) || p[len] == '_'))
            len++;
        if (len == 0 || out + len + 8 >= sizeof(c->itanium))
            return false;
        out += (size_t)snprintf(c->itanium + out, sizeof(c->itanium) - out, "%zu%.*s", len,
                                (int)len, p);
        parts++;
        p += len;
        if (*p && strncmp(p, "::", 2) != 0)
            return false;
        p += *p ? 2 : 0;
    }
    c->nested = parts > 1;
    return parts > 0;
}

static bool resolve_itanium_matches(const resolve_ctx_t *c, const char *s)
{
    if (!c->itanium[0] || s[0] != '_' || s[1] != 'Z')
        return false;
    s += 2;
    if (*s == 'L')
        s++;
    if (c->nested) {
        if (*s++ != 'N')
            return false;
        while (*s && strchr("rVKRO", *s))
            s++;
    }
    size_t n = strlen(c->itanium);
    if (strncmp(s, c->itanium, n) != 0)
        return false;
    /* After a nested name: its end, template arguments or an ABI tag. After a global
     * name: the parameters, which never start with a digit (that would lengthen it). */
    return c->nested ? (s[n] == 'E' || s[n] == 'I' || s[n] == 'B') : !isdigit((unsigned char)s[n]);
}

/* Whether symbol (or linkage) name s is function f or a copy of it. */
static bool resolve_matches(const resolve_ctx_t *c, const char *s)
{
    if (strncmp(s, c->f, c->flen) == 0 && (s[c->flen] == '\0' || s[c->flen] == '.'))
        return true;
    if (resolve_itanium_matches(c, s))
        return true;
    if (!c->demangle || s[0] != '_' || s[1] != 'Z' ||
        hs_demangle(s, HS_DEMANGLE_MAX_IN_PROCESS, c->dm, RESOLVE_DM) == 0)
        return false;
    const char *d = c->dm;
    bool ok = false;
    /* "ns::f(int)", "ns::f(int) [clone .cold]", or after a template's return type:
     * "void ns::f<long>(std::vector<long*>&, int)". */
    for (const char *at = d; at && !ok; at = strstr(at + 1, c->f)) {
        const char *end = at + c->flen;
        ok = (at == d || at[-1] == ' ') && strncmp(at, c->f, c->flen) == 0 &&
             (*end == '\0' || *end == '(' || strncmp(end, " [clone", 7) == 0);
    }
    return ok;
}

static void resolve_add(resolve_ctx_t *c, uintptr_t lo, uintptr_t hi)
{
    if (hi <= lo)
        return;
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 16;
        uintptr_t *r = realloc(c->r, 2 * cap * sizeof(*r));
        if (!r) {
            c->nomem = true;
            return;
        }
        c->r = r;
        c->cap = cap;
    }
    c->r[2 * c->n] = lo;
    c->r[2 * c->n + 1] = hi;
    c->n++;
}

static void resolve_symtab(resolve_ctx_t *c, Dwfl_Module *mod)
{
    int nsyms = dwfl_module_getsymtab(mod);
    for (int i = 1; i < nsyms; i++) {
        GElf_Sym sym;
        GElf_Addr addr = 0;
        GElf_Word shndx = 0;
        const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx, NULL, NULL);
        int type = GELF_ST_TYPE(sym.st_info);
        if (!name || sym.st_shndx == SHN_UNDEF || sym.st_size == 0 || addr == 0 ||
            (type != STT_FUNC && type != STT_GNU_IFUNC))
            continue;
        if (resolve_matches(c, name))
            resolve_add(c, (uintptr_t)addr, (uintptr_t)(addr + sym.st_size));
    }
}

/* Whether the module's own file (not a separate debug file) has DWARF. */
static bool resolve_has_dwarf(Dwfl_Module *mod)
{
    Dwarf_Addr bias;
    size_t shstrndx;
    Elf *elf = dwfl_module_getelf(mod, &bias);
    if (!elf || elf_getshdrstrndx(elf, &shstrndx) != 0)
        return false;
    for (Elf_Scn *scn = elf_nextscn(elf, NULL); scn; scn = elf_nextscn(elf, scn)) {
        GElf_Shdr sh;
        const char *name = gelf_getshdr(scn, &sh) ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
        if (name && strcmp(name, ".debug_info") == 0 && sh.sh_type != SHT_NOBITS)
            return true;
    }
    return false;
}

typedef struct {
    resolve_ctx_t *c;
    Dwarf_Addr bias;
} resolve_dw_t;

static int resolve_instance(Dwarf_Die *inst, void *arg)
{
    resolve_dw_t *d = arg;
    Dwarf_Addr base, lo, hi;
    ptrdiff_t off = 0;
    while ((off = dwarf_ranges(inst, off, &base, &lo, &hi)) > 0)
        resolve_add(d->c, (uintptr_t)(lo + d->bias), (uintptr_t)(hi + d->bias));
    return DWARF_CB_OK;
}

static const char *resolve_die_name(Dwarf_Die *die)
{
    Dwarf_Attribute a;
    const char *link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
    if (!link)
        link = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
    return link ? link : dwarf_diename(die);
}

static int resolve_func(Dwarf_Die *func, void *arg)
{
    resolve_dw_t *d = arg;
    const char *name = resolve_die_name(func);
    if (name && dwarf_func_inline(func) && resolve_matches(d->c, name))
        dwarf_func_inline_instances(func, resolve_instance, d);
    return DWARF_CB_OK;
}

static void resolve_inlined(resolve_ctx_t *c, Dwfl_Module *mod)
{
    resolve_dw_t d = {.c = c};
    Dwarf *dw = resolve_has_dwarf(mod) ? dwfl_module_getdwarf(mod, &d.bias) : NULL;
    Dwarf_Off off = 0, next;
    size_t hsize;
    while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
        Dwarf_Die cu;
        if (dwarf_offdie(dw, off + hsize, &cu))
            dwarf_getfuncs(&cu, resolve_func, &d, 0);
        off = next;
    }
}

static int resolve_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
                          void *arg)
{
    (void)userdata, (void)name, (void)start;
    resolve_ctx_t *c = arg;
    resolve_symtab(c, mod);
    resolve_inlined(c, mod);
    return c->nomem ? DWARF_CB_ABORT : DWARF_CB_OK;
}

static int resolve_cmp(const void *a, const void *b)
{
    const uintptr_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* Sorts the ranges and merges those that overlap or touch. */
static void resolve_merge(resolve_ctx_t *c)
{
    size_t k = 0;
    hs_sort(c->r, c->n, 2 * sizeof(*c->r), resolve_cmp);
    for (size_t i = 0; i < c->n; i++) {
        if (k && c->r[2 * i] <= c->r[2 * k - 1]) {
            if (c->r[2 * i + 1] > c->r[2 * k - 1])
                c->r[2 * k - 1] = c->r[2 * i + 1];
            continue;
        }
        c->r[2 * k] = c->r[2 * i];
        c->r[2 * k + 1] = c->r[2 * i + 1];
        k++;
    }
    c->n = k;
}

static int resolve_run(const char *function, uintptr_t **ranges, size_t *n)
{
    static const Dwfl_Callbacks cb = {.find_elf = dwfl_linux_proc_find_elf,
                                      .find_debuginfo = dwfl_standard_find_debuginfo};
    char dm[RESOLVE_DM];
    resolve_ctx_t c = {.f = function, .flen = strlen(function), .dm = dm};
    if (!resolve_itanium(&c))
        c.itanium[0] = '\0';
    if (strpbrk(function, "<(~ ") || strstr(function, "operator"))
        c.demangle = true;
    Dwfl *dwfl = dwfl_begin(&cb);
    if (!dwfl)
        return -ENOMEM;
    dwfl_report_begin(dwfl);
    int rc = dwfl_linux_proc_report(dwfl, getpid());
    if (dwfl_report_end(dwfl, NULL, NULL) == 0 && rc == 0)
        dwfl_getmodules(dwfl, resolve_module, &c, 0);
    dwfl_end(dwfl);
    if (c.nomem) {
        free(c.r);
        return -ENOMEM;
    }
    resolve_merge(&c);
    if (c.n == 0) {
        free(c.r);
        return -ENOENT;
    }
    *ranges = c.r;
    *n = c.n;
    return 0;
}

typedef struct {
    const char *function;
    uintptr_t **ranges;
    size_t *n;
    int rc;
} resolve_job_t;

/* libdwfl opens the binaries itself: only in a table of heapsift's own (fdtable.c). Where
 * none can be had, no tracker can be resolved. */
static void resolve_job(void *p)
{
    resolve_job_t *j = p;
    j->rc = hs_fd_remote() ? -ENOTSUP : resolve_run(j->function, j->ranges, j->n);
}

int hs_tracker_resolve(const char *function, uintptr_t **ranges, size_t *n)
{
    resolve_job_t j = {function, ranges, n, -ENOTSUP};
    hs_fdtable_run(resolve_job, &j);
    return j.rc;
}

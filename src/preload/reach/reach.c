/*
 * Reach: which allocation entry points a program's calls can reach without passing
 * through heapsift, found at start, and in objects loaded later (their Rust allocators). A
 * preloaded library sees only the calls that the dynamic linker binds to it; these it cannot see:
 *   - the malloc family and operator new/delete defined by the executable or by an
 *     object ahead of libheapsift.so in the lookup scope (Chromium's own allocator, a
 *     static tcmalloc or jemalloc): dlsym(RTLD_DEFAULT) finds their definition, not ours;
 *   - an allocator's own API (jemalloc's mallocx and je_*, _rjem_* as tikv-jemallocator
 *     builds it, tcmalloc's tc_*, mimalloc's mi_*) defined in the executable, or defined
 *     in a library and imported by another object;
 *   - a Rust #[global_allocator] of the program's own: its __rust_alloc entry points are
 *     local symbols of the executable (.symtab), bound inside it.
 * The malloc family, Rust's entry points and the allocators' own APIs (hooks_api.c: in
 * the executable, in a library the program imports them from, one instance per prefix and
 * object) are hooked in place where the hooks can (HEAPSIFT_HOOKS=auto, x86-64), an API
 * once one of its releases is (free, sdallocx, dallocx, or the family's free leading into
 * the same object). What was hooked, what reaches heapsift another way (an operator new
 * whose calls go to the malloc heapsift interposes: reach_via.c decodes it to know), and
 * what still bypasses heapsift, with why, is kept in one line for the profiles' comments
 * (and so for the headers of heapsift top and stats, and heapsift run's summary), and said
 * on stderr only with HEAPSIFT_VERBOSE=1: a profile must never be empty in silence, and a
 * program's stderr must never carry heapsift's findings unasked.
 * Objects loaded later are reach_later.c's. Nothing here runs on an allocation path; it
 * reads the loaded objects' dynamic symbol tables in memory and the executable's .symtab
 * (elfsyms.c).
 */
#define _GNU_SOURCE
#include "reach.h"
#include "reach_int.h"
#include "runtime/core.h"
#include "elfaddr.h"
#include "elfsyms.h"
#include "gotslot.h"
#include "hooks.h"
#include "runtime/log.h"
#include "runtime/options.h"
#include "patch.h"
#include "reach_via.h"
#include "runtime/stopworld.h"
#include "unwind/unwind.h"

#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <link.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

char hs_reach_line[REACH_MAX]; /* reach_int.h */
/* The line is not logged (attach: the command prints it, the profiles hold it). */
static bool reach_quiet;

static void reach_add(reach_list_t *l, const char *what)
{
    size_t w = strlen(what);
    for (const char *f = l->buf; (f = strstr(f, what)) != NULL; f += w) /* once each */
        if ((f == l->buf || f[-1] == ' ') && (f[w] == '\0' || f[w] == ','))
            return;
    int k = snprintf(l->buf + l->len, REACH_MAX - l->len, "%s%s", l->n ? ", " : "", what);
    if (k > 0 && l->len + (size_t)k < REACH_MAX) {
        l->len += (size_t)k;
        l->n++;
    }
}

static const char *reach_exe_name(void);

/* A file's base name for the line; the executable's own name for /proc/self/exe (Chromium's
 * zygote runs itself again through it: "defined by exe" named nothing). */
const char *hs_reach_base(const char *path)
{
    if (path && strcmp(path, "/proc/self/exe") == 0 && reach_exe_name()[0])
        path = reach_exe_name();
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path && *path ? path : "the executable");
}

/* ---- the malloc family ahead of heapsift: hooked in place where possible ---------- */

/* API functions with no hook, judged once the APIs are hooked (reach_pend_judge). Only the
 * start's scan (one thread, or attach's) fills them: static, not in reach_t, which objects
 * loaded later put on an application thread's stack. */
static struct {
    void *def;
    size_t size;
    bool exe;      /* the executable's, named in nohook if it bypasses */
    char msg[120]; /* its entry: "je_valloc (libjemalloc.so.2, called by prog)", or the name */
} reach_pending[8];
static int reach_npend;

static const void *reach_self; /* heapsift's own object (its dladdr base) */

static const char *reach_label(const char *name)
{
    return name[0] == '_' && name[1] == 'Z' ? "operator new/delete" : name;
}

/* Whether addr lies in the executable (its link map has no name), whose own calls bind
 * inside it: a definition there is called whether or not any object imports it. */
static bool reach_in_exe(const void *addr)
{
    hs_elf_obj_t o;
    return hs_elf_obj_of(addr, &o) && o.exe;
}

/* Whether the entry point name at addr, not hooked, still reaches heapsift through what its
 * code calls (reach_via.c): cc1's own operator new calls the malloc heapsift interposes;
 * libstdc++'s, when attached, the malloc hooked in libc. Said so; its frame is not the
 * allocation's site then (its caller is). */
static bool reach_family_via(reach_t *r, const char *name, void *addr, size_t size,
                             const char *owner)
{
    char through[32], what[300];
    if (!hs_reach_via(addr, size, reach_self, through, sizeof(through)))
        return false;
    snprintf(what, sizeof(what), "%s of %s", reach_label(name), hs_reach_base(owner));
    reach_add(&r->via, what);
    reach_add(&r->via_through, through);
    if (size)
        hs_unwind_add_wrapper((uintptr_t)addr, (uintptr_t)addr + size);
    return true;
}

/* One entry point found at addr (size bytes, 0 unknown) in the object at base: hooked,
 * reaching heapsift through what it calls (reach_family_via), or said to bypass heapsift
 * with why. */
static void reach_family_one(reach_t *r, size_t i, void *addr, size_t size, const void *base,
                             const char *owner)
{
    char why[160] = "";
    const char *name = hs_hooks_family_name(i);
    int rc = hs_hooks_family(i, addr, size, base, why, sizeof(why));
    if (rc == HS_HOOKS_NOOP) { /* frees nothing: its blocks stay, as the profiles say */
        reach_add(&r->hooked, "free (does nothing: left alone)");
        return;
    }
    if (rc == 0 || rc == HS_HOOKS_GOT) {
        reach_add(rc == 0 ? &r->hooked : &r->got, reach_label(name));
        r->hooked_owner = owner;
        if (rc == HS_HOOKS_GOT && !r->got_why[0])
            snprintf(r->got_why, sizeof(r->got_why), "%s%s%.100s",
                     strncmp(why, "HEAPSIFT_", 9) == 0 ? "" : reach_label(name),
                     strncmp(why, "HEAPSIFT_", 9) == 0 ? "" : " not in place: ", why);
        return;
    }
    if ((rc == -EPERM || rc == -ENOSYS) && reach_family_via(r, name, addr, size, owner))
        return;
    if (!reach_in_exe(addr) && !hs_reach_called(name, reach_self)) {
        reach_add(&r->uncalled, reach_label(name)); /* libc's pvalloc beside rustc's malloc */
        r->uncalled_owner = owner;
        return;
    }
    r->off |= rc == -ENOSYS;
    if (rc != -ENOSYS && !r->fam_why[0])
        snprintf(r->fam_why, sizeof(r->fam_why), "%s: %.120s", name, why);
    reach_add(&r->fam, reach_label(name));
    r->fam_owner = owner;
}

/* Where name's call binds when that is a definition outside heapsift (*o its object,
 * *size its symbol's size, 0 unknown: the patcher's sweep of the body for jumps back is
 * then bounded instead, 2 KiB of decoding per entry point at start), else NULL. Not a non-PIE
 * executable's PLT entry: one that takes malloc's address gets a canonical PLT slot, which dlsym
 * returns as the executable's "malloc" (an undefined symbol with a value: /usr/bin/python3 has
 * one); its calls still reach interposition. The symbol is found by its name's hash (dladdr1
 * walked all of cc1's 28,900 for each), by its address where the name has no hash entry. */
static void *reach_definition(const char *name, const void *self_base, hs_elf_obj_t *o,
                              size_t *size)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    *size = 0;
    if (!p || !hs_elf_obj_of(p, o) || o->base == self_base)
        return NULL;
    const ElfW(Sym) *sym = hs_elf_sym_named(o, name, p);
    if (!sym)
        sym = hs_elf_sym_at(o, p);
    if (sym)
        *size = sym->st_size;
    return sym && sym->st_shndx == SHN_UNDEF ? NULL : p;
}

/* The objects ahead of heapsift in the lookup order (the executable, libraries preloaded
 * before it), whose definitions dlsym(RTLD_DEFAULT) would find first. */
typedef struct {
    const void *self_base;
    bool past;    /* heapsift's own object seen */
    bool unknown; /* one ahead has no GNU hash table: dlsym must tell */
    int n;
    hs_elf_dyn_t ahead[8];
} reach_ahead_t;

static int reach_ahead_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    reach_ahead_t *a = arg;
    (void)size;
    if ((const void *)info->dlpi_addr == a->self_base) {
        a->past = true;
        return 1;
    }
    hs_elf_dyn_t o;
    if (!hs_elf_dyn(info, &o))
        return 0; /* no symbols: defines nothing */
    if (!o.gnu || a->n == (int)(sizeof(a->ahead) / sizeof(a->ahead[0])))
        a->unknown = true;
    else
        a->ahead[a->n++] = o;
    return 0;
}

/* Whether name may be defined ahead of heapsift, which defines it too: false only when
 * every object ahead says through its GNU hash table that it does not (a dlsym, a walk of
 * every object's table for each of the family's 29 names, was a third of the reach scan's
 * cost at start). */
static bool reach_maybe_ahead(const reach_ahead_t *a, const hs_elf_dyn_t *self, const char *name)
{
    if (!a->past || a->unknown || hs_elf_gnu_defines(self, name) != 1)
        return true;
    for (int k = 0; k < a->n; k++)
        if (hs_elf_gnu_defines(&a->ahead[k], name) != 0)
            return true;
    return false;
}

static int reach_self_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    hs_elf_dyn_t *o = arg;
    (void)size;
    if ((const void *)info->dlpi_addr != reach_self)
        return 0;
    if (!hs_elf_dyn(info, o))
        o->gnu = NULL;
    return 1;
}

static void reach_family_scan(reach_t *r, const void *self_base)
{
    reach_ahead_t a;
    hs_elf_dyn_t self;
    memset(&a, 0, sizeof(a));
    memset(&self, 0, sizeof(self));
    a.self_base = self_base;
    /* Objects ahead in the link map are those ahead in the lookup order only when
     * heapsift is in the global scope (not when attach dlopened it): its malloc is the one
     * found first then. */
    void *m = dlsym(RTLD_DEFAULT, "malloc");
    a.unknown = !m || hs_elf_base_of(m) != self_base;
    dl_iterate_phdr(reach_ahead_cb, &a);
    dl_iterate_phdr(reach_self_cb, &self);
    for (size_t i = 0; i < hs_hooks_family_count(); i++) {
        hs_elf_obj_t o;
        size_t size;
        if (!reach_maybe_ahead(&a, &self, hs_hooks_family_name(i)))
            continue;
        void *p = reach_definition(hs_hooks_family_name(i), self_base, &o, &size);
        if (p)
            reach_family_one(r, i, p, size, o.base, o.name);
    }
}

/* ---- allocator APIs: defined where, imported by whom ---------------------------- */

static const char *const reach_prefixes[] = {"je_", "_rjem_", "tc_", "mi_"};
#define REACH_NPREFIX (sizeof(reach_prefixes) / sizeof(reach_prefixes[0]))
/* Prefix i of an API, REACH_NPREFIX standing for none (jemalloc's mallocx & co). */
static const char *reach_api_prefix(size_t i)
{
    return i < REACH_NPREFIX ? reach_prefixes[i] : "";
}
static const char *const reach_apis[] = {"mallocx", "rallocx", "xallocx", "sdallocx", "dallocx"};

/* The allocation functions of the allocators' own APIs, after their prefix: jemalloc's
 * (je_, _rjem_, or none: mallocx ...), tcmalloc's tc_, mimalloc's mi_. Not their
 * internals (je_malloc_default, tc_malloc_stats). */
static const char *const reach_api_names[] = {
    "malloc",
    "calloc",
    "realloc",
    "free",
    "cfree",
    "mallocx",
    "rallocx",
    "xallocx",
    "sdallocx",
    "dallocx",
    "posix_memalign",
    "aligned_alloc",
    "memalign",
    "valloc",
    "pvalloc",
    "zalloc",
    "new",
    "newarray",
    "new_nothrow",
    "newarray_nothrow",
    "new_aligned",
    "newarray_aligned",
    "malloc_aligned",
    "zalloc_aligned",
    "calloc_aligned",
    "realloc_aligned",
};

/* Whether name starts as a prefix or an unprefixed name of reach_is_api's may: most symbols
 * stop here (a switch, where strchr cost cc1's 28,900 exported names 1.6 M instructions). */
static inline bool reach_api_lead(const char *name)
{
    switch (name[0]) {
    case 'j':
    case 't':
    case 'm':
    case 'r':
    case 'x':
    case 's':
    case 'd':
        return true;
    case '_':
        return name[1] == 'r';
    default:
        return false;
    }
}

static bool reach_is_api(const char *name)
{
    if (!reach_api_lead(name))
        return false;
    const char *rest = name;
    for (size_t i = 0; i < sizeof(reach_prefixes) / sizeof(reach_prefixes[0]); i++)
        if (strncmp(name, reach_prefixes[i], strlen(reach_prefixes[i])) == 0)
            rest = name + strlen(reach_prefixes[i]);
    size_t n = rest == name ? strlen(name) : 0;
    if (rest == name && (n < 6 || strcmp(name + n - 6, "allocx") != 0))
        return false; /* jemalloc's unprefixed names all end so */
    if (rest == name) /* unprefixed: only jemalloc's own names */
        for (size_t i = 0; i < sizeof(reach_apis) / sizeof(reach_apis[0]); i++)
            if (strcmp(name, reach_apis[i]) == 0)
                return true;
    for (size_t i = 0; rest != name && i < sizeof(reach_api_names) / sizeof(reach_api_names[0]);
         i++)
        if (strcmp(rest, reach_api_names[i]) == 0)
            return true;
    return false;
}

/* An API function heapsift has no hook for, at def (size bytes): said once the APIs found
 * are hooked (reach_pend_judge), since its code may call one of them. */
static void reach_pend(reach_t *r, void *def, size_t size, bool exe, const char *msg)
{
    if (reach_npend == (int)(sizeof(reach_pending) / sizeof(reach_pending[0]))) {
        reach_add(exe ? &r->nohook : &r->bypass, msg);
        return;
    }
    reach_pending[reach_npend].def = def;
    reach_pending[reach_npend].size = size;
    reach_pending[reach_npend].exe = exe;
    snprintf(reach_pending[reach_npend++].msg, sizeof(reach_pending[0].msg), "%.119s", msg);
}

/* Each pending function: reaching heapsift through what its code calls (a hooked
 * mallocx, a malloc heapsift interposes), or bypassing it. */
static void reach_pend_judge(reach_t *r, const char *exe)
{
    for (int i = 0; i < reach_npend; i++) {
        char through[64], what[300];
        if (!hs_reach_via(reach_pending[i].def, reach_pending[i].size, reach_self, through,
                          sizeof(through))) {
            reach_add(reach_pending[i].exe ? &r->nohook : &r->bypass, reach_pending[i].msg);
            continue;
        }
        snprintf(what, sizeof(what), "%s%s%s", reach_pending[i].msg,
                 reach_pending[i].exe ? " of " : "", reach_pending[i].exe ? exe : "");
        reach_add(&r->via, what);
        reach_add(&r->via_through, through);
    }
    reach_npend = 0;
}

typedef struct {
    reach_t *r;
    const void *self_base;
    const void *exe_base;
    int idx;
    bool exe_imports; /* the executable imports a member of the malloc family */
    bool dlopens;     /* an object imports dlopen: objects may come later */
} reach_walk_t;

/* For each allocator API an object imports (an undefined dynamic symbol), where the
 * dynamic linker binds it: a definition outside heapsift is a bypass. Also the APIs the
 * executable (object 0) defines itself, which its own calls reach directly. */
static int reach_family_index(const char *name);

#define REACH_EXE_HITS 64

/* name = prefix + rest, in out (cap bytes); false when it does not fit. */
static bool reach_join(char *out, size_t cap, const char *prefix, const char *rest)
{
    size_t a = strlen(prefix), b = strlen(rest);
    if (a + b >= cap)
        return false;
    memcpy(out, prefix, a);
    memcpy(out + a, rest, b + 1);
    return true;
}

/* The executable's definitions of the names reach_is_api takes, found by name through its
 * GNU hash table instead of reading every name it exports (cc1's 28,900: 1.8 M
 * instructions a process): their indexes, ascending, in hit[REACH_EXE_HITS]. How many, or
 * -1 when each name must be read (no such table, or too many). */
static int reach_exe_hits(const hs_elf_dyn_t *o, uint32_t *hit)
{
    int n = 0;
    char name[64];
    for (size_t p = 0; p <= REACH_NPREFIX; p++) {
        const char *const *rest = p < REACH_NPREFIX ? reach_api_names : reach_apis;
        size_t count = p < REACH_NPREFIX ? sizeof(reach_api_names) / sizeof(reach_api_names[0])
                                         : sizeof(reach_apis) / sizeof(reach_apis[0]);
        for (size_t k = 0; k < count; k++) {
            if (!reach_join(name, sizeof(name), reach_api_prefix(p), rest[k]))
                return -1;
            int m = hs_elf_gnu_find(o, name, hit + n, REACH_EXE_HITS - n);
            if (m < 0 || n + m == REACH_EXE_HITS)
                return -1;
            n += m;
        }
    }
    for (int i = 1; i < n; i++) /* a few: insertion */
        for (int j = i; j > 0 && hit[j - 1] > hit[j]; j--) {
            uint32_t x = hit[j];
            hit[j] = hit[j - 1];
            hit[j - 1] = x;
        }
    return n;
}

static int reach_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    reach_walk_t *w = arg;
    (void)size;
    int idx = w->idx++;
    hs_elf_dyn_t o;
    if (idx == 0)
        w->exe_base = (const void *)info->dlpi_addr;
    if ((const void *)info->dlpi_addr == w->self_base || !hs_elf_dyn(info, &o))
        return 0;
    const ElfW(Sym) *sym = o.sym;
    const char *str = o.str;
    /* A library's imports only: all below its GNU hash table's symbols, where it has one
     * (libc.so.6's 3,000 definitions were most of the scan's cost). */
    size_t end = idx == 0 ? o.nsyms : hs_elf_unhashed(&o);
    uint32_t hit[REACH_EXE_HITS];
    int nhit = idx == 0 ? reach_exe_hits(&o, hit) : -1, h = 0;
    /* the next definition to read: 0 each, SIZE_MAX none left */
    size_t next = nhit < 0 ? 0 : nhit > 0 ? hit[0] : SIZE_MAX;
    for (size_t i = 1; i < end && i < (1u << 22); i++) {
        bool defined = sym[i].st_shndx != SHN_UNDEF;
        if (defined) {
            /* a library's own definition is a bypass only where it is imported; of the
               executable's, only the API's names */
            if (idx != 0 || (next && i != next))
                continue;
            if (next)
                next = ++h < nhit ? hit[h] : SIZE_MAX;
            if (ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC)
                continue;
        }
        const char *name = str + sym[i].st_name;
        if (idx == 0 && !defined && !w->exe_imports && reach_family_index(name) >= 0)
            w->exe_imports = true;
        if (!defined && name[0] == 'd' &&
            (strcmp(name, "dlopen") == 0 || strcmp(name, "dlmopen") == 0))
            w->dlopens = true;
        if (!reach_is_api(name))
            continue;
        hs_elf_obj_t od;
        size_t dsize;
        void *def = reach_definition(name, w->self_base, &od, &dsize);
        if (!def)
            continue;
        const void *base = od.base;
        if (hs_reach_api_note(w->r, name, (uintptr_t)def, dsize, base,
                              base == w->exe_base ? NULL : od.name))
            continue; /* hookable: hooked after the scan (hs_reach_api_all) */
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg), "%s (%s, called by %s)", name, hs_reach_base(od.name),
                 hs_reach_base(info->dlpi_name));
        reach_pend(w->r, def, dsize, false, msg);
    }
    return 0;
}

/* ---- the executable's .symtab: Rust's allocator, static allocators ---------------- */

static bool reach_suffix(const char *s, const char *suffix)
{
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* The index of name among the hookable malloc family, or -1. */
static int reach_family_index(const char *name)
{
    for (size_t i = 0; i < hs_hooks_family_count(); i++)
        if (strcmp(name, hs_hooks_family_name(i)) == 0)
            return (int)i;
    return -1;
}

/* Which of Rust's allocator entry points name is (v0-mangled ..._7___rustc12___rust_alloc
 * or plain __rust_alloc), or -1. */
static int reach_rust_index(const char *name)
{
    if (!strstr(name, "__rust_"))
        return -1;
    for (int k = 0; k < HS_RUST_N; k++)
        if (reach_suffix(name, hs_hooks_rust_suffix[k]))
            return k;
    return -1;
}

/* Whether rs is Rust's default allocator: __rust_alloc's first instruction (after an
 * endbr64) jumps to ___rdl_alloc, which calls malloc (seen by interposition: counted once
 * there). In a cdylib every entry point is local, whichever allocator it has. */
bool hs_reach_rust_default(const reach_rust_t *rs)
{
    const uint8_t *c = rs->fn[HS_RUST_ALLOC];
    if (!c || !rs->rdl)
        return false;
    if (c[0] == 0xf3 && c[1] == 0x0f && c[2] == 0x1e && c[3] == 0xfa)
        c += 4;
    int32_t rel;
    memcpy(&rel, c + 1, sizeof(rel));
    return c[0] == 0xe9 && (uintptr_t)(c + 5) + (uintptr_t)(intptr_t)rel == rs->rdl;
}

/* Notes name at addr in rs when it is one of Rust's allocator entry points. */
bool hs_reach_rust_sym(reach_rust_t *rs, const char *name, uintptr_t addr, size_t size)
{
    int k = reach_rust_index(name);
    if (k >= 0) {
        rs->fn[k] = (void *)addr;
        rs->size[k] = size;
    } else if (reach_suffix(name, "___rdl_alloc"))
        rs->rdl = addr;
    return k >= 0;
}

/* The Rust #[global_allocator] of one object (owner: "the program's own" or a library's
 * name) hooked as one instance, __rust_dealloc first; said in r's lists. */
void hs_reach_rust_hook(reach_t *r, const reach_rust_t *rs, const char *owner)
{
    static const int order[] = {HS_RUST_DEALLOC, HS_RUST_ALLOC, HS_RUST_ALLOC_ZEROED,
                                HS_RUST_REALLOC};
    char why[160] = "", msg[REACH_MAX];
    if ((!rs->fn[HS_RUST_ALLOC] && !rs->fn[HS_RUST_ALLOC_ZEROED]) || hs_reach_rust_default(rs))
        return;
    int inst = hs_hooks_enabled() ? hs_hooks_rust_instance() : -ENOSYS, rc = inst;
    if (inst == -ENOSPC)
        snprintf(why, sizeof(why), "%d Rust allocators hooked already", HS_RUST_INSTANCES);
    for (size_t i = 0; inst >= 0 && i < sizeof(order) / sizeof(order[0]); i++) {
        int k = order[i];
        int one = rs->fn[k] ? hs_hooks_rust(inst, k, rs->fn[k], rs->size[k], why, sizeof(why)) : 0;
        if (one != 0 && one != HS_HOOKS_NOOP) {
            rc = one; /* the first refusal; what was hooked before it stays hooked */
            break;
        }
        rc = 0;
    }
    char through[32];
    if (rc != 0 && r->via.buf && rs->fn[HS_RUST_ALLOC] &&
        (r->planned ? r->rust_via
                    : hs_reach_via(rs->fn[HS_RUST_ALLOC], rs->size[HS_RUST_ALLOC], reach_self,
                                   through, sizeof(through)))) {
        /* a #[global_allocator] over System: its malloc */
        snprintf(msg, sizeof(msg), "__rust_alloc (a Rust #[global_allocator] of %s)", owner);
        reach_add(&r->via, msg);
        reach_add(&r->via_through, r->planned ? r->rust_through : through);
        return;
    }
    r->off |= rc == -ENOSYS;
    if (rc == 0 || rc == -ENOSYS)
        snprintf(msg, sizeof(msg), "__rust_alloc (a Rust #[global_allocator] of %s)", owner);
    else
        snprintf(msg, sizeof(msg),
                 "__rust_alloc (a Rust #[global_allocator] of %s; not hooked: %.200s)", owner, why);
    reach_add(rc == 0 ? &r->hooked : &r->bypass, msg);
}

/* Keeps name for hs_reach_api_all when it is a hookable function of an allocator's API
 * (once per entry point), defined at addr by the object at base (owner its name, NULL for
 * the executable). */
bool hs_reach_api_note(reach_t *r, const char *name, uintptr_t addr, size_t size, const void *base,
                       const char *owner)
{
    int k = -1;
    size_t i;
    for (i = 0; i <= REACH_NPREFIX && k < 0; i++) {
        size_t n = strlen(reach_api_prefix(i));
        if (strncmp(name, reach_api_prefix(i), n) == 0)
            k = hs_hooks_api_index(reach_api_prefix(i), name + n);
    }
    if (k < 0)
        return false;
    for (int j = 0; j < r->napi; j++)
        if (r->api[j].addr == (void *)addr)
            return true;
    if (r->napi < (int)(sizeof(r->api) / sizeof(r->api[0]))) {
        r->api[r->napi].prefix = (uint8_t)(i - 1);
        r->api[r->napi].k = (int8_t)k;
        r->api[r->napi].addr = (void *)addr;
        r->api[r->napi].size = size;
        r->api[r->napi].base = base;
        r->api[r->napi++].owner = owner;
    }
    return true;
}

/* Whether API function i (named name), not hooked, reaches heapsift through what its code
 * calls (planned, or asked now), said so in r's lists. */
static bool reach_api_via(reach_t *r, int i, const char *name)
{
    char through[24], what[300];
    if (!r->via.buf)
        return false;
    if (r->planned
            ? !r->api[i].via
            : !hs_reach_via(r->api[i].addr, r->api[i].size, reach_self, through, sizeof(through)))
        return false;
    snprintf(what, sizeof(what), "%s of %s", name,
             r->api[i].owner ? hs_reach_base(r->api[i].owner) : "the program");
    reach_add(&r->via, what);
    reach_add(&r->via_through, r->planned ? r->api[i].through : through);
    return true;
}

/* Hooks the functions of r->api[first]'s API (its prefix, its object) noted from first on,
 * releases first (hs_hooks_api), marking them done; which were hooked goes into *h, which
 * not into *m, with the first refusal's reason into refused. Returns whether the hooks
 * were off. */
static bool reach_api_hook(reach_t *r, int first, bool *done, reach_list_t *h, reach_list_t *m,
                           char *refused, size_t rlen)
{
    const void *base = r->api[first].base;
    uint8_t pi = r->api[first].prefix;
    const char *prefix = reach_api_prefix(pi);
    char why[160] = "";
    bool release = r->planned ? r->api_release : hs_hooks_frees_into(base);
    int inst = hs_hooks_api_instance(prefix, base, release, why, sizeof(why));
    for (int k = 0; k < hs_hooks_api_count(); k++)
        for (int i = first; i < r->napi; i++) {
            if (r->api[i].k != k || r->api[i].prefix != pi || r->api[i].base != base)
                continue;
            char name[64];
            snprintf(name, sizeof(name), "%s%s", prefix, hs_hooks_api_name(k));
            done[i] = true;
            if (inst >= 0)
                why[0] = '\0';
            int rc = inst < 0
                         ? inst
                         : hs_hooks_api(inst, k, r->api[i].addr, r->api[i].size, why, sizeof(why));
            if (rc == 0 || rc == HS_HOOKS_NOOP || rc == HS_HOOKS_ALIAS) {
                reach_add(h, name);
                continue;
            }
            if (reach_api_via(r, i, name))
                continue;
            reach_add(m, name);
            if (!refused[0] && rc != -ENOSYS)
                snprintf(refused, rlen, "%s%s%.150s", rc == -EPERM || inst < 0 ? "" : name,
                         rc == -EPERM || inst < 0 ? "" : ": ", why[0] ? why : "not hooked");
        }
    if (inst >= 0)
        hs_hooks_api_done(inst, r->obj_lo, r->obj_hi);
    return inst == -ENOSYS;
}

/* One API (r->api[first]'s prefix and object) hooked, and said: "je_* (its own API)",
 * "mallocx, sdallocx (libjemalloc.so.2's own allocator API)", or what bypasses and why. */
static void reach_api_group(reach_t *r, int first, bool *done)
{
    char hooked[REACH_MAX] = "", missed[REACH_MAX] = "", refused[240] = "", msg[REACH_MAX];
    reach_list_t h = {hooked, 0, 0}, m = {missed, 0, 0};
    const char *prefix = reach_api_prefix(r->api[first].prefix);
    const char *owner = r->api[first].owner;
    bool off = reach_api_hook(r, first, done, &h, &m, refused, sizeof(refused));
    r->off |= off;
    if (h.n) {
        if (prefix[0])
            snprintf(msg, sizeof(msg), "%s* (%s%s)", prefix, owner ? hs_reach_base(owner) : "",
                     owner ? "'s own allocator API" : "its own API");
        else if (owner)
            snprintf(msg, sizeof(msg), "%.700s (%.200s's own allocator API)", hooked,
                     hs_reach_base(owner));
        else /* jemalloc's, beside the executable's malloc family */
            snprintf(msg, sizeof(msg), "%s%s", hooked, r->hooked_owner ? "" : " (its own API)");
        reach_add(&r->hooked, msg);
    }
    if (!m.n)
        return;
    snprintf(msg, sizeof(msg), "%.500s%s (%.200s%s%s%s)", h.n || !prefix[0] ? missed : prefix,
             h.n || !prefix[0] ? "" : "*", owner ? hs_reach_base(owner) : "an allocator",
             owner ? "'s own allocator API" : "'s own API",
             off ? "" : "; not hooked: ", off ? "" : refused);
    reach_add(&r->bypass, msg);
}

/* The API functions noted, one API (prefix and object) at a time. */
void hs_reach_api_all(reach_t *r)
{
    bool done[sizeof(r->api) / sizeof(r->api[0])] = {false};
    for (int i = 0; i < r->napi; i++)
        if (!done[i])
            reach_api_group(r, i, done);
    r->napi = 0;
}

static void *reach_mallctl; /* the executable's own mallctl, from its .symtab */

void *hs_reach_mallctl(void)
{
    return __atomic_load_n(&reach_mallctl, __ATOMIC_ACQUIRE);
}

typedef struct {
    reach_t *r;
    uint32_t fam; /* a bit per family member the executable defines */
    uintptr_t fam_addr[32];
    size_t fam_size[32];
    uintptr_t base;
} reach_exe_t;

/* One of the executable's own definitions: family members are noted (bound inside it even
 * where it exports none of them); Rust's local entry points and the allocators' APIs are
 * kept for hooking; the allocators linked in are said. */
static void reach_exe_sym(void *arg, const char *name, uintptr_t value, size_t size, bool local)
{
    reach_exe_t *x = arg;
    reach_t *r = x->r;
    if (!local && strcmp(name, "mallctl") == 0) /* a static jemalloc's, for accounting.c */
        __atomic_store_n(&reach_mallctl, (void *)(x->base + value), __ATOMIC_RELEASE);
    int fi = reach_family_index(name);
    if (fi >= 0 && fi < 32) {
        x->fam |= 1u << fi;
        x->fam_addr[fi] = x->base + value;
        x->fam_size[fi] = size;
    } else if (fi >= 0)
        return;
    else if (local && hs_reach_rust_sym(&r->rust, name, x->base + value, size))
        return;
    else if (local || hs_hooks_hooked((void *)(x->base + value)))
        return; /* an allocator's internals, or an alias of a hooked entry */
    else if (hs_reach_api_note(r, name, x->base + value, size, (const void *)x->base, NULL))
        return; /* hookable: hooked after the scan (hs_reach_api_all) */
    else if (reach_is_api(name))
        reach_pend(r, (void *)(x->base + value), size, true, name); /* je_valloc, mi_new */
}

/* The executable's path, as the dynamic linker knows it (its link map's name is ""). */
static const char *reach_exe_name(void)
{
    static char path[256];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    path[n > 0 ? n : 0] = '\0';
    return path;
}

static int reach_exe_base(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    *(uintptr_t *)arg = info->dlpi_addr;
    return 1; /* the executable comes first */
}

/* exe_imports: the executable imports malloc or a relative (reach_object). */
static void reach_exe_symtab(reach_t *r, bool exe_imports)
{
    reach_exe_t x;
    memset(&x, 0, sizeof(x));
    x.r = r;
    size_t size;
    void *p = hs_elf_map_file("/proc/self/exe", &size);
    if (p == MAP_FAILED)
        return;
    dl_iterate_phdr(reach_exe_base, &x.base);
    bool symtab = hs_elf_symtab_each(p, size, reach_exe_sym, &x);
    munmap(p, size);
    hs_reach_rust_hook(r, &r->rust, "the program's own");
    hs_reach_api_all(r);
    reach_pend_judge(r, hs_reach_base(reach_exe_name()));
    if (r->nohook.n) {
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg), "%s (defined by %s; heapsift has no hook for them)",
                 r->nohook.buf, hs_reach_base(reach_exe_name()));
        reach_add(&r->bypass, msg);
    }
    if (r->hooked.n || r->fam.n || r->via.n)
        return; /* exported, so found by dlsym: already hooked or said */
    /* A stripped executable that imports no malloc at all, yet is dynamically linked: it
     * allocates through something linked into it, which no name shows (every Debian
     * program that uses libc's malloc imports it). */
    if (!symtab && !exe_imports && !r->bypass.n) {
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg),
                 "an allocator linked into %s (it has no symbol table and imports no "
                 "malloc, so heapsift cannot find its entry points)",
                 hs_reach_base(reach_exe_name()));
        reach_add(&r->bypass, msg);
    }
    for (size_t i = 0; i < hs_hooks_family_count(); i++)
        if ((x.fam & (1u << i)) &&
            !reach_family_via(r, hs_hooks_family_name(i), (void *)x.fam_addr[i], x.fam_size[i],
                              reach_exe_name())) {
            reach_add(&r->fam, reach_label(hs_hooks_family_name(i)));
            r->fam_owner = reach_exe_name();
            if (!r->fam_why[0])
                snprintf(r->fam_why, sizeof(r->fam_why), "not exported");
        }
}

/* Whether the line is said on stderr too: only when asked (HEAPSIFT_VERBOSE=1), and not
 * under heapsift run, which says it in its summary, once for all the processes it ran. A program's
 * stderr is the program's: a compiler that defines its own operator new would print the line into
 * every compile, and configure scripts take any output on a compiler's stderr for a failure. The
 * line always goes into the profiles' comments (and so into heapsift top, stats and run's summary).
 */
bool hs_reach_loud(void)
{
    static int run = -1; /* under heapsift run, whose summary says it once for the tree */
    if (run < 0)
        run = getenv("HEAPSIFT_RUN_REPORT") != NULL;
    return hs_opt.verbose && !run && !__atomic_load_n(&reach_quiet, __ATOMIC_RELAXED);
}

void hs_reach_plan(reach_t *r, const reach_rust_t *rs, uintptr_t lo, uintptr_t hi)
{
    r->obj_lo = lo;
    r->obj_hi = hi;
    r->api_release = r->napi > 0 && hs_hooks_frees_into(r->api[0].base);
    for (int i = 0; i < r->napi; i++)
        r->api[i].via = hs_reach_via(r->api[i].addr, r->api[i].size, reach_self, r->api[i].through,
                                     sizeof(r->api[i].through));
    r->rust_via =
        rs->fn[HS_RUST_ALLOC] && hs_reach_via(rs->fn[HS_RUST_ALLOC], rs->size[HS_RUST_ALLOC],
                                              reach_self, r->rust_through, sizeof(r->rust_through));
    r->planned = true;
}

void hs_reach_via_text(const reach_t *r, const char *sep, char *out, size_t cap)
{
    out[0] = '\0';
    if (r->via.n)
        snprintf(out, cap, "%s%s reach heapsift through the %s they call", sep, r->via.buf,
                 r->via_through.buf);
}

/* The one line: what is hooked, then what still bypasses heapsift and why. */
static void reach_say(reach_t *r)
{
    char fam[REACH_MAX];
    if (r->fam.n) {
        snprintf(fam, sizeof(fam), "%s defined by %s%s%s%s", r->fam.buf,
                 hs_reach_base(r->fam_owner), r->fam_why[0] ? " (not hooked: " : "", r->fam_why,
                 r->fam_why[0] ? ")" : "");
        reach_add(&r->bypass, fam);
    }
    size_t k = 0;
    if (r->hooked.n)
        k = (size_t)snprintf(
            hs_reach_line, sizeof(hs_reach_line), "reach: hooked in place: %s%s%s%s", r->hooked.buf,
            r->hooked_owner ? " (defined by " : "",
            r->hooked_owner ? hs_reach_base(r->hooked_owner) : "", r->hooked_owner ? ")" : "");
    if (r->got.n && k < sizeof(hs_reach_line))
        k += (size_t)snprintf(hs_reach_line + k, sizeof(hs_reach_line) - k,
                              "%shooked through %zu import slots: %s (defined by %s; %s)",
                              k ? "; " : "reach: ", hs_got_count(), r->got.buf,
                              hs_reach_base(r->hooked_owner), r->got_why);
    if (r->via.n && k < sizeof(hs_reach_line)) {
        char via[REACH_MAX];
        hs_reach_via_text(r, k ? "; " : "reach: ", via, sizeof(via));
        k += (size_t)snprintf(hs_reach_line + k, sizeof(hs_reach_line) - k, "%s", via);
    }
    if (r->uncalled.n && k < sizeof(hs_reach_line))
        k += (size_t)snprintf(hs_reach_line + k, sizeof(hs_reach_line) - k,
                              "%snot hooked, but bound by no call of any object loaded: %s of %s",
                              k ? "; " : "reach: ", r->uncalled.buf,
                              hs_reach_base(r->uncalled_owner));
    if (r->bypass.n && k < sizeof(hs_reach_line) && hs_reach_via_blind())
        snprintf(hs_reach_line + k, sizeof(hs_reach_line) - k,
                 "%scalls may bypass heapsift: %s; whether their code calls what reaches "
                 "heapsift is not known (no decoder here: libZydis.so.4.0, x86-64)%s",
                 k ? "; " : "reach: ", r->bypass.buf, r->off ? " (HEAPSIFT_HOOKS=off)" : "");
    else if (r->bypass.n && k < sizeof(hs_reach_line))
        snprintf(hs_reach_line + k, sizeof(hs_reach_line) - k,
                 "%scalls bypass heapsift: %s; the memory they allocate is not in its "
                 "profiles%s",
                 k ? "; " : "reach: ", r->bypass.buf, r->off ? " (HEAPSIFT_HOOKS=off)" : "");
    if (hs_reach_line[0] && hs_reach_loud())
        hs_log("%s", hs_reach_line);
}

void hs_reach_set_quiet(bool quiet)
{
    __atomic_store_n(&reach_quiet, quiet, __ATOMIC_RELAXED);
}

void hs_reach_detect(void)
{
    Dl_info self;
    char hooked[REACH_MAX] = "", bypass[REACH_MAX] = "", fam[REACH_MAX] = "", got[REACH_MAX] = "";
    char via[REACH_MAX] = "", through[REACH_MAX] = "", nohook[REACH_MAX] = "";
    char uncalled[REACH_MAX] = "";
    reach_t r;
    memset(&r, 0, sizeof(r));
    r.hooked.buf = hooked;
    r.got.buf = got;
    r.via.buf = via;
    r.via_through.buf = through;
    r.uncalled.buf = uncalled;
    r.bypass.buf = bypass;
    r.fam.buf = fam;
    r.nohook.buf = nohook;
    if (!dladdr((void *)&hs_reach_detect, &self))
        return;
    reach_self = self.dli_fbase;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t); /* dlsym and dladdr may allocate */
    reach_family_scan(&r, self.dli_fbase);
    reach_walk_t w = {&r, self.dli_fbase, NULL, 0, false, false};
    dl_iterate_phdr(reach_object, &w);
    reach_exe_symtab(&r, w.exe_imports);
    reach_pend_judge(&r, hs_reach_base(reach_exe_name())); /* if the executable was not read */
    hs_reach_later_start(self.dli_fbase, w.dlopens && hs_hooks_enabled());
    hs_guard_exit(t);
    reach_say(&r);
}

const char *hs_reach_comment(void)
{
    return hs_reach_line[0] ? hs_reach_line : NULL;
}

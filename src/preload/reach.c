/*
 * Reach: which allocation entry points a program's calls can reach without passing
 * through heapsift, found once at start. A preloaded library sees only the calls that
 * the dynamic linker binds to it; these it cannot see:
 *   - the malloc family and operator new/delete defined by the executable or by an
 *     object ahead of libheapsift.so in the lookup scope (Chromium's own allocator, a
 *     static tcmalloc or jemalloc): dlsym(RTLD_DEFAULT) finds their definition, not ours;
 *   - an allocator's own API (jemalloc's mallocx and je_*, _rjem_* as tikv-jemallocator
 *     builds it, tcmalloc's tc_*, mimalloc's mi_*) defined in the executable, or defined
 *     in a library and imported by another object;
 *   - a Rust #[global_allocator] of the program's own: its __rust_alloc entry points are
 *     local symbols of the executable (.symtab), bound inside it.
 * The malloc family and Rust's entry points are hooked in place where hooks.c can
 * (HEAPSIFT_HOOKS=auto, x86-64); the allocators' own APIs are not yet. What was hooked and
 * what still bypasses heapsift, with why, is said in one line on stderr and kept for the
 * profiles' comments (and so for the headers of heapsift top and stats): a profile must
 * never be empty in silence.
 * Nothing here runs on an allocation path; it reads the loaded objects' dynamic symbol
 * tables in memory and the executable's .symtab through fdio.h.
 */
#define _GNU_SOURCE
#include "reach.h"
#include "core.h"
#include "fdio.h"
#include "hooks.h"
#include "log.h"

#include <dlfcn.h>
#include <errno.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REACH_MAX 768

static char reach_line[REACH_MAX]; /* "" = nothing bypasses heapsift */

typedef struct {
    char *buf;
    size_t len;
    int n;
} reach_list_t;

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

static const char *reach_base(const char *path)
{
    const char *s = path ? strrchr(path, '/') : NULL;
    return s ? s + 1 : (path && *path ? path : "the executable");
}

/* ---- the malloc family ahead of heapsift: hooked in place where possible ---------- */

/* What was hooked and what still bypasses heapsift, for the one line. */
typedef struct {
    reach_list_t hooked, bypass; /* bypass: each entry with where and why */
    reach_list_t fam;            /* the malloc family's members not hooked */
    const char *hooked_owner, *fam_owner;
    char fam_why[200]; /* the first refusal among them */
    struct {
        uint8_t prefix; /* index in reach_prefixes */
        int8_t k;       /* hs_hooks_api_index */
        void *addr;
        size_t size;
    } api[48]; /* an allocator's own API functions found in .symtab */
    int napi;
    void *rust[HS_RUST_N]; /* Rust's local entry points found in .symtab, and their sizes */
    size_t rust_size[HS_RUST_N];
    bool off; /* HEAPSIFT_HOOKS=off or no hooks in this build */
} reach_t;

static const char *reach_label(const char *name)
{
    return name[0] == '_' && name[1] == 'Z' ? "operator new/delete" : name;
}

/* One entry point found at addr (size bytes, 0 unknown) in the object at base: hooked, or
 * said to bypass heapsift with why. */
static void reach_family_one(reach_t *r, size_t i, void *addr, const void *base, const char *owner)
{
    char why[160] = "";
    const char *name = hs_hooks_family_name(i);
    int rc = hs_hooks_family(i, addr, 0, base, why, sizeof(why));
    if (rc == HS_HOOKS_NOOP) { /* frees nothing: its blocks stay, as the profiles say */
        reach_add(&r->hooked, "free (does nothing: left alone)");
        return;
    }
    if (rc == 0) {
        reach_add(&r->hooked, reach_label(name));
        r->hooked_owner = owner;
        return;
    }
    r->off |= rc == -ENOSYS;
    if (rc != -ENOSYS && !r->fam_why[0])
        snprintf(r->fam_why, sizeof(r->fam_why), "%s: %.120s", name, why);
    reach_add(&r->fam, reach_label(name));
    r->fam_owner = owner;
}

/* Where name's call binds when that is a definition outside heapsift (*di its object),
 * else NULL. Not a non-PIE executable's PLT entry: one that takes malloc's address gets a
 * canonical PLT slot, which dlsym returns as the executable's "malloc" (an undefined
 * symbol with a value: /usr/bin/python3 has one); its calls still reach interposition. */
static void *reach_definition(const char *name, const void *self_base, Dl_info *di)
{
    void *p = dlsym(RTLD_DEFAULT, name);
    const ElfW(Sym) *sym = NULL;
    if (!p || !dladdr1(p, di, (void **)&sym, RTLD_DL_SYMENT) || di->dli_fbase == self_base)
        return NULL;
    return sym && sym->st_shndx == SHN_UNDEF ? NULL : p;
}

static void reach_family_scan(reach_t *r, const void *self_base)
{
    for (size_t i = 0; i < hs_hooks_family_count(); i++) {
        Dl_info di;
        void *p = reach_definition(hs_hooks_family_name(i), self_base, &di);
        if (p)
            reach_family_one(r, i, p, di.dli_fbase, di.dli_fname);
    }
}

/* ---- allocator APIs: defined where, imported by whom ---------------------------- */

static const char *const reach_prefixes[] = {"je_", "_rjem_", "tc_", "mi_"};
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

static bool reach_is_api(const char *name)
{
    const char *rest = name;
    for (size_t i = 0; i < sizeof(reach_prefixes) / sizeof(reach_prefixes[0]); i++)
        if (strncmp(name, reach_prefixes[i], strlen(reach_prefixes[i])) == 0)
            rest = name + strlen(reach_prefixes[i]);
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

/* The number of dynamic symbols of an object, from DT_HASH or DT_GNU_HASH. */
static size_t reach_nsyms(const ElfW(Dyn) * dyn, ElfW(Addr) base)
{
    const uint32_t *hash = NULL, *gnu = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        ElfW(Addr) a = d->d_un.d_ptr < base ? d->d_un.d_ptr + base : d->d_un.d_ptr;
        if (d->d_tag == DT_HASH)
            hash = (const uint32_t *)a;
        else if (d->d_tag == DT_GNU_HASH)
            gnu = (const uint32_t *)a;
    }
    if (hash)
        return hash[1];
    if (!gnu)
        return 0;
    uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom = gnu[2];
    const uint32_t *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        last = buckets[b] > last ? buckets[b] : last;
    if (last < symoffset)
        return symoffset;
    while (!(chain[last - symoffset] & 1))
        last++;
    return last + 1;
}

typedef struct {
    reach_list_t *l;
    const void *self_base;
    int idx;
    bool exe_imports; /* the executable imports a member of the malloc family */
} reach_walk_t;

/* For each allocator API an object imports (an undefined dynamic symbol), where the
 * dynamic linker binds it: a definition outside heapsift is a bypass. Also the APIs the
 * executable (object 0) defines itself, which its own calls reach directly. */
static int reach_family_index(const char *name);

static int reach_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    reach_walk_t *w = arg;
    (void)size;
    int idx = w->idx++;
    const ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    if (!dyn || (const void *)info->dlpi_addr == w->self_base)
        return 0;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        ElfW(Addr) a =
            d->d_un.d_ptr < info->dlpi_addr ? d->d_un.d_ptr + info->dlpi_addr : d->d_un.d_ptr;
        if (d->d_tag == DT_SYMTAB)
            sym = (const ElfW(Sym) *)a;
        else if (d->d_tag == DT_STRTAB)
            str = (const char *)a;
    }
    size_t n = sym && str ? reach_nsyms(dyn, info->dlpi_addr) : 0;
    for (size_t i = 1; i < n && i < (1u << 22); i++) {
        bool defined = sym[i].st_shndx != SHN_UNDEF;
        if (defined && idx != 0)
            continue; /* a library's own definition: a bypass only where it is imported */
        if (defined && ELF64_ST_TYPE(sym[i].st_info) != STT_FUNC)
            continue;
        const char *name = str + sym[i].st_name;
        if (idx == 0 && !defined && reach_family_index(name) >= 0)
            w->exe_imports = true;
        if (!reach_is_api(name))
            continue;
        Dl_info di;
        if (!reach_definition(name, w->self_base, &di))
            continue;
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg), "%s (%s, called by %s)", name, reach_base(di.dli_fname),
                 reach_base(info->dlpi_name));
        reach_add(w->l, msg);
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

/* A local Rust entry point: the program's own #[global_allocator] (with Rust's default
 * one they are global and forward to malloc, which interposition sees). */
static void reach_rust_one(reach_t *r, int k, void *addr, size_t size)
{
    static const char what[] = "__rust_alloc (a Rust #[global_allocator] of the program's own)";
    char why[160] = "", msg[REACH_MAX];
    int rc = hs_hooks_rust(k, addr, size, why, sizeof(why));
    if (rc == 0) {
        reach_add(&r->hooked, what);
        return;
    }
    if (rc == HS_HOOKS_NOOP)
        return; /* a dealloc that frees nothing: its blocks stay, as the profiles say */
    r->off |= rc == -ENOSYS;
    if (rc == -ENOSYS)
        snprintf(msg, sizeof(msg), "%s", what);
    else
        snprintf(msg, sizeof(msg),
                 "%s (a Rust #[global_allocator] of the program's own; not hooked: %.200s)",
                 hs_hooks_rust_suffix[k], why);
    reach_add(&r->bypass, msg);
}

/* Keeps name for reach_api_all when it is a hookable function of an allocator's API. */
static bool reach_api_note(reach_t *r, const char *name, uintptr_t addr, size_t size)
{
    for (size_t i = 0; i < sizeof(reach_prefixes) / sizeof(reach_prefixes[0]); i++) {
        size_t n = strlen(reach_prefixes[i]);
        int k = strncmp(name, reach_prefixes[i], n) == 0 ? hs_hooks_api_index(name + n) : -1;
        if (k < 0)
            continue;
        if (r->napi < (int)(sizeof(r->api) / sizeof(r->api[0]))) {
            r->api[r->napi].prefix = (uint8_t)i;
            r->api[r->napi].k = (int8_t)k;
            r->api[r->napi].addr = (void *)addr;
            r->api[r->napi++].size = size;
        }
        return true;
    }
    return false;
}

/* The API functions noted, of the first prefix found, frees first (hs_hooks_api). */
static void reach_api_all(reach_t *r)
{
    char why[160] = "", refused[160] = "", msg[REACH_MAX];
    int prefix = r->napi ? r->api[0].prefix : -1;
    for (int k = 0; k < 16; k++) /* hs_hooks_api_index's order (11 functions) */
        for (int i = 0; i < r->napi; i++) {
            if (r->api[i].k != k || r->api[i].prefix != prefix)
                continue;
            int rc = hs_hooks_api(reach_prefixes[prefix], k, r->api[i].addr, r->api[i].size, why,
                                  sizeof(why));
            if (rc != 0 && rc != HS_HOOKS_NOOP && !refused[0])
                snprintf(refused, sizeof(refused), "%s", why[0] ? why : "not hooked");
            r->off |= rc == -ENOSYS;
        }
    if (prefix < 0)
        return;
    if (!refused[0]) {
        snprintf(msg, sizeof(msg), "%s* (its own API)", reach_prefixes[prefix]);
        reach_add(&r->hooked, msg);
    } else {
        snprintf(msg, sizeof(msg), "%s* (an allocator's own API%s%.200s)", reach_prefixes[prefix],
                 r->off ? "" : "; not hooked: ", r->off ? "" : refused);
        reach_add(&r->bypass, msg);
    }
}

/* Rust's entry points, __rust_dealloc first (hs_hooks_rust). */
static void reach_rust_all(reach_t *r)
{
    static const int order[] = {HS_RUST_DEALLOC, HS_RUST_ALLOC, HS_RUST_ALLOC_ZEROED,
                                HS_RUST_REALLOC};
    if (!r->rust[HS_RUST_ALLOC] && !r->rust[HS_RUST_ALLOC_ZEROED])
        return;
    for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
        if (r->rust[order[i]])
            reach_rust_one(r, order[i], r->rust[order[i]], r->rust_size[order[i]]);
}

/* The executable's own definitions in its .symtab (loaded at base): *fam gets a bit per
 * family member it defines (bound inside it even where it exports none of them); Rust's
 * local entry points are hooked; the allocators linked in are said. */
static bool reach_symtab_scan(reach_t *r, uint32_t *fam, uintptr_t base, const uint8_t *f,
                              size_t size)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        return false;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    bool found = false;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size)
            return found;
        found = true;
        const Elf64_Sym *s = (const Elf64_Sym *)(f + sh[i].sh_offset);
        const char *names = (const char *)(f + strs->sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof(*s); k++) {
            if (s[k].st_name >= strs->sh_size || s[k].st_shndx == SHN_UNDEF ||
                ELF64_ST_TYPE(s[k].st_info) != STT_FUNC)
                continue;
            const char *name = names + s[k].st_name;
            bool local = ELF64_ST_BIND(s[k].st_info) == STB_LOCAL;
            int fi = reach_family_index(name), ri = local ? reach_rust_index(name) : -1;
            if (fi >= 0)
                *fam |= 1u << fi;
            else if (ri >= 0) {
                r->rust[ri] = (void *)(base + s[k].st_value);
                r->rust_size[ri] = s[k].st_size;
            } else if (local || hs_hooks_hooked((void *)(base + s[k].st_value)))
                continue; /* an allocator's internals, or an alias of a hooked entry */
            else if (reach_api_note(r, name, base + s[k].st_value, s[k].st_size))
                continue; /* hookable: hooked after the scan (reach_api_all) */
            else if (strncmp(name, "_rjem_", 6) == 0 && reach_is_api(name))
                reach_add(&r->bypass, "_rjem_* (jemalloc linked into the executable)");
            else if (strncmp(name, "je_", 3) == 0 && reach_is_api(name))
                reach_add(&r->bypass, "je_* (jemalloc linked into the executable)");
            else if (strncmp(name, "tc_", 3) == 0 && reach_is_api(name))
                reach_add(&r->bypass, "tc_* (tcmalloc linked into the executable)");
            else if (strncmp(name, "mi_", 3) == 0 && reach_is_api(name))
                reach_add(&r->bypass, "mi_* (mimalloc linked into the executable)");
        }
    }
    return found;
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
    uint32_t bits = 0;
    uintptr_t base = 0;
    struct stat st;
    int fd = hs_fd_open("/proc/self/exe", O_RDONLY, 0);
    if (fd < 0)
        return;
    void *p = MAP_FAILED;
    if (hs_fd_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        p = hs_fd_mmap((size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    hs_fd_close(fd);
    if (p == MAP_FAILED)
        return;
    dl_iterate_phdr(reach_exe_base, &base);
    bool symtab = reach_symtab_scan(r, &bits, base, p, (size_t)st.st_size);
    munmap(p, (size_t)st.st_size);
    reach_rust_all(r);
    reach_api_all(r);
    if (r->hooked.n || r->fam.n)
        return; /* exported, so found by dlsym: already hooked or said */
    /* A stripped executable that imports no malloc at all, yet is dynamically linked: it
     * allocates through something linked into it, which no name shows (every Debian
     * program that uses libc's malloc imports it). */
    if (!symtab && !exe_imports && !r->bypass.n) {
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg),
                 "an allocator linked into %s (it has no symbol table and imports no "
                 "malloc, so heapsift cannot find its entry points)",
                 reach_base(reach_exe_name()));
        reach_add(&r->bypass, msg);
    }
    for (size_t i = 0; i < hs_hooks_family_count(); i++)
        if (bits & (1u << i)) {
            reach_add(&r->fam, reach_label(hs_hooks_family_name(i)));
            r->fam_owner = reach_exe_name();
            if (!r->fam_why[0])
                snprintf(r->fam_why, sizeof(r->fam_why), "not exported");
        }
}

/* The one line: what is hooked, then what still bypasses heapsift and why. */
static void reach_say(reach_t *r)
{
    char fam[REACH_MAX];
    if (r->fam.n) {
        snprintf(fam, sizeof(fam), "%s defined by %s%s%s%s", r->fam.buf, reach_base(r->fam_owner),
                 r->fam_why[0] ? " (not hooked: " : "", r->fam_why, r->fam_why[0] ? ")" : "");
        reach_add(&r->bypass, fam);
    }
    size_t k = 0;
    if (r->hooked.n)
        k = (size_t)snprintf(reach_line, sizeof(reach_line), "reach: hooked in place: %s%s%s%s",
                             r->hooked.buf, r->hooked_owner ? " (defined by " : "",
                             r->hooked_owner ? reach_base(r->hooked_owner) : "",
                             r->hooked_owner ? ")" : "");
    if (r->bypass.n && k < sizeof(reach_line))
        snprintf(reach_line + k, sizeof(reach_line) - k,
                 "%scalls bypass heapsift: %s; the memory they allocate is not in its "
                 "profiles%s",
                 k ? "; " : "reach: ", r->bypass.buf, r->off ? " (HEAPSIFT_HOOKS=off)" : "");
    if (reach_line[0])
        hs_log("%s", reach_line);
}

void hs_reach_detect(void)
{
    Dl_info self;
    char hooked[REACH_MAX] = "", bypass[REACH_MAX] = "", fam[REACH_MAX] = "";
    reach_t r;
    memset(&r, 0, sizeof(r));
    r.hooked.buf = hooked;
    r.bypass.buf = bypass;
    r.fam.buf = fam;
    if (!dladdr((void *)&hs_reach_detect, &self))
        return;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t); /* dlsym and dladdr may allocate */
    reach_family_scan(&r, self.dli_fbase);
    reach_walk_t w = {&r.bypass, self.dli_fbase, 0, false};
    dl_iterate_phdr(reach_object, &w);
    reach_exe_symtab(&r, w.exe_imports);
    hs_guard_exit(t);
    reach_say(&r);
}

const char *hs_reach_comment(void)
{
    return reach_line[0] ? reach_line : NULL;
}

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
 * What is found is said in one line on stderr and kept for the profiles' comments (and so
 * for the headers of heapsift top and stats): a profile must never be empty in silence.
 * Nothing here runs on an allocation path; it reads the loaded objects' dynamic symbol
 * tables in memory and the executable's .symtab through fdio.h.
 */
#define _GNU_SOURCE
#include "reach.h"
#include "core.h"
#include "fdio.h"
#include "log.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REACH_MAX 512

static char reach_line[REACH_MAX]; /* "" = nothing bypasses heapsift */

typedef struct {
    char *buf;
    size_t len;
    int n;
} reach_list_t;

static void reach_add(reach_list_t *l, const char *what)
{
    if (strstr(l->buf, what)) /* once each */
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

/* ---- the malloc family ahead of heapsift ---------------------------------------- */

static const char *const reach_family[] = {
    "malloc",         "free",          "calloc", "realloc", "memalign",
    "posix_memalign", "aligned_alloc", "valloc", "pvalloc", "malloc_usable_size",
    "_Znwm",          "_Znam",         "_ZdlPv", "_ZdaPv",  "_ZdlPvm",
    "_ZdaPvm",
};

static void reach_family_scan(reach_list_t *l, const void *self_base)
{
    const char *owner = NULL;
    char what[REACH_MAX / 2] = "";
    reach_list_t names = {what, 0, 0};
    for (size_t i = 0; i < sizeof(reach_family) / sizeof(reach_family[0]); i++) {
        void *p = dlsym(RTLD_DEFAULT, reach_family[i]);
        Dl_info di;
        if (!p || !dladdr(p, &di) || di.dli_fbase == self_base)
            continue;
        owner = di.dli_fname;
        reach_add(&names, reach_family[i][0] == '_' ? "operator new/delete" : reach_family[i]);
    }
    if (names.n) {
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg), "%s defined by %s", what, reach_base(owner));
        reach_add(l, msg);
    }
}

/* ---- allocator APIs: defined where, imported by whom ---------------------------- */

static const char *const reach_prefixes[] = {"je_", "_rjem_", "tc_", "mi_"};
static const char *const reach_apis[] = {"mallocx", "rallocx", "xallocx", "sdallocx", "dallocx"};

static bool reach_is_api(const char *name)
{
    if (!strchr("mrxsdj_t", name[0])) /* the first letters of every name below */
        return false;
    for (size_t i = 0; i < sizeof(reach_apis) / sizeof(reach_apis[0]); i++)
        if (strcmp(name, reach_apis[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof(reach_prefixes) / sizeof(reach_prefixes[0]); i++) {
        size_t k = strlen(reach_prefixes[i]);
        if (strncmp(name, reach_prefixes[i], k) == 0 &&
            (strstr(name + k, "alloc") || strcmp(name + k, "free") == 0 ||
             strncmp(name + k, "new", 3) == 0))
            return true;
    }
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
} reach_walk_t;

/* For each allocator API an object imports (an undefined dynamic symbol), where the
 * dynamic linker binds it: a definition outside heapsift is a bypass. Also the APIs the
 * executable (object 0) defines itself, which its own calls reach directly. */
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
        if (!reach_is_api(name))
            continue;
        Dl_info di;
        void *p = dlsym(RTLD_DEFAULT, name);
        if (!p || !dladdr(p, &di) || di.dli_fbase == w->self_base)
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

/* The index of name in reach_family, or -1. */
static int reach_family_index(const char *name)
{
    for (size_t i = 0; i < sizeof(reach_family) / sizeof(reach_family[0]); i++)
        if (strcmp(name, reach_family[i]) == 0)
            return (int)i;
    return -1;
}

/* The executable's own definitions: *fam gets a bit per reach_family entry it defines
 * (bound inside it even where it exports none of them), l the allocators linked in. */
static void reach_symtab_scan(reach_list_t *l, uint32_t *fam, const uint8_t *f, size_t size)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)f;
    if (size < sizeof(*eh) || memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 ||
        eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_shoff == 0 ||
        eh->e_shoff + (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr) > size)
        return;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(f + eh->e_shoff);
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (sh[i].sh_type != SHT_SYMTAB || sh[i].sh_link >= eh->e_shnum)
            continue;
        const Elf64_Shdr *strs = &sh[sh[i].sh_link];
        if (sh[i].sh_offset + sh[i].sh_size > size || strs->sh_offset + strs->sh_size > size)
            return;
        const Elf64_Sym *s = (const Elf64_Sym *)(f + sh[i].sh_offset);
        const char *names = (const char *)(f + strs->sh_offset);
        for (size_t k = 0; k < sh[i].sh_size / sizeof(*s); k++) {
            if (s[k].st_name >= strs->sh_size || s[k].st_shndx == SHN_UNDEF ||
                ELF64_ST_TYPE(s[k].st_info) != STT_FUNC)
                continue;
            const char *name = names + s[k].st_name;
            bool local = ELF64_ST_BIND(s[k].st_info) == STB_LOCAL;
            int fi = reach_family_index(name);
            if (fi >= 0)
                *fam |= 1u << fi;
            else if (local &&
                     (reach_suffix(name, "___rust_alloc") || strcmp(name, "__rust_alloc") == 0))
                reach_add(l, "__rust_alloc (a Rust #[global_allocator] of the program's own)");
            else if (strncmp(name, "_rjem_", 6) == 0 && reach_is_api(name))
                reach_add(l, "_rjem_* (jemalloc linked into the executable)");
            else if (strncmp(name, "je_", 3) == 0 && reach_is_api(name))
                reach_add(l, "je_* (jemalloc linked into the executable)");
            else if (strncmp(name, "tc_", 3) == 0 && reach_is_api(name))
                reach_add(l, "tc_* (tcmalloc linked into the executable)");
            else if (strncmp(name, "mi_", 3) == 0 && reach_is_api(name))
                reach_add(l, "mi_* (mimalloc linked into the executable)");
        }
    }
}

/* The executable's path, as the dynamic linker knows it (its link map's name is ""). */
static const char *reach_exe_name(void)
{
    static char path[256];
    ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
    path[n > 0 ? n : 0] = '\0';
    return path;
}

static void reach_exe_symtab(reach_list_t *l)
{
    char names[REACH_MAX / 2] = "";
    reach_list_t fam = {names, 0, 0};
    uint32_t bits = 0;
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
    reach_symtab_scan(l, &bits, p, (size_t)st.st_size);
    for (size_t i = 0; i < sizeof(reach_family) / sizeof(reach_family[0]); i++)
        if (bits & (1u << i))
            reach_add(&fam, reach_family[i][0] == '_' ? "operator new/delete" : reach_family[i]);
    munmap(p, (size_t)st.st_size);
    if (fam.n) { /* also found by dlsym when exported: then already said */
        char msg[REACH_MAX];
        snprintf(msg, sizeof(msg), "%s defined by %s", names, reach_base(reach_exe_name()));
        if (!strstr(l->buf, "defined by"))
            reach_add(l, msg);
    }
}

void hs_reach_detect(void)
{
    Dl_info self;
    char found[REACH_MAX] = "";
    reach_list_t l = {found, 0, 0};
    if (!dladdr((void *)&hs_reach_detect, &self))
        return;
    hs_tls_t *t = &hs_tls;
    hs_guard_enter(t); /* dlsym and dladdr may allocate */
    reach_family_scan(&l, self.dli_fbase);
    reach_walk_t w = {&l, self.dli_fbase, 0};
    dl_iterate_phdr(reach_object, &w);
    reach_exe_symtab(&l);
    hs_guard_exit(t);
    if (!l.n)
        return;
    snprintf(reach_line, sizeof(reach_line),
             "reach: calls bypass heapsift: %.380s; the memory they allocate is not in its "
             "profiles (in-place hooks: not built yet)",
             found);
    hs_log("%s", reach_line);
}

const char *hs_reach_comment(void)
{
    return reach_line[0] ? reach_line : NULL;
}

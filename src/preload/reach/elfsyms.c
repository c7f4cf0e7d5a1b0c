/*
 * ELF symbols, for the modules that find allocators and hook them (reach.c, gotslot.c): a
 * loaded object's dynamic section read in memory, as the loader left it (its entries
 * relocated to addresses, except the vDSO's), with the count of its dynamic symbols from
 * DT_HASH or DT_GNU_HASH (the section does not say it); the .symtab of an ELF file mapped
 * read-only through fdio.h (local symbols, such as Rust's allocator entry points, are only
 * there). Never allocates.
 */
#define _GNU_SOURCE
#include "elfsyms.h"
#include "base/fdio.h"

#include <elf.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>

static uintptr_t elf_ptr(ElfW(Addr) v, ElfW(Addr) base)
{
    return v < base ? v + base : v; /* the loader relocated the entry, or not (vDSO) */
}

/* The number of dynamic symbols of an object, from DT_HASH or DT_GNU_HASH (gnu). */
static size_t elf_nsyms(const ElfW(Dyn) * dyn, ElfW(Addr) base, const uint32_t *gnu)
{
    const uint32_t *hash = NULL;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_HASH)
            hash = (const uint32_t *)elf_ptr(d->d_un.d_ptr, base);
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

/* The last few GNU-hashed objects' symbol counts, kept while the loader has loaded and
 * unloaded nothing since (its dlpi_adds and dlpi_subs): the reach scan reads the same
 * objects' dynamic sections dozens of times at start, and each count is a pass over the
 * table's buckets (cc1's: 100,000 instructions). A try-lock: a thread that finds it held
 * (or a forked child that inherited it held) counts for itself. */
#define ELF_CACHE 8
static struct {
    const uint32_t *gnu;
    unsigned long long adds, subs;
    size_t n;
} elf_cache[ELF_CACHE];
static unsigned elf_cache_next;
static int elf_cache_busy;

static size_t elf_nsyms_cached(const struct dl_phdr_info *info, const ElfW(Dyn) * dyn,
                               const uint32_t *gnu)
{
    size_t n = 0;
    if (!gnu || __atomic_exchange_n(&elf_cache_busy, 1, __ATOMIC_ACQUIRE))
        return elf_nsyms(dyn, info->dlpi_addr, gnu);
    for (unsigned i = 0; i < ELF_CACHE && !n; i++)
        if (elf_cache[i].gnu == gnu && elf_cache[i].adds == info->dlpi_adds &&
            elf_cache[i].subs == info->dlpi_subs)
            n = elf_cache[i].n;
    if (!n) {
        n = elf_nsyms(dyn, info->dlpi_addr, gnu);
        unsigned k = elf_cache_next++ % ELF_CACHE;
        elf_cache[k].gnu = gnu;
        elf_cache[k].adds = info->dlpi_adds;
        elf_cache[k].subs = info->dlpi_subs;
        elf_cache[k].n = n;
    }
    __atomic_store_n(&elf_cache_busy, 0, __ATOMIC_RELEASE);
    return n;
}

static void elf_tag(hs_elf_dyn_t *o, const ElfW(Dyn) * d, uintptr_t a)
{
    switch (d->d_tag) {
    case DT_SYMTAB:
        o->sym = (const ElfW(Sym) *)a;
        break;
    case DT_STRTAB:
        o->str = (const char *)a;
        break;
    case DT_RELA:
        o->rela[0] = (const ElfW(Rela) *)a;
        break;
    case DT_RELASZ:
        o->nrela[0] = d->d_un.d_val / sizeof(ElfW(Rela));
        break;
    case DT_JMPREL:
        o->rela[1] = (const ElfW(Rela) *)a;
        break;
    case DT_PLTRELSZ:
        o->nrela[1] = d->d_un.d_val / sizeof(ElfW(Rela));
        break;
    case DT_GNU_HASH:
        o->gnu = (const uint32_t *)a;
        break;
    default:
        break;
    }
}

bool hs_elf_dyn(const struct dl_phdr_info *info, hs_elf_dyn_t *o)
{
    memset(o, 0, sizeof(*o));
    o->lo = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_DYNAMIC)
            o->dyn = (const ElfW(Dyn) *)(info->dlpi_addr + ph->p_vaddr);
        if (ph->p_type == PT_LOAD) {
            uintptr_t a = info->dlpi_addr + ph->p_vaddr;
            o->lo = a < o->lo ? a : o->lo;
            o->hi = a + ph->p_memsz > o->hi ? a + ph->p_memsz : o->hi;
        }
    }
    for (const ElfW(Dyn) *d = o->dyn; d && d->d_tag != DT_NULL; d++)
        elf_tag(o, d, elf_ptr(d->d_un.d_ptr, info->dlpi_addr));
    if (!o->sym || !o->str)
        return false;
    o->nsyms = elf_nsyms_cached(info, o->dyn, o->gnu);
    if (o->gnu && o->gnu[0] == 0)
        o->gnu = NULL; /* no bucket: nothing to look up */
    o->hashed = o->gnu ? o->gnu[1] : 0;
    if (o->hashed > o->nsyms) { /* not a table to trust */
        o->gnu = NULL;
        o->hashed = 0;
    }
    return true;
}

size_t hs_elf_unhashed(const hs_elf_dyn_t *o)
{
    if (!o->gnu)
        return o->nsyms;
    /* GNU ld puts a library's undefined symbols first, out of the table, but hashes a
     * weak undefined __cxa_finalize in an executable: the rest is checked, a load and a
     * compare a symbol (a third of the cost of reading each one). */
    for (size_t i = o->hashed; i < o->nsyms; i++)
        if (o->sym[i].st_shndx == SHN_UNDEF)
            return o->nsyms;
    return o->hashed;
}

int hs_elf_gnu_find(const hs_elf_dyn_t *o, const char *name, uint32_t *idx, int cap)
{
    if (!o->gnu)
        return -1;
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    const uint32_t *g = o->gnu;
    uint32_t nbuckets = g[0], symoffset = g[1], nbloom = g[2], shift = g[3];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(g + 4);
    const unsigned bits = sizeof(ElfW(Addr)) * 8;
    ElfW(Addr) word = nbloom ? bloom[(h / bits) % nbloom] : ~(ElfW(Addr))0;
    if (!((word >> (h % bits)) & (word >> ((h >> shift) % bits)) & 1))
        return 0;
    const uint32_t *buckets = (const uint32_t *)(bloom + nbloom);
    const uint32_t *chain = buckets + nbuckets;
    uint32_t i = buckets[h % nbuckets];
    int n = 0;
    if (i < symoffset)
        return 0;
    for (; i < o->nsyms && n < cap; i++) {
        uint32_t c = chain[i - symoffset];
        if ((c | 1) == (h | 1) && o->sym[i].st_shndx != SHN_UNDEF &&
            strcmp(o->str + o->sym[i].st_name, name) == 0)
            idx[n++] = i;
        if (c & 1)
            break;
    }
    return n;
}

int hs_elf_gnu_defines(const hs_elf_dyn_t *o, const char *name)
{
    uint32_t i;
    int n = hs_elf_gnu_find(o, name, &i, 1);
    return n < 0 ? -1 : n > 0;
}

typedef struct {
    const void *base;
    const char *name;
    bool seen, found;
} elf_def_t;

static int elf_defines_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    elf_def_t *d = arg;
    hs_elf_dyn_t o;
    (void)size;
    if ((const void *)info->dlpi_addr != d->base)
        return 0;
    d->seen = true;
    if (!hs_elf_dyn(info, &o))
        return 1;
    for (size_t i = 1; i < o.nsyms && i < (1u << 22) && !d->found; i++)
        d->found = o.sym[i].st_shndx != SHN_UNDEF && strcmp(o.str + o.sym[i].st_name, d->name) == 0;
    return 1;
}

bool hs_elf_defines(const void *base, const char *name)
{
    elf_def_t d = {base, name, false, false};
    dl_iterate_phdr(elf_defines_cb, &d);
    return d.found || !d.seen;
}

bool hs_elf_symtab_each(const uint8_t *f, size_t size, hs_elf_sym_fn *each, void *arg)
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
        for (size_t k = 0; k < sh[i].sh_size / sizeof(*s); k++)
            if (s[k].st_name < strs->sh_size && s[k].st_shndx != SHN_UNDEF &&
                ELF64_ST_TYPE(s[k].st_info) == STT_FUNC)
                each(arg, names + s[k].st_name, s[k].st_value, s[k].st_size,
                     ELF64_ST_BIND(s[k].st_info) == STB_LOCAL);
    }
    return found;
}

void *hs_elf_map_file(const char *path, size_t *size)
{
    struct stat st;
    int fd = hs_fd_open(path, O_RDONLY, 0);
    if (fd < 0)
        return MAP_FAILED;
    void *p = MAP_FAILED;
    if (hs_fd_fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        p = hs_fd_mmap((size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    hs_fd_close(fd);
    *size = p == MAP_FAILED ? 0 : (size_t)st.st_size;
    return p;
}

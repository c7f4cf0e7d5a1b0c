/*
 * Which loaded object holds an address and which dynamic symbol starts there: what the
 * reach scan asked of dladdr and dladdr1, answered without their walk of every symbol of
 * the object (glibc's _dl_addr compares each one; cc1's 28,900 made 17 calls at start 16
 * million instructions). The object comes from dl_iterate_phdr's segments; its base is the
 * loader's l_map_start (the lowest PT_LOAD's page plus the bias), as dladdr says it. A
 * symbol is found by its name's GNU hash chain where the name is known, else by one pass
 * that compares values only, choosing what _dl_addr chooses for an address a symbol starts
 * at: the first such symbol in the table's order that is not absolute, not TLS, and defined
 * or given a value. Never allocates.
 */
#define _GNU_SOURCE
#include "elfaddr.h"

#include <elf.h>
#include <errno.h>
#include <string.h>
#include <sys/auxv.h>

typedef struct {
    uintptr_t addr;
    hs_elf_obj_t *o;
    int idx;
    bool found;
} elfaddr_find_t;

static int elfaddr_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    elfaddr_find_t *f = arg;
    (void)size;
    int idx = f->idx++;
    uintptr_t page = getauxval(AT_PAGESZ), start = UINTPTR_MAX;
    bool in = false;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        uintptr_t s = info->dlpi_addr + (ph->p_vaddr & ~(page ? page - 1 : 4095));
        start = s < start ? s : start;
        in |= f->addr >= lo && f->addr < lo + ph->p_memsz;
    }
    if (!in)
        return 0;
    f->found = true;
    f->o->base = (const void *)start;
    f->o->name = info->dlpi_name ? info->dlpi_name : "";
    if (idx == 0 && !f->o->name[0] && program_invocation_name)
        f->o->name = program_invocation_name; /* as dladdr: the executable's map has no name */
    f->o->bias = info->dlpi_addr;
    f->o->exe = idx == 0;
    f->o->syms = hs_elf_dyn(info, &f->o->dyn);
    return 1;
}

bool hs_elf_obj_of(const void *addr, hs_elf_obj_t *o)
{
    elfaddr_find_t f = {(uintptr_t)addr, o, 0, false};
    memset(o, 0, sizeof(*o));
    dl_iterate_phdr(elfaddr_cb, &f);
    return f.found;
}

const void *hs_elf_base_of(const void *addr)
{
    hs_elf_obj_t o;
    return hs_elf_obj_of(addr, &o) ? o.base : NULL;
}

/* Whether _dl_addr would consider s at all: not absolute, not TLS, defined or valued. */
static bool elfaddr_usable(const ElfW(Sym) * s)
{
    return (s->st_shndx != SHN_UNDEF || s->st_value != 0) && s->st_shndx != SHN_ABS &&
           ELF64_ST_TYPE(s->st_info) != STT_TLS;
}

const ElfW(Sym) * hs_elf_sym_at(const hs_elf_obj_t *o, const void *addr)
{
    if (!o->syms)
        return NULL;
    ElfW(Addr) v = (uintptr_t)addr - o->bias;
    size_t n = o->dyn.nsyms < (1u << 22) ? o->dyn.nsyms : (1u << 22);
    /* _dl_addr walks the GNU hash table's symbols (from its first), else DT_HASH's all; a
     * value compared a symbol (5 instructions: cc1's 28,900 in 150,000) */
    for (const ElfW(Sym) *s = o->dyn.sym + (o->dyn.gnu ? o->dyn.hashed : 0), *end = o->dyn.sym + n;
         s < end; s++)
        if (s->st_value == v && elfaddr_usable(s))
            return s;
    return NULL;
}

const ElfW(Sym) * hs_elf_sym_named(const hs_elf_obj_t *o, const char *name, const void *addr)
{
    const uint32_t *g = o->syms ? o->dyn.gnu : NULL;
    if (!g)
        return NULL;
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    uint32_t nbuckets = g[0], symoffset = g[1], nbloom = g[2];
    const ElfW(Addr) *bloom = (const ElfW(Addr) *)(g + 4);
    const uint32_t *buckets = (const uint32_t *)(bloom + nbloom);
    const uint32_t *chain = buckets + nbuckets;
    ElfW(Addr) v = (uintptr_t)addr - o->bias;
    uint32_t i = buckets[h % nbuckets];
    if (i < symoffset)
        return NULL;
    for (; i < o->dyn.nsyms; i++) {
        uint32_t c = chain[i - symoffset];
        const ElfW(Sym) *s = &o->dyn.sym[i];
        if ((c | 1) == (h | 1) && s->st_value == v && elfaddr_usable(s) &&
            strcmp(o->dyn.str + s->st_name, name) == 0)
            return s;
        if (c & 1)
            break;
    }
    return NULL;
}

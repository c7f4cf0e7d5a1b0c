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
#include <stddef.h>
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
    if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
        f->o->gen = info->dlpi_adds + info->dlpi_subs;
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

/* hs_elf_sym_at's last answers: the reach scan asks again for the few functions the
 * allocators' entry points branch to (cc1 at start: 11 asks, 5 addresses, a pass of
 * 107,000 instructions each). An answer holds while the loader's counts of objects loaded
 * and unloaded stay as they were (no table it points into can have gone). Taken with a
 * try-lock: a thread that finds it held does the pass itself. */
#define ELFADDR_MEMO 8
static struct {
    int busy;
    unsigned next;
    uint64_t gen;
    struct {
        const ElfW(Sym) * table;
        uintptr_t addr;
        const ElfW(Sym) * sym;
    } e[ELFADDR_MEMO];
} elfaddr_memo;

/* Looks addr up (put: stores sym for it) under the try-lock; false when not done. */
static bool elfaddr_memo_op(const hs_elf_obj_t *o, const void *addr, const ElfW(Sym) * *sym,
                            bool put)
{
    bool done = false;
    if (!o->gen || __atomic_exchange_n(&elfaddr_memo.busy, 1, __ATOMIC_ACQUIRE))
        return false;
    if (elfaddr_memo.gen != o->gen) {
        memset(elfaddr_memo.e, 0, sizeof(elfaddr_memo.e));
        elfaddr_memo.gen = o->gen;
    }
    for (unsigned i = 0; i < ELFADDR_MEMO && !put && !done; i++)
        if (elfaddr_memo.e[i].table == o->dyn.sym && elfaddr_memo.e[i].addr == (uintptr_t)addr) {
            *sym = elfaddr_memo.e[i].sym;
            done = true;
        }
    if (put) {
        unsigned i = elfaddr_memo.next++ % ELFADDR_MEMO;
        elfaddr_memo.e[i].table = o->dyn.sym;
        elfaddr_memo.e[i].addr = (uintptr_t)addr;
        elfaddr_memo.e[i].sym = *sym;
        done = true;
    }
    __atomic_store_n(&elfaddr_memo.busy, 0, __ATOMIC_RELEASE);
    return done;
}

const ElfW(Sym) * hs_elf_sym_at(const hs_elf_obj_t *o, const void *addr)
{
    if (!o->syms)
        return NULL;
    const ElfW(Sym) *found = NULL;
    if (elfaddr_memo_op(o, addr, &found, false))
        return found;
    ElfW(Addr) v = (uintptr_t)addr - o->bias;
    size_t n = o->dyn.nsyms < (1u << 22) ? o->dyn.nsyms : (1u << 22);
    /* _dl_addr walks the GNU hash table's symbols (from its first), else DT_HASH's all; a
     * value compared a symbol (5 instructions: cc1's 28,900 in 150,000) */
    for (const ElfW(Sym) *s = o->dyn.sym + (o->dyn.gnu ? o->dyn.hashed : 0), *end = o->dyn.sym + n;
         s < end && !found; s++)
        if (s->st_value == v && elfaddr_usable(s))
            found = s;
    elfaddr_memo_op(o, addr, &found, true);
    return found;
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

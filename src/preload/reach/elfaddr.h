/*
 * Which loaded object holds an address, and the dynamic symbol that starts there
 * (elfaddr.c): dladdr and dladdr1's answers at the cost of what is asked. glibc's dladdr
 * walks every symbol of the object each call (cc1 exports 28,900: a million instructions
 * a call); here the object is found from its segments, a symbol by its name's GNU hash
 * chain, or, when only its address is known, by one tight pass comparing values. Used by
 * the reach scan at start (reach.c, reach_via.c, hooks). Never allocates.
 */
#ifndef HS_ELFADDR_H
#define HS_ELFADDR_H

#include "elfsyms.h"

#include <link.h>
#include <stdbool.h>
#include <stdint.h>

typedef struct {
    const void *base; /* as dladdr's dli_fbase: the start of its lowest mapped page */
    const char *name; /* as dladdr's dli_fname: its link map's name, argv[0] for the executable */
    uintptr_t bias;   /* its load bias (dlpi_addr) */
    bool exe;         /* the executable (the loader's first object) */
    bool syms;        /* dyn holds its dynamic symbols */
    uint64_t gen;     /* objects loaded plus unloaded so far (dlpi_adds, dlpi_subs); 0 unknown */
    hs_elf_dyn_t dyn;
} hs_elf_obj_t;

/* The loaded object whose segments hold addr; false when none does (dladdr fails then).
 * Takes the loader's list lock (dl_iterate_phdr: recursive, so callable in its callback). */
bool hs_elf_obj_of(const void *addr, hs_elf_obj_t *o);

/* Only the base dladdr would give for addr, NULL when no object holds it. */
const void *hs_elf_base_of(const void *addr);

/* The dynamic symbol starting at addr in o that dladdr1 (RTLD_DL_SYMENT) would answer
 * with dli_saddr == addr, or NULL (no symbol starts there). One pass over the symbols the
 * loader's lookup sees (the GNU hash table's, else all), comparing values only; the last
 * few answers are kept while no object is loaded or unloaded. */
const ElfW(Sym) * hs_elf_sym_at(const hs_elf_obj_t *o, const void *addr);

/* The dynamic symbol named name whose value is addr in o (defined, or an executable's
 * undefined one with a value: a canonical PLT entry), through o's GNU hash table; NULL
 * when there is none or o has no such table (then hs_elf_sym_at tells). */
const ElfW(Sym) * hs_elf_sym_named(const hs_elf_obj_t *o, const char *name, const void *addr);

#endif

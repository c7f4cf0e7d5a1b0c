/*
 * ELF symbols for the hooks' modules (elfsyms.c): the dynamic section of a loaded object
 * read in memory (its symbols, strings and relocations), and the .symtab of an ELF file
 * mapped read-only. reach.c asks where allocators are defined and imported; gotslot.c
 * which import slots lead to them. Never allocates; file access through fdio.h.
 */
#ifndef HS_ELFSYMS_H
#define HS_ELFSYMS_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    const ElfW(Dyn) * dyn;
    const ElfW(Sym) * sym; /* dynamic symbols, nsyms of them */
    const char *str;
    size_t nsyms;
    const ElfW(Rela) * rela[2]; /* DT_RELA and DT_JMPREL (the PLT's), nrela[k] each */
    size_t nrela[2];
    uintptr_t lo, hi;    /* the object's loaded extent */
    const uint32_t *gnu; /* its DT_GNU_HASH table, or NULL */
    size_t hashed;       /* with one: the first symbol in it; every undefined one is below */
} hs_elf_dyn_t;

/* The dynamic section of a loaded object; false when it has none or no symbol table. */
bool hs_elf_dyn(const struct dl_phdr_info *info, hs_elf_dyn_t *o);

/* The symbols below which every undefined one lies: those below the GNU hash table's
 * first where none of the table's is undefined (as GNU ld makes libraries); else all. */
size_t hs_elf_unhashed(const hs_elf_dyn_t *o);

/* Whether the object defines the dynamic symbol name, found through its GNU hash table (a
 * bloom filter's test, then one chain): 1 yes, 0 no, -1 not known (no such table). */
int hs_elf_gnu_defines(const hs_elf_dyn_t *o, const char *name);
/* The indexes of the object's defined dynamic symbols named name, from its GNU hash table
 * (cap at most, in the table's order): how many, or -1 (no such table). */
int hs_elf_gnu_find(const hs_elf_dyn_t *o, const char *name, uint32_t *idx, int cap);

/* Whether the object loaded at base (its dlpi_addr) defines the dynamic symbol name;
 * true when no object is loaded there (not known). Takes the loader's list lock. */
bool hs_elf_defines(const void *base, const char *name);

/* Calls each(arg, name, value, size, local) for every function defined in the .symtab of
 * the ELF file image f; false when it has none. */
typedef void hs_elf_sym_fn(void *arg, const char *name, uintptr_t value, size_t size, bool local);
bool hs_elf_symtab_each(const uint8_t *f, size_t size, hs_elf_sym_fn *each, void *arg);

/* The file at path mapped read-only (*size its length), or MAP_FAILED. */
void *hs_elf_map_file(const char *path, size_t *size);

#endif

/*
 * Loaded modules seen by the sampler, so a dump can tell a return address in a library
 * unloaded since from one in whatever was loaded at the same address later. Each new
 * stack's addresses are looked up with glibc's lock-free _dl_find_object (never
 * dl_iterate_phdr, whose loader lock an application callback might hold while waiting on
 * a thread that is inside malloc); a module is recorded, with a copy of its path and
 * build id, the first time one of its addresses appears. Storage is mmap'd.
 */
#ifndef HS_MODULES_H
#define HS_MODULES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t start, limit; /* [start, limit): the object's whole mapping */
    uint64_t offset;        /* file offset of start (0: the ELF header is mapped there) */
    const char *path;       /* the file it was loaded from */
    char build_id[41];      /* lowercase hex, "" when absent */
    uint32_t seen_from;     /* the first stack id that held one of its addresses */
} hs_unloaded_t;

/* Records the modules of a newly interned stack (id). Sampled path, guard held. */
void hs_modules_note(const uintptr_t *pcs, size_t depth, int32_t id);

/* Fork handlers (record/fork.c): the module list's lock, a leaf taken last. */
void hs_modules_lock(void);
void hs_modules_unlock(void);
/* At a dump, before hs_modules_unloaded: finds which recorded modules are gone. */
void hs_modules_refresh(void);

/* The index of the unloaded module that held pc when stack stack_id was recorded, or -1
 * (the address belongs to what is loaded now); hs_modules_get(index) describes it. */
int hs_modules_unloaded(uintptr_t pc, int32_t stack_id);
const hs_unloaded_t *hs_modules_get(int index);

/* The loaded object holding code address p (an opaque identity, NULL if none) and, when
 * name is not NULL, its file name ("" for the executable). _dl_find_object where glibc
 * has it (2.35), a lookup in a sorted array; else dladdr, which also scans the object's
 * symbol table for the nearest name (0.1 ms for libc's). Lock-free with the former. */
const void *hs_code_object(void *p, const char **name);

#endif

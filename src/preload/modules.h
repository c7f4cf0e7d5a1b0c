/*
 * Unloaded modules: remembers the code segments of shared objects that dlclose removed,
 * so a dump can tell a return address in an unloaded library from one in whatever was
 * loaded at the same address since. The loaded set is re-read (dl_iterate_phdr) only when
 * the loader's add/remove counters move, checked on the sampled path; storage is mmap'd.
 */
#ifndef HS_MODULES_H
#define HS_MODULES_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uintptr_t start, limit; /* [start, limit): an executable segment */
    uint64_t offset;        /* file offset of start */
    const char *path;       /* the file it was loaded from */
    char build_id[41];      /* lowercase hex, "" when absent */
    uint32_t watermark;     /* stacks with ids below it may hold its addresses */
} hs_unloaded_t;

/* Notices loads and unloads since the last call (cheap when nothing changed). Called
 * with the guard held on the sampled path, before the stack is interned; never blocks:
 * if another thread is checking, it returns at once. */
void hs_modules_check(void);

/* The unloaded segment that held pc when stack stack_id was recorded, or NULL. */
const hs_unloaded_t *hs_modules_unloaded(uintptr_t pc, int32_t stack_id);

#endif

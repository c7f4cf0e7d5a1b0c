/*
 * Import slots: the second way to a hook, where an entry point cannot be patched in place
 * (patch.c refuses its prologue, or HEAPSIFT_HOOKS=got asks for this way). Every loaded
 * object's GOT slots bound to the entry point, those its R_X86_64_JUMP_SLOT (PLT) and
 * R_X86_64_GLOB_DAT relocations name, are rewritten to point at the hook; the hook's
 * original is the entry point itself, which no slot leads to any more. glibc's own calls
 * to malloc, free, calloc and realloc go through its GOT too (so that interposition works),
 * so libc's slots are rewritten with the others' and its internal frees are seen.
 *
 * What it cannot see: calls inside an object that bind directly (an executable's calls to
 * its own malloc, an allocator's internal calls to its own functions), and calls from an
 * object loaded later until its slots are rewritten (reach.c does that at the first sample
 * after the load). A slot bound elsewhere (to another definition) is left alone; a slot not
 * bound yet (lazy binding: it points into its own object's PLT) is rewritten too when the
 * global lookup finds the definition (dlsym(RTLD_DEFAULT), at hs_got_redirect), as the
 * loader's binding would.
 *
 * This file owns the slots: finding them (the objects' dynamic sections, read in memory),
 * writing them (a read-only page, RELRO's, is made writable for the one store and put back),
 * and the record of every slot written, so that detach restores them and a re-attach writes
 * them again (a slot whose value is no longer what was left there, its object unloaded and
 * the memory reused, is not touched). Never on an allocation path but through reach.c's
 * check for objects loaded later, on the sampled path; never allocates there
 * (hs_got_redirect's dlsym may: it runs inside the reentrancy guard, at start or attach).
 */
#define _GNU_SOURCE
#include "gotslot.h"
#include "elfsyms.h"
#include "runtime/log.h"
#include "patch_int.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>

#define GOT_REDIR_MAX 64
#define GOT_SLOTS_MAX 4096

typedef struct {
    const char *name; /* a static string: the hooks' table's */
    void *def, *hook;
    bool lazy_ok; /* a slot not bound yet would bind to def (the global lookup finds it) */
} got_redir_t;

typedef struct {
    void **slot;
    void *old, *hook;
    void *def; /* what a slot not bound yet (old) binds to once called */
} got_slot_t;

static got_redir_t got_redirs[GOT_REDIR_MAX];
static size_t got_nredir;
static got_slot_t got_slots[GOT_SLOTS_MAX];
static size_t got_nslots;
static bool got_full_said;
static bool got_removed; /* detached: the slots hold their old values */
static const void *got_self;

/* Stores v in slot, through a write-enabled page when the slot's is read-only, if the slot
 * is mapped and still holds expect or expect2: an object unloaded since (dlclose) leaves
 * its slots unmapped, or reused by another mapping, which must not be written. */
static int got_store(void **slot, void *expect, void *expect2, void *v)
{
    hs_patch_map_t m;
    if (!hs_patch_map_of((uintptr_t)slot, &m) || !(m.prot & PROT_READ))
        return -EFAULT;
    void *now = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
    if (now != expect && now != expect2)
        return -ESTALE;
    uintptr_t pg = (uintptr_t)slot & ~(uintptr_t)(PATCH_PAGE - 1);
    if (!(m.prot & PROT_WRITE) && mprotect((void *)pg, PATCH_PAGE, m.prot | PROT_WRITE) != 0)
        return -errno;
    __atomic_store_n(slot, v, __ATOMIC_RELEASE);
    if (!(m.prot & PROT_WRITE))
        mprotect((void *)pg, PATCH_PAGE, m.prot);
    return 0;
}

static void got_record(void **slot, void *old, void *hook, void *def)
{
    for (size_t i = 0; i < got_nslots; i++)
        if (got_slots[i].slot == slot) {
            got_slots[i].hook = hook;
            return;
        }
    if (got_nslots == GOT_SLOTS_MAX) {
        if (!got_full_said)
            hs_log("hooks: more than %d import slots rewritten: the others are left alone",
                   GOT_SLOTS_MAX);
        got_full_said = true;
        return;
    }
    got_slots[got_nslots++] = (got_slot_t){slot, old, hook, def};
}

/* The redirection for a relocation's symbol name: only, or any of them (only NULL). */
static const got_redir_t *got_find(const char *name, const got_redir_t *only)
{
    if (only)
        return strcmp(name, only->name) == 0 ? only : NULL;
    for (size_t i = 0; i < got_nredir; i++)
        if (strcmp(name, got_redirs[i].name) == 0)
            return &got_redirs[i];
    return NULL;
}

/* Rewrites one object's slots of one redirection, or of all (only NULL), in one pass over
 * its relocations (Chromium's objects have a million, nearly all relative ones); the count
 * rewritten. */
static int got_object(const struct dl_phdr_info *info, const hs_elf_dyn_t *o,
                      const got_redir_t *only)
{
    int n = 0;
#if defined(__x86_64__)
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; o->rela[k] && i < o->nrela[k]; i++) {
            const ElfW(Rela) *rel = &o->rela[k][i];
            unsigned type = ELF64_R_TYPE(rel->r_info), si = ELF64_R_SYM(rel->r_info);
            if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) || si == 0)
                continue;
            const got_redir_t *r = got_find(o->str + o->sym[si].st_name, only);
            if (!r)
                continue;
            void **slot = (void **)(info->dlpi_addr + rel->r_offset);
            void *old = __atomic_load_n(slot, __ATOMIC_ACQUIRE);
            bool lazy =
                type == R_X86_64_JUMP_SLOT && (uintptr_t)old >= o->lo && (uintptr_t)old < o->hi;
            if (old == r->hook || (old != r->def && !(lazy && r->lazy_ok)))
                continue; /* ours already, or bound to another definition */
            if (got_nslots == GOT_SLOTS_MAX || got_store(slot, old, old, r->hook) != 0)
                continue;
            got_record(slot, old, r->hook, r->def);
            n++;
        }
#else
    (void)info, (void)o, (void)only;
#endif
    return n;
}

typedef struct {
    const got_redir_t *only; /* one redirection, or NULL: all of them */
    uintptr_t base;          /* one object (dlpi_addr), or UINTPTR_MAX: every object */
    int n;
} got_walk_t;

static int got_each(struct dl_phdr_info *info, size_t size, void *arg)
{
    got_walk_t *w = arg;
    hs_elf_dyn_t o;
    (void)size;
    if ((const void *)info->dlpi_addr == got_self ||
        (w->base != UINTPTR_MAX && info->dlpi_addr != w->base) || !hs_elf_dyn(info, &o))
        return 0;
    w->n += got_object(info, &o, w->only);
    return 0;
}

/* dl_iterate_phdr's callback on the first object, the executable: whether *arg (a
 * definition) lies in it. */
static int got_main_has(struct dl_phdr_info *info, size_t size, void *arg)
{
    uintptr_t *def = arg;
    (void)size;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t a = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && *def >= a && *def < a + ph->p_memsz)
            *def = 0;
    }
    return 1;
}

int hs_got_redirect(const char *name, void *def, void *hook, const void *self_base)
{
#if defined(__x86_64__)
    uintptr_t in_main = (uintptr_t)def;
    dl_iterate_phdr(got_main_has, &in_main);
    if (in_main == 0)
        return -EXDEV;
    got_self = self_base;
    got_redir_t *r = NULL;
    for (size_t i = 0; i < got_nredir && !r; i++)
        if (got_redirs[i].def == def && strcmp(got_redirs[i].name, name) == 0)
            r = &got_redirs[i];
    if (!r) {
        if (got_nredir == GOT_REDIR_MAX)
            return -ENOSPC;
        r = &got_redirs[got_nredir++];
    }
    *r = (got_redir_t){name, def, hook, dlsym(RTLD_DEFAULT, name) == def};
    got_walk_t w = {r, UINTPTR_MAX, 0};
    dl_iterate_phdr(got_each, &w);
    return w.n;
#else
    (void)name, (void)def, (void)hook, (void)self_base;
    return -ENOSYS;
#endif
}

bool hs_got_any(void)
{
    return __atomic_load_n(&got_nredir, __ATOMIC_ACQUIRE) > 0;
}

int hs_got_object_at(uintptr_t base)
{
    if (!hs_got_any() || got_removed)
        return 0;
    got_walk_t w = {NULL, base, 0};
    dl_iterate_phdr(got_each, &w);
    return w.n;
}

/* Every slot written given its old value back (hook false), or the hook again; a slot
 * that no longer holds what was left there (its object unloaded) is skipped. 0 or the
 * first error of mprotect. */
static int got_put_all(bool hook)
{
    int rc = 0;
    for (size_t i = 0; i < got_nslots; i++) {
        got_slot_t *s = &got_slots[i];
        int e = hook ? got_store(s->slot, s->old, s->def, s->hook)
                     : got_store(s->slot, s->hook, s->hook, s->old);
        rc = rc || e == -EFAULT || e == -ESTALE ? rc : e;
    }
    got_removed = !hook;
    return rc;
}

int hs_got_remove_all(void)
{
    return got_put_all(false);
}

int hs_got_restore_all(void)
{
    return got_put_all(true);
}

size_t hs_got_count(void)
{
    return got_nslots;
}

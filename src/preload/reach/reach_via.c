/*
 * Reach through a call (reach_via.c): whether an allocation entry point that heapsift does
 * not hook still reaches heapsift, because its code calls a member of the malloc family
 * that does. cc1 links libstdc++ statically: its operator new is its own, bound inside it,
 * yet it calls malloc through its PLT, and that import binds to the malloc heapsift
 * interposes, so its memory is in the profiles. Saying it bypasses heapsift would be false.
 *
 * The answer is read from the code, not guessed from names: the entry point's body is
 * decoded (patch.c's decoder) and its calls and jumps followed, through direct branches up to
 * VIA_DEPTH levels (sized delete[] jumps to delete[], to delete, to free@plt), to an import slot (a
 * PLT entry's jmp *disp(%rip), or -fno-plt's call through the GOT). The slot's relocation names the
 * function; its value (or, while lazy binding has not resolved it, what the dynamic linker binds
 * the name to) says where the call goes: into heapsift's object, or to an entry point hooked in
 * place. A direct call to an entry point hooked in place counts too.
 *
 * Called by reach.c at start and attach, inside the guard (dladdr, dlsym and the first
 * load of the decoder may allocate); never on an allocation path. Reads code and the
 * loaded objects' dynamic sections, writes nothing.
 */
#define _GNU_SOURCE
#include "reach_via.h"
#include "elfaddr.h"
#include "elfsyms.h"
#include "hooks.h"
#include "patch.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

#define VIA_DEPTH 8 /* levels of branches followed, each PLT entry one of them */
#define VIA_BRANCHES 16

static bool via_blind; /* some code could not be decoded (no decoder, not x86-64) */
#define VIA_VISITS 32  /* functions decoded per entry point at most */

typedef struct {
    const void *self_base;
    int visits;
    char *through;
    size_t len;
} via_t;

/* An import slot's function: found by the relocation that fills it in its object. */
typedef struct {
    uintptr_t slot;
    const char *name;
    uintptr_t lo, hi; /* the object's extent: a slot pointing there is not bound yet */
} via_slot_t;

/* Whether one of the object's segments holds addr: read before its dynamic section (whose
 * symbol count costs a pass over a GNU hash table's buckets). */
static bool via_holds(const struct dl_phdr_info *info, uintptr_t addr)
{
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && addr >= lo && addr < lo + ph->p_memsz)
            return true;
    }
    return false;
}

static int via_slot_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    via_slot_t *s = arg;
    hs_elf_dyn_t o;
    (void)size;
    if (!via_holds(info, s->slot) || !hs_elf_dyn(info, &o) || s->slot < o.lo || s->slot >= o.hi)
        return 0;
    s->lo = o.lo;
    s->hi = o.hi;
    for (int k = 0; k < 2 && !s->name; k++)
        for (size_t j = 0; j < o.nrela[k] && !s->name; j++) {
            const ElfW(Rela) *r = &o.rela[k][j];
            size_t sym = ELF64_R_SYM(r->r_info);
            if (info->dlpi_addr + r->r_offset == s->slot && sym != 0 && (!o.nsyms || sym < o.nsyms))
                s->name = o.str + o.sym[sym].st_name;
        }
    return 1;
}

/* Whether name is a member of the malloc family (malloc, free, ..., operator new/delete). */
static bool via_family(const char *name)
{
    for (size_t i = 0; i < hs_hooks_family_count(); i++)
        if (strcmp(name, hs_hooks_family_name(i)) == 0)
            return true;
    return false;
}

static bool via_visit(via_t *v, const void *fn, size_t size, int depth);

/* Whether a call to the function at to reaches heapsift: to lies in heapsift's object, or
 * its entry is patched to jump to a hook (a family member, Rust's or an allocator API's).
 * One hooked only through import slots is not reached by a call that did not go through
 * those slots. */
static bool via_reaches(const via_t *v, uintptr_t to)
{
    if (hs_patch_is_installed((const void *)to))
        return true;
    return hs_elf_base_of((const void *)to) == v->self_base;
}

/* The call through the import slot at slot: true, with its name in v->through, when it is
 * a family member's and leads to heapsift, or an operator new/delete's that is followed
 * (libstdc++'s new[] calls new through its PLT) and does. */
static bool via_slot(via_t *v, uintptr_t slot, int depth)
{
    via_slot_t s = {slot, NULL, 0, 0};
    dl_iterate_phdr(via_slot_cb, &s);
    if (!s.name || !via_family(s.name))
        return false;
    uintptr_t to = *(const uintptr_t *)slot;
    if (to >= s.lo && to < s.hi) /* lazy binding, not resolved yet: where it will bind */
        to = (uintptr_t)dlsym(RTLD_DEFAULT, s.name);
    if (!to)
        return false;
    if (via_reaches(v, to)) {
        snprintf(v->through, v->len, "%s", s.name[0] == '_' ? "operator new/delete" : s.name);
        return true;
    }
    return s.name[0] == '_' && depth + 1 < VIA_DEPTH &&
           via_visit(v, (const void *)to, 0, depth + 1);
}

/* A direct branch to an entry point patched with a hook: its name (the hooked function
 * runs heapsift's hook first), or NULL. */
static const char *via_hooked_name(uintptr_t to)
{
    hs_elf_obj_t o;
    if (!hs_patch_is_installed((const void *)to))
        return NULL;
    const ElfW(Sym) *sym = hs_elf_obj_of((void *)to, &o) ? hs_elf_sym_at(&o, (void *)to) : NULL;
    return sym ? o.dyn.str + sym->st_name : "function hooked in place";
}

static bool via_visit(via_t *v, const void *fn, size_t size, int depth)
{
    hs_patch_branch_t br[VIA_BRANCHES];
    if (v->visits++ >= VIA_VISITS)
        return false;
    int n = hs_patch_branches(fn, size, br, VIA_BRANCHES);
    if (n == -ELIBACC || n == -ENOSYS)
        via_blind = true;
    for (int i = 0; i < n; i++) {
        if (br[i].slot) {
            if (via_slot(v, br[i].to, depth))
                return true;
            continue;
        }
        const char *hooked = via_hooked_name(br[i].to);
        if (hooked) {
            snprintf(v->through, v->len, "%s", hooked);
            return true;
        }
        hs_elf_obj_t o;
        const ElfW(Sym) *sym = NULL;
        size_t sz = 0;
        if (depth + 1 >= VIA_DEPTH)
            continue;
        if (hs_elf_obj_of((void *)br[i].to, &o) && (sym = hs_elf_sym_at(&o, (void *)br[i].to)))
            sz = sym->st_size;
        if (via_visit(v, (const void *)br[i].to, sz, depth + 1))
            return true;
    }
    return false;
}

bool hs_reach_via(const void *fn, size_t size, const void *self_base, char *through, size_t len)
{
    via_t v = {self_base, 0, through, len};
    if (len)
        through[0] = '\0';
    return via_visit(&v, fn, size, 0);
}

/* Whether an object other than heapsift's has a relocation that binds name: an import (a
 * PLT or GOT slot), or a library's own interposable call of it (libc's calls of malloc). */
typedef struct {
    const char *name;
    const void *self_base;
    bool found;
} via_called_t;

static int via_called_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    via_called_t *c = arg;
    hs_elf_dyn_t o;
    (void)size;
    if ((const void *)info->dlpi_addr == c->self_base || !hs_elf_dyn(info, &o))
        return 0;
    for (int k = 0; k < 2 && !c->found; k++)
        for (size_t j = 0; j < o.nrela[k] && !c->found; j++) {
            size_t sym = ELF64_R_SYM(o.rela[k][j].r_info);
            c->found = sym != 0 && (!o.nsyms || sym < o.nsyms) &&
                       strcmp(o.str + o.sym[sym].st_name, c->name) == 0;
        }
    return c->found;
}

bool hs_reach_called(const char *name, const void *self_base)
{
    via_called_t c = {name, self_base, false};
    dl_iterate_phdr(via_called_cb, &c);
    return c.found;
}

bool hs_reach_via_blind(void)
{
    return via_blind;
}

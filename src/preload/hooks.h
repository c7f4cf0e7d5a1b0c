/*
 * Hooks (hooks.c): the second way calls reach heapsift. Where an allocator's entry point
 * binds ahead of libheapsift.so (the executable's own malloc, a static tcmalloc or
 * jemalloc, a Rust #[global_allocator]), its entry is patched (patch.c) to jump to the
 * same function interposition uses, and the trampoline becomes the "real" function.
 * reach.c finds the entry points and asks here; nothing here runs on an allocation path
 * but the hooks themselves.
 */
#ifndef HS_HOOKS_H
#define HS_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "core.h"

/* interpose.c's own definitions by name (hs_own_entries, ended by a NULL name). */
typedef struct {
    const char *name;
    void *fn;
} hs_own_entry_t;

/*
 * HS_KEEPREGS_THUNK(name, fn): defines name, which calls fn keeping every general
 * register but rax (interpose.c says why); HS_KEEPALL_THUNK keeps rax too, for a function
 * that returns nothing (GCC lets a caller in the callee's translation unit keep a value
 * in rax across a call of a function seen not to touch it: a realloc that calls its own
 * free last). Both run fn on a stack aligned to 16 bytes: GCC calls a function it sees
 * need no alignment with the stack misaligned (-fipa-stack-alignment), which the hook, a C
 * function, does need. They open a frame-pointer frame, so that the fp unwinder finds the
 * caller's return address at [rbp+8] as it would without the thunk, and have the call
 * frame information the DWARF unwinders need. Declare name with fn's type to take its
 * address. x86-64 only.
 */
#define HS_THUNK_ASM(name, fn, save, restore)                                                      \
    void name(void) HS_HIDDEN;                                                                     \
    __asm__(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name                 \
            ",@function\n" #name ":\n.cfi_startproc\npush %rbp\n.cfi_adjust_cfa_offset 8\n"        \
            ".cfi_offset rbp, -16\nmov %rsp, %rbp\n.cfi_def_cfa_register rbp\nand $-16, %rsp\n"    \
            "push %rcx\npush %rdx\npush %rsi\npush %rdi\npush %r8\npush %r9\npush %r10\n"          \
            "push %r11\n" save "call " #fn "\n" restore "pop %r11\npop %r10\npop %r9\npop %r8\n"   \
            "pop %rdi\npop %rsi\npop %rdx\npop %rcx\nmov %rbp, %rsp\n.cfi_def_cfa_register rsp\n"  \
            "pop %rbp\n.cfi_adjust_cfa_offset -8\n.cfi_restore rbp\nret\n.cfi_endproc\n"           \
            ".size " #name ", .-" #name "\n");
#define HS_KEEPREGS_THUNK(name, fn) HS_THUNK_ASM(name, fn, "", "")
#define HS_KEEPALL_THUNK(name, fn)                                                                 \
    HS_THUNK_ASM(name, fn, "push %rax\nsub $8, %rsp\n", "add $8, %rsp\npop %rax\n")

/* The malloc family and C++ operator new/delete: the names hooks.c can hook, in the
 * order they must be tried (malloc and free first). */
size_t hs_hooks_family_count(void);
const char *hs_hooks_family_name(size_t i);

/* Whether hooks may be installed (HEAPSIFT_HOOKS is not off, interpose.c is linked). */
bool hs_hooks_enabled(void);
/* Whether the function at addr returns at once (after an endbr64): a free that frees
 * nothing, as a bump allocator's. Its blocks are never released, as the profiles say. */
bool hs_hooks_noop(const void *addr);
/* Charges n bytes to the thread's countdown: true while no sample is due (the Rust and
 * API hooks' form of interpose.c's interpose_charge). */
static inline bool hs_hooks_charge(hs_tls_t *t, size_t n)
{
    return (t->countdown -= (int64_t)n) > 0;
}
/* Returned instead of 0 for a free (or __rust_dealloc) that does nothing: left alone. */
#define HS_HOOKS_NOOP 1
/* Returned instead of 0 when a family member is hooked through the import slots of the
 * objects that call it (gotslot.c), since it could not be patched in place or
 * HEAPSIFT_HOOKS=got. */
#define HS_HOOKS_GOT 2

/*
 * Hooks family member i, defined at addr (size bytes, 0 = unknown) by the object loaded
 * at base. Returns 0 when hooked in place, HS_HOOKS_GOT through import slots; -ENOSYS when
 * HEAPSIFT_HOOKS=off or hooks are not available; -EPERM for operator new/delete of an object whose
 * free is not hooked (its blocks may not be malloc's); another negative errno when patch.c refused,
 * why[] saying why. Call at start, one thread running, inside the reentrancy guard.
 */
int hs_hooks_family(size_t i, void *addr, size_t size, const void *base, char *why, size_t whylen);

/* The entry point of family member name hooked in place (its original address), or
 * NULL when it is not hooked. */
void *hs_hooks_entry(const char *name);
/* Whether the family member at addr is hooked (an allocator's API aliasing it is then
 * hooked too: tcmalloc's tc_malloc is its malloc). */
bool hs_hooks_hooked(const void *addr);

/* Rust's global-allocator entry points, by the suffix of their mangled names. */
enum { HS_RUST_ALLOC, HS_RUST_DEALLOC, HS_RUST_REALLOC, HS_RUST_ALLOC_ZEROED, HS_RUST_N };
extern const char *const hs_hooks_rust_suffix[HS_RUST_N];

/* Rust global allocators hooked at once: the executable's and those of objects loaded
 * later (a Rust cdylib, as a Python extension, with a #[global_allocator] of its own). */
#define HS_RUST_INSTANCES 4
/* A free instance for one object's four entry points, or -ENOSPC (hooks_rust.c). */
int hs_hooks_rust_instance(void);
/* Hooks Rust entry point k of instance inst at addr (size from .symtab). As
 * hs_hooks_family; the others only once the instance's __rust_dealloc is hooked (or does
 * nothing), so call it first. */
int hs_hooks_rust(int inst, int k, void *addr, size_t size, char *why, size_t whylen);

/* An allocator's own API (jemalloc's je_ or _rjem_, tcmalloc's tc_, mimalloc's mi_): the
 * index of the function named prefix+rest that can be hooked (free, dallocx, sdallocx,
 * malloc, calloc, realloc, posix_memalign, aligned_alloc, memalign, mallocx, rallocx, in
 * the order they must be tried: the frees first), or -1. */
int hs_hooks_api_index(const char *rest);
/* Hooks API function k of prefix at addr, in the object loaded at base. As
 * hs_hooks_family; one prefix of one object per process (-EBUSY for another), and nothing
 * before prefix+free is hooked (or does nothing). */
int hs_hooks_api(const char *prefix, const void *base, int k, void *addr, size_t size, char *why,
                 size_t whylen);

#endif

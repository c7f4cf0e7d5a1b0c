/*
 * Hooks (hooks.c): the second way calls reach heapsift. Where an allocator's entry point
 * binds ahead of libheapsift.so (the executable's own malloc, a static tcmalloc or
 * jemalloc, a Rust #[global_allocator]), its entry is patched (patch.c) to jump to the
 * same function interposition uses, and the trampoline becomes the "real" function.
 * reach.c finds the entry points and asks here; nothing here runs on an allocation path
 * but the hooks themselves. The family's are in hooks.c, Rust's in hooks_rust.c, an
 * allocator's own API's in hooks_api.c.
 */
#ifndef HS_HOOKS_H
#define HS_HOOKS_H

#include <stdbool.h>
#include <stddef.h>

#include "runtime/core.h"

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

/*
 * HS_FAST_ALLOC(name, slot, slow): an allocation's fast path, for a function whose first
 * argument is the size: count, charge the countdown (its flags decide, as
 * interpose_charge), then jump through the pointer at slot (an assembler expression,
 * "hs_real+0") or to the sampled path (slow, a thunk). No register but rax is written
 * (the original writes it anyway).
 */
#define HS_FAST_ALLOC(name, slot, slow)                                                            \
    void name(void) HS_HIDDEN;                                                                     \
    __asm__(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name                 \
            ", @function\n" #name ":\n.cfi_startproc\n"                                            \
            "movq hs_tls@gottpoff(%rip), %rax\n"                                                   \
            "addq $1, %fs:8(%rax)\n"                                                               \
            "subq %rdi, %fs:(%rax)\n"                                                              \
            "jle 1f\n"                                                                             \
            "jmp *" slot "(%rip)\n"                                                                \
            "1: jmp " #slow "\n"                                                                   \
            ".cfi_endproc\n.size " #name ", .-" #name "\n");

/*
 * HS_FAST_FREE(name, slot, slow): a release's fast path, for a function whose first
 * argument is the block: count, test its bit in the live filter (hs_filter_maybe: the
 * 32-bit Fibonacci hash scaled to the filter's size), then jump through the pointer at
 * slot, or to slow (a thunk that keeps every register), which takes the count back for
 * NULL (its bit is pinned set). Every register is kept.
 */
#define HS_FAST_FREE(name, slot, slow)                                                             \
    void name(void) HS_HIDDEN;                                                                     \
    __asm__(".text\n.p2align 4\n.globl " #name "\n.hidden " #name "\n.type " #name                 \
            ", @function\n" #name ":\n.cfi_startproc\n"                                            \
            "push %rax\n.cfi_adjust_cfa_offset 8\n"                                                \
            "push %rcx\n.cfi_adjust_cfa_offset 8\n"                                                \
            "push %rdx\n.cfi_adjust_cfa_offset 8\n"                                                \
            "movq hs_tls@gottpoff(%rip), %rax\n"                                                   \
            "addq $1, %fs:16(%rax)\n"                                                              \
            "movq hs_filter_words(%rip), %rcx\n"                                                   \
            "movq -8(%rcx), %rdx\n"                                                                \
            "imull $0x9E3779B1, %edi, %eax\n"                                                      \
            "imulq %rdx, %rax\n"                                                                   \
            "shrq $32, %rax\n"                                                                     \
            "movq %rax, %rdx\n"                                                                    \
            "shrq $5, %rdx\n"                                                                      \
            "movl (%rcx,%rdx,4), %edx\n"                                                           \
            "btl %eax, %edx\n"                                                                     \
            "pop %rdx\n.cfi_adjust_cfa_offset -8\n"                                                \
            "pop %rcx\n.cfi_adjust_cfa_offset -8\n"                                                \
            "pop %rax\n.cfi_adjust_cfa_offset -8\n"                                                \
            "jc 1f\n"                                                                              \
            "jmp *" slot "(%rip)\n"                                                                \
            "1: jmp " #slow "\n"                                                                   \
            ".cfi_endproc\n.size " #name ", .-" #name "\n");

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

/* Whether the family member at addr is hooked in place (not through import slots). */
bool hs_hooks_hooked_in_place(const void *addr);
/* Whether the program's free reaches heapsift and goes on into the object loaded at base:
 * its free hooked in place there, or interposed with hs_real.free in it (a shared
 * libjemalloc or libmimalloc behind libheapsift.so). Call at start, inside the guard. */
bool hs_hooks_frees_into(const void *base);

/*
 * An allocator's own API (hooks_api.c): jemalloc's mallocx & co (unprefixed, or je_,
 * _rjem_ as tikv-jemallocator builds it), tcmalloc's tc_*, mimalloc's mi_*, defined by
 * the executable or by a library the program imports them from. One instance per object
 * and prefix, up to HS_API_INSTANCES. Its release path is any of free, dallocx and sdallocx
 * (or the family's free when it leads into the same object: hs_hooks_frees_into); nothing
 * else of an instance is hooked before one of them is.
 */
#define HS_API_INSTANCES 3
/* The number of API functions heapsift hooks, and function k's name after the prefix
 * (k in the order they must be tried: the release functions, 0 to HS_API_RELEASE_N - 1,
 * first). */
#define HS_API_RELEASE_N 3
int hs_hooks_api_count(void);
const char *hs_hooks_api_name(int k);
/* The index of prefix+rest among them, or -1 (unprefixed: only jemalloc's mallocx,
 * rallocx, xallocx, sdallocx and dallocx; malloc and free are the family's). */
int hs_hooks_api_index(const char *prefix, const char *rest);
/* The instance of prefix's API in the object loaded at base (found or made), or -ENOSYS
 * (hooks off), -EBUSY (another object has prefix's API hooked), -ENOSPC; why[] says why.
 * release: hs_hooks_frees_into(base), asked by the caller (a loader call: not with the
 * other threads stopped, one of which may hold the loader's lock). */
int hs_hooks_api_instance(const char *prefix, const void *base, bool release, char *why,
                          size_t whylen);
/* Hooks function k of instance inst, at addr (size bytes, 0 unknown). 0 when hooked in
 * place; HS_HOOKS_NOOP for a release function that does nothing; HS_HOOKS_ALIAS when addr
 * is hooked already (a family member, or another function of the instance: its hook
 * counts the calls); -EPERM before a release function is hooked; another negative errno
 * when patch.c refused, why[] saying why. At start, or with the other threads stopped. */
#define HS_HOOKS_ALIAS 3
int hs_hooks_api(int inst, int k, void *addr, size_t size, char *why, size_t whylen);
/* After instance inst's functions are hooked: hs_real's slots that lead into its object
 * (the family interposed in front of it) are called inside the guard from then on, so
 * that one of them coming back through a hooked API function counts nothing twice. */
/* [lo, hi): the object's extent, read before the other threads were stopped; hi 0: asked
 * of the loader (dladdr), at start only. */
void hs_hooks_api_done(int inst, uintptr_t lo, uintptr_t hi);

#endif

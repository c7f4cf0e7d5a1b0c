/*
 * In-place entry-point patching (x86-64): makes calls to a function that heapsift cannot
 * interpose (an allocator bound inside the executable) run a hook instead, with a
 * trampoline that holds the function's relocated prologue so the hook can call the
 * original. See patch.c for the design, its cost and its limits.
 *
 * Context: never on an allocation path. The first install loads the decoder (dlopen,
 * which allocates): call it inside the reentrancy guard, at start (one thread) or with
 * the other threads stopped (attach) -- see "Threads" in patch.c.
 */
#ifndef HS_PATCH_H
#define HS_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Flags of hs_patch_install_ex. */
/* Tests: act as if no page within +-2 GB were free: the 14-byte absolute jump at the
   entry, the trampoline in a page out of rel32 reach (so its far forms run). */
#define HS_PATCH_FORCE_ABS 1u

/*
 * Patches the function at target so that calls to it run hook; *original receives a
 * callable pointer to the original behaviour (the trampoline; it stays valid for the
 * life of the process, even after hs_patch_remove). *original is stored (release) before
 * the jump is written, so a hook running on another thread at once finds it set.
 * Returns 0, or a negative errno with why[] saying what was refused (e.g. "a relative
 * jump back into the patched bytes at +5 (from +23)"):
 *   -EINVAL  the prologue cannot be relocated safely (why[] names the instruction);
 *   -EEXIST  target is already patched;   -ENOMEM  no trampoline page could be mapped;
 *   -EBUSY   a target patched and removed before whose bytes have changed since;
 *   -ENOSPC  more than 128 entry points patched;
 *   -ENOSYS  not x86-64;   -ELIBACC  the decoder (libZydis.so.4.0) cannot be loaded;
 *   other    from mprotect or /proc/self/maps.
 * The function's extent for the back-jump scan is its dynamic symbol's size when
 * dladdr1 finds one, else a bounded sweep (see patch.c). Installing again a target that
 * was removed reuses its first trampoline (flags are not looked at again).
 */
int hs_patch_install(void *target, void *hook, void **original, char *why, size_t whylen);

/* As hs_patch_install, with the function's size when the caller knows it (from .symtab;
   0 = unknown) and HS_PATCH_* flags. */
int hs_patch_install_ex(void *target, size_t size, unsigned flags, void *hook, void **original,
                        char *why, size_t whylen);
/* The same, calling published(arg) once *original is set and before the jump is written:
   where other threads run on (attach), what the hook calls must be in place before the
   first call reaches it. */
typedef void hs_patch_published_fn(void *arg);
int hs_patch_install_cb(void *target, size_t size, unsigned flags, void *hook, void **original,
                        hs_patch_published_fn *published, void *arg, char *why, size_t whylen);

/*
 * As hs_patch_install_cb, with code of the hook's own placed beside the trampoline: emit
 * writes up to cap bytes into buf, code that will run at address at and whose usual path
 * goes on at body (the trampoline's relocated prologue, after its endbr64: a jmp rel32
 * reaches it); it returns their length, or 0 to decline. The entry's jump then goes to
 * that code instead of the stub (which still jumps to hook, for any other caller of the
 * stub). Near patches only: where the jump must be the 14-byte absolute one, or no slot
 * near both is free, emit is not called and the entry jumps to hook as without it.
 * Saves the stub's jmp and the trampoline's endbr64, and the hook's jmp through its slot.
 */
typedef int hs_patch_emit_fn(void *arg, uintptr_t at, uintptr_t body, uint8_t *buf, size_t cap);
int hs_patch_install_code(void *target, size_t size, unsigned flags, hs_patch_emit_fn *emit,
                          void *emit_arg, void *hook, void **original,
                          hs_patch_published_fn *published, void *arg, char *why, size_t whylen);

/* Whether the decoder is loaded; with load, loads it first if it was not tried yet (a
   dlopen: inside the guard, never on an allocation path). Objects loaded after start are
   patched from the sampled path, which must not dlopen: reach.c loads it at start. */
bool hs_patch_decoder(bool load);

/* Whether target's entry is patched now (a hook installed over it, not removed). Takes the
   patcher's lock: not on an allocation path. */
bool hs_patch_is_installed(const void *target);

/* A branch out of a function: a call or jmp to a destination (slot false), or through the
   8-byte slot at a RIP-relative address (slot true: an import slot, as a PLT entry's
   jmp *disp(%rip) or -fno-plt's call). */
typedef struct {
    uintptr_t to;
    bool slot;
} hs_patch_branch_t;
/* The calls and jumps of the function at fn (size bytes from its symbol; 0 = unknown: up to
   its first ret or unconditional jump) that leave it, up to cap into out, decoded with the
   patcher's decoder: their count, or -ELIBACC (no decoder), -EFAULT (fn not in executable
   memory), -ENOSYS (not x86-64). Nothing is written to fn. Inside the guard (the first use
   loads the decoder); reach_via.c asks where an entry point's calls go. */
int hs_patch_branches(const void *fn, size_t size, hs_patch_branch_t *out, size_t cap);

/* Restores the original bytes at target. 0, or -ENOENT when target is not patched, or a
   negative errno from mprotect. The trampoline stays mapped (a thread may be inside it). */
int hs_patch_remove(void *target);

/* Every patch removed, or every removed patch put back (its hook, its trampoline: the
   originals handed out stay valid). For attach's detach and re-attach, with the other
   threads stopped for restore (see hs_patch_fixup_pc). 0 or the first negative errno. */
int hs_patch_remove_all(void);
/* While the program's threads run on (attach's thread installs the hooks), each jump is
   written through a stopper: it runs write(arg) with the other threads stopped, and a
   stopped thread whose fix(arg, pc) is not 0 resumes there (inside the bytes replaced:
   the same instruction in the trampoline). It returns write's result, or a negative errno
   when it could not stop them all (nothing written). NULL (the default): written at once,
   as at start with one thread. attach.c gives stopworld.c's. */
typedef int hs_patch_stopper_fn(int (*write)(void *arg), uintptr_t (*fix)(void *arg, uintptr_t pc),
                                void *arg);
void hs_patch_set_live(hs_patch_stopper_fn *stopper);
int hs_patch_restore_all(void);

/*
 * For a thread stopped by the caller (attach's injector, or an in-process stop) whose pc
 * lies inside the bytes a patch replaced, at an instruction boundary after the first:
 * the address of the same instruction in the trampoline, where the thread must resume.
 * 0 when pc needs no move (outside every patched range, or at its first byte).
 */
uintptr_t hs_patch_fixup_pc(uintptr_t pc);

#endif

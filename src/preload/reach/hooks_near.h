/*
 * Hooks near (hooks_near.c): malloc's and free's fast paths as machine code written beside
 * a hooked entry's trampoline, the emitters hooks.c hands to hs_patch_install_code.
 * x86-64 only.
 */
#ifndef HS_HOOKS_NEAR_H
#define HS_HOOKS_NEAR_H

#include <stddef.h>
#include <stdint.h>

/* hs_patch_emit_fn's: the code for a hooked malloc (free) to run at address at, going on
   at body; its length, or 0 when hs_tls is out of a 32-bit %fs displacement. */
int hs_hooks_near_malloc(void *arg, uintptr_t at, uintptr_t body, uint8_t *buf, size_t cap);
int hs_hooks_near_free(void *arg, uintptr_t at, uintptr_t body, uint8_t *buf, size_t cap);

#endif

/*
 * The patcher's memory side (patch_mem.c), shared with patch.c: /proc/self/maps read
 * without stdio or malloc, the trampoline pages mapped near their targets, and writing
 * code that other threads may be running. Internal to patch.c and patch_mem.c. x86-64.
 */
#ifndef HS_PATCH_INT_H
#define HS_PATCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PATCH_PAGE 4096u
#define PATCH_SLOT 128u /* stub (16) + trampoline (112) */
#define PATCH_STUB 16u
#define PATCH_SLOTS_PER_PAGE (PATCH_PAGE / PATCH_SLOT)
#define PATCH_MAX_PAGES 64
#define PATCH_NEAR ((uintptr_t)0x7f000000u) /* +-2 GB less a margin for the span */

typedef struct {
    uintptr_t lo, hi;
    int prot;
    char name[32]; /* its start: "[heap]", "[stack]", or a path's first bytes */
} hs_patch_map_t;

/* The mapping holding addr, from /proc/self/maps. */
bool hs_patch_map_of(uintptr_t addr, hs_patch_map_t *out);

/* Where hs_patch_slot_find looks: within rel32 reach of at, anywhere, or (tests'
 * HS_PATCH_FORCE_ABS) out of reach. */
enum { SLOT_NEAR, SLOT_ANY, SLOT_FAR };

/* A free trampoline slot (mapping a page when none has one), its page in *page. */
uint8_t *hs_patch_slot_find(uintptr_t at, int where, int *page);
/* Writes len bytes into a slot of trampoline page pg (r-x -> rwx -> r-x). */
int hs_patch_slot_write(int pg, uint8_t *dst, const uint8_t *src, size_t len);
/* Marks the slot just written on page pg as taken (slots are never freed). */
void hs_patch_slot_taken(int pg);
/* The trampoline page holding slot, or -1. */
int hs_patch_slot_page(const uint8_t *slot);

/* Writes n bytes of code at p so that no thread executes a torn instruction (patch.c's
 * header, "Writing the jump"). 0 or a negative errno. */
int hs_patch_write_code(uint8_t *p, const uint8_t *bytes, size_t n);

#endif

/*
 * Reach through a call (reach_via.c): whether an entry point heapsift does not hook calls
 * a malloc-family function that leads to heapsift, read from its code.
 */
#ifndef HS_REACH_VIA_H
#define HS_REACH_VIA_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the calls of the function at fn (size bytes, 0 unknown) reach heapsift (its
 * object loaded at self_base): through an import slot of a C member of the malloc family
 * bound to heapsift or to an entry point it hooked, or a direct call to one hooked in place,
 * followed through direct calls and jumps. That member's name goes into through[len].
 * false when none does or the code cannot be decoded (no decoder, not x86-64). At start or
 * attach, inside the guard. */
bool hs_reach_via(const void *fn, size_t size, const void *self_base, char *through, size_t len);

/* Whether some entry point asked about could not be read (the decoder, libZydis.so.4.0,
 * cannot be loaded, or not x86-64): a false answer of hs_reach_via then means "not known". */
bool hs_reach_via_blind(void);

/* Whether any loaded object but heapsift's (at self_base) has a relocation binding name:
 * whether any call can reach a library's definition of it through the dynamic linker. A
 * library's member that none binds is called by nothing loaded (libc's pvalloc where the
 * program brings its own malloc): not hooked, but bypassed by no call. Inside the guard. */
bool hs_reach_called(const char *name, const void *self_base);

#endif

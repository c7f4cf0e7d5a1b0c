/*
 * Import slots (gotslot.c): hooks reached through every loaded object's GOT, where an
 * entry point cannot be patched in place. x86-64; elsewhere hs_got_redirect says -ENOSYS.
 * Context: at start or attach (other threads stopped), and for an object loaded later from
 * reach.c's check (inside its hold of the loader's list); never allocates.
 */
#ifndef HS_GOTSLOT_H
#define HS_GOTSLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Points every loaded object's slots bound to def (the function name, whose definition is
 * def) at hook, except heapsift's own object's (self_base); later objects get the same at
 * hs_got_object_at. name must stay valid. The count of slots rewritten (0: no object
 * imports it), or -EXDEV (def is in the executable, whose own calls bind directly),
 * -ENOSPC (too many names), -ENOSYS. */
int hs_got_redirect(const char *name, void *def, void *hook, const void *self_base);

/* Whether any redirection was made. */
bool hs_got_any(void);

/* The redirections applied to the object loaded at base (its dlpi_addr); the count of
 * slots rewritten. Takes the loader's list lock (dl_iterate_phdr). */
int hs_got_object_at(uintptr_t base);

/* Detach: every slot given back its old value; re-attach: the hooks written again.
 * 0 or the first negative errno. */
int hs_got_remove_all(void);
int hs_got_restore_all(void);

/* How many slots are rewritten (or were, before a detach). */
size_t hs_got_count(void);

#endif

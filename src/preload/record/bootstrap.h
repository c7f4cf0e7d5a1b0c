/*
 * Finding the real allocator (bootstrap.c): the lookup of the next malloc, free, ... in
 * symbol resolution into hs_real (core.h), and the static pool that serves the
 * allocations made while they are looked up (dlsym's calloc).
 */
#ifndef HS_BOOTSTRAP_H
#define HS_BOOTSTRAP_H

#include <stdbool.h>
#include <stddef.h>

/* Looks the real functions up (idempotent, thread-safe). Returns 0 or -ENOENT. */
int hs_bootstrap_resolve(void);
/* Sets two zeroed blocks of size bytes of the real allocator's aside (at start, one
 * thread, guard held): 0 or -ENOMEM. */
int hs_boot_set_aside(size_t size);
/* The next block set aside, if n bytes at this alignment fit (else NULL). Lock-free,
 * allocation-free: for a thread that must not enter the allocator (core.h, boot_only). */
void *hs_boot_aside(size_t align, size_t n);
/* True if p is a block of the static bootstrap pool. */
bool hs_boot_owns(const void *p);
void hs_boot_free(void *p);
size_t hs_boot_size(const void *p);
/* The next operator new (for its new_handler/bad_alloc behaviour on failure). */
void *hs_real_sym(const char *name);

#endif

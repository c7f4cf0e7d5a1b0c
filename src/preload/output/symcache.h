/*
 * Symbol cache: the frames the dumps' symbolizer gave each address of a loaded mapping,
 * kept from one dump to the next, so that a later dump (periodic, on a signal, each
 * scrape of /debug/pprof/heap) symbolizes only the addresses it has not seen before.
 * Dumps only: every call but hs_symcache_mem is made under the dump lock, with the guard
 * held.
 */
#ifndef HS_SYMCACHE_H
#define HS_SYMCACHE_H

#include "base/maps.h"
#include "symbolize/symbolize.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The most bytes (entries, frames and strings) the cache holds: past it, new addresses are
 * not kept (symcache.c). */
#define HS_SYMCACHE_MAX_BYTES (8u << 20)

/* The identity of mapping m (start, limit, file offset, device, inode and build id, as
 * far as m holds it), never 0: an entry holds only while the mapping holding its address
 * has the same. */
uint64_t hs_symcache_map_key(const hs_map_t *m);

/* The n frames cached for addr under map_key (n may be 0: nothing was known). The frames
 * stay valid until the next hs_symcache_put. false if not cached. */
bool hs_symcache_get(uint64_t addr, uint64_t map_key, const hs_symbol_t **frames, size_t *n);

/* Caches frames[0..n) for addr under map_key (replacing what addr had), strings copied
 * (each distinct string once). Past the limit or out of memory, nothing is stored, unless
 * the cache starts over (symcache.c). */
void hs_symcache_put(uint64_t addr, uint64_t map_key, const hs_symbol_t *frames, size_t n);

/* Fork handlers (record/fork.c, registered by symcache.c): the cache's lock (HS_RANK_SYMCACHE,
 * core.h), taken before fork and released after it in both processes, so that a dump on another
 * thread cannot leave the child a cache half changed. */
void hs_symcache_lock(void);
void hs_symcache_unlock(void);

/* Bytes the cache holds (for the profiler's own memory in the accounting); any thread. */
size_t hs_symcache_mem(void);

#endif

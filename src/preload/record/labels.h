/*
 * Label sets: the (key, value) string pairs a thread attaches to the samples it takes
 * (heapsift_label_set / heapsift_label_clear). A set is interned once and never changes
 * or goes away, so a thread holds it as a small id in its TLS (hs_tls.labels) and the
 * sampled path reads it with one load; the id is part of the stack table's key. Bounded:
 * HS_LABELS_MAX_SETS distinct sets, HS_LABELS_MAX_PAIRS pairs per set, keys and values of
 * at most HS_LABELS_MAX_LEN bytes. Past the bound, a thread's set becomes
 * HS_LABELS_OVERFLOW, written as the single label heapsift=label_sets_full.
 * Storage is mmap'd, never malloc'd; lookups are lock-free, interning takes one leaf
 * mutex. Called by control.c (set, clear), dump.c (get) and the fork handlers.
 */
#ifndef HS_LABELS_H
#define HS_LABELS_H

#include <stddef.h>
#include <stdint.h>

#define HS_LABELS_MAX_SETS 16384
#define HS_LABELS_MAX_PAIRS 16
#define HS_LABELS_MAX_LEN 255
#define HS_LABELS_EMPTY 0u                    /* the empty set: no labels */
#define HS_LABELS_OVERFLOW HS_LABELS_MAX_SETS /* the fallback once the bound is hit */

/* The key and value of the fallback set. */
#define HS_LABELS_OVERFLOW_KEY "heapsift"
#define HS_LABELS_OVERFLOW_VALUE "label_sets_full"

/*
 * The id of set `from` with key set to value (value NULL: key removed; key NULL: the
 * empty set). Returns the id (>= 0), or -EINVAL (empty or too long key or value, bad
 * from), -E2BIG (more than HS_LABELS_MAX_PAIRS keys) or -ENOSPC (no room for a new set or
 * its strings: logged once; the caller then uses HS_LABELS_OVERFLOW). Never allocates.
 */
int64_t hs_labels_with(uint32_t from, const char *key, const char *value);

/* The pairs of set id, sorted by key: fills keys[i], values[i] for i < max and returns
 * the number of pairs (0 for an unknown id). The strings live as long as the process. */
size_t hs_labels_get(uint32_t id, const char **keys, const char **values, size_t max);

/* Interned sets, the empty one included; and the bytes the tables have touched. */
uint32_t hs_labels_count(void);
uint64_t hs_labels_mem(void);

/* Fork handlers: the interning lock (a leaf). */
void hs_labels_lock(void);
void hs_labels_unlock(void);

#endif

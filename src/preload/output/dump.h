/*
 * Dumps (dump.c): snapshot the tables under the dump lock, build the profile, and write
 * it (a file named from the pattern, a descriptor of the program's, or memory for the
 * HTTP endpoint).
 */
#ifndef HS_DUMP_H
#define HS_DUMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Writes a profile to path (NULL: next name from the pattern). Returns 0 or -errno. */
int hs_dump(const char *path, const char *kind);
/* Registers who is told, under the dump lock, of each file written under a name from
 * the pattern (kind, path): HEAPSIFT_KEEP's count (triggers.c, from its constructor). */
void hs_dump_on_written(void (*fn)(const char *kind, const char *path));
/* Whether this is the process the user started (not a forked child, nor a descendant
 * under `heapsift run`): the one that always writes its exit profile. */
bool hs_dump_is_root(void);

enum {
    HS_DUMP_FINAL = 1,       /* an exit dump: its pattern name gets no sequence number */
    HS_DUMP_TRIGGER = 2,     /* a trigger's dump: refused (-ECANCELED) once closed */
    HS_DUMP_CLOSE = 4,       /* after this dump, refuse trigger dumps (the process exits) */
    HS_DUMP_INTERRUPTED = 8, /* a program thread may be stopped anywhere (a terminating
                                signal's handler): no allocator statistics, which lock */
};
/* hs_dump with flags. kind "peak" writes the kept peak (hs_peak_copy). Failures are
 * logged once until a dump succeeds again. Holds the guard and the dump lock. */
int hs_dump_ex(const char *path, const char *kind, unsigned flags);
/* Writes a profile to fd: format 0 gzipped pprof, 1 uncompressed pprof. 0 or -errno. */
int hs_dump_fd(int fd, int format);
/* The path of the last profile written to a file ("" if none yet), for attach. */
void hs_dump_last_path(char *out, size_t cap);
/* Profiles written and dumps failed since start. */
void hs_dump_counts(uint64_t *written, uint64_t *failed);
/* Profiles written to files by kind: index 0 "heap" (leak checks' included), 1 "peak"
 * (hs_dump_kind_name). */
#define HS_DUMP_KINDS 2
void hs_dump_counts_by_kind(uint64_t written[HS_DUMP_KINDS]);
const char *hs_dump_kind_name(int k);
/* The unreachable bytes (estimate) the last leak check found; false when none ran. */
bool hs_dump_last_leakcheck(double *bytes);
/* In-memory profiles (the HTTP endpoint). A base is a copy of every stack's four values
 * now; hs_dump_profile builds the profile of kind "heap" or "peak", or with a base the
 * difference between now and it (Go's delta profile: all four values subtracted). The
 * caller frees *out with hs_profile_free. 0 or -errno. */
typedef struct hs_dump_base hs_dump_base_t;
struct hs_profile;
int hs_dump_base_take(hs_dump_base_t **out);
void hs_dump_base_free(hs_dump_base_t *b);
int hs_dump_profile(const char *kind, const hs_dump_base_t *base, struct hs_profile **out);

/* A leak check: stops the program's threads for a reachability scan (reachscan.c), then
 * makes the heap profile with its reachable=yes|no labels: written to path (NULL: the
 * pattern's next name) or, with out non-NULL, handed to the caller (hs_profile_free).
 * The scan runs on one of heapsift's own threads (fdtable.c). 0 or -errno. */
int hs_dump_leakcheck(const char *path, struct hs_profile **out);

#endif

/*
 * Symbolizer: address -> function name (demangled and mangled), file and line, inlined
 * frames included, from ELF symbol tables (.symtab as well as .dynsym, so static functions
 * and main resolve) and DWARF (libdw), with separate debug files found the standard way
 * (.gnu_debuglink, /usr/lib/debug/.build-id). Each binary is opened once; lookups are
 * cached. Used in the profiled process at dump time (never on the allocation path; the
 * caller holds the reentrancy guard) and by the CLI. Not thread-safe.
 */
#ifndef HS_SYMBOLIZE_H
#define HS_SYMBOLIZE_H

#include "model/profile.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct hs_symbolizer hs_symbolizer_t;

/* One frame of a resolved address. Strings are owned by the symbolizer and stay valid
 * until hs_symbolizer_free. Any of them may be NULL when unknown; line 0 when unknown. */
typedef struct {
    const char *name;        /* demangled, e.g. "std::vector<int>::push_back" or "main" */
    const char *system_name; /* as in the symbol table, e.g. "_ZNSt6vector..." */
    const char *file;        /* source file, absolute where DWARF gives it */
    int64_t line;
    int64_t start_line; /* declaration line of the function, 0 when unknown */
} hs_symbol_t;

/* A symbolizer for the live process pid (0 = self), using its /proc/PID/maps. NULL on
 * failure. */
hs_symbolizer_t *hs_symbolizer_new_pid(pid_t pid);
/* The same for this process from its mappings already read (hs_maps_read or
 * hs_maps_read_lazy): no second read and parse of /proc/self/maps, which libdwfl does
 * with sscanf (0.5M instructions for 100 lines). NULL on failure. */
struct hs_maps;
hs_symbolizer_t *hs_symbolizer_new_self(const struct hs_maps *maps);
/* An empty symbolizer; add modules with hs_symbolizer_add_file (the CLI's case). */
hs_symbolizer_t *hs_symbolizer_new(void);
/* Registers the ELF file path as loaded at [start, limit) with file offset offset (as in
 * a maps line / a pprof mapping). Returns 0 or -errno. */
int hs_symbolizer_add_file(hs_symbolizer_t *s, const char *path, uint64_t start, uint64_t limit,
                           uint64_t offset);

/*
 * Resolves addr (an address inside the call instruction, i.e. return address - 1).
 * Fills out[0..n) innermost (inlined) frame first, the function that contains the
 * address last; returns n (0 when nothing is known, at most max).
 */
size_t hs_symbolize(hs_symbolizer_t *s, uint64_t addr, hs_symbol_t *out, size_t max);

/* Which separate debug files (.gnu_debuglink, /usr/lib/debug/.build-id) are read. ALL
 * (the default): their symbol tables and DWARF. SYMTAB: their symbol tables (which name
 * static functions) but never their DWARF, so file:line and inlined frames come from the
 * DWARF inside the mapped files only: a distribution's libc6-dbg alone costs ~0.1 s to
 * decompress per process. NONE: only the mapped files. Call before the first
 * hs_symbolize. */
typedef enum { HS_SYM_DEBUG_ALL, HS_SYM_DEBUG_SYMTAB, HS_SYM_DEBUG_NONE } hs_sym_debug_t;
void hs_symbolizer_separate_debug(hs_symbolizer_t *s, hs_sym_debug_t which);

/* Names only: function names from the symbol tables, no file:line and no inlined frames
 * (no DWARF is read, which for big or compressed debug info is most of the cost). */
void hs_symbolizer_names_only(hs_symbolizer_t *s, bool on);

/* The addresses (n of them) the caller will ask about, copied: a separate debug file with
 * compressed DWARF is then inflated only as far as they need (their answers are the same;
 * other addresses may lack lines and inlined frames). Call before the first hs_symbolize;
 * false when out of memory (nothing changes). */
bool hs_symbolizer_expect(hs_symbolizer_t *s, const uint64_t *addrs, size_t n);

/* The addresses (n of them) the caller will likely ask about, copied, for symbol tables
 * only: a module's names for all of them are found in one pass over its symbols rather
 * than by sorting its whole table (a short process's exit profile asks a 28,900-symbol
 * executable for a handful). The answers are the same; anything else is still answered.
 * false when out of memory (nothing changes). */
bool hs_symbolizer_hint(hs_symbolizer_t *s, const uint64_t *addrs, size_t n);

/* Releases every file, cache and string; gives the memory back. */
void hs_symbolizer_free(hs_symbolizer_t *s);

/* Fills function names and file:line of every location that has none, from the ELF and
 * DWARF of the files its mapping names (or their /usr/lib/debug/.build-id twins). A
 * mapping whose file is missing or whose build id differs from the profile's is left
 * unsymbolized, with one warning on stderr for it unless quiet; long work shows progress
 * on stderr when it is a terminal, unless quiet. Returns how many locations got names,
 * or -ENOMEM. (symbolize_profile.c) */
int hs_profile_symbolize(hs_profile_t *p, bool quiet);

#endif

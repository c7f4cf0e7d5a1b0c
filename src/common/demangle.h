/*
 * Demangling: C++ (Itanium ABI, "_Z..."), Rust legacy ("_ZN...17h<16 hex>E", its hash
 * dropped) and Rust v0 ("_R...") symbol names made into the names their users write, with
 * libiberty (linked statically; the demangler binutils, gdb and perf use). Used by the
 * symbolizer (inside the profiled process at dump time, and in the CLI) and by the CLI's
 * readers for profiles whose names are still mangled (hs_profile_demangle).
 *
 * hs_demangle never allocates and takes no lock: libiberty's callback entry points write
 * into the caller's buffer. Its cost is stack: cp-demangle keeps its component and
 * substitution tables in variable-length arrays, about 100 bytes per byte of the mangled
 * name, which is why the caller bounds the names it accepts. Thread-safe.
 */
#ifndef HS_DEMANGLE_H
#define HS_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* The longest mangled name demangled inside the profiled process (its threads may have
 * small stacks: this costs at most about 100 KiB of stack; longer names stay mangled in
 * the profile and the CLI's readers demangle them), and in the CLI. */
#define HS_DEMANGLE_MAX_IN_PROCESS 1024
#define HS_DEMANGLE_MAX 32768

/* True when name has the form of a mangled name hs_demangle tries ("_Z" or "_R"). */
bool hs_demangle_is_mangled(const char *name);

/*
 * Writes the demangled form of name into out (outlen bytes, NUL-terminated) and returns
 * its length; 0 (out holding "") when name is not a C++ or Rust mangled name libiberty
 * accepts, or is longer than max_in bytes. C++ names keep their parameters and
 * qualifiers ("std::vector<int, std::allocator<int> >::push_back(int const&)"); Rust
 * names lose their hashes ("rjemu::hold_site"). A name longer than outlen - 1 is cut on a
 * UTF-8 character boundary and ends with "...". outlen must be at least 8.
 */
size_t hs_demangle(const char *name, size_t max_in, char *out, size_t outlen);

/*
 * The CLI's readers (readers.c): each function of p whose name is still a mangled name
 * gets its demangled name, the mangled one staying (or going) in system_name, as pprof's
 * symbolizer does; a Rust legacy name that an older demangler left with its hash
 * ("rjemu::hold_site::h99b5704e51b4a513", system_name the mangled one) loses it. Returns
 * how many functions were renamed, or -ENOMEM.
 */
struct hs_profile;
int hs_profile_demangle(struct hs_profile *p);

#endif

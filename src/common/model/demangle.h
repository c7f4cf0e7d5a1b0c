/*
 * Demangling: C++ (Itanium ABI, "_Z..."), Rust legacy ("_ZN...17h<16 hex>E", its hash
 * dropped) and Rust v0 ("_R...") symbol names made into the names their users write, with
 * libiberty (linked statically; the demangler binutils, gdb and perf use). Used by the
 * symbolizer (inside the profiled process at dump time, and in the CLI) and by the CLI's
 * readers for profiles whose names are still mangled (hs_profile_demangle).
 *
 * hs_demangle takes no lock and allocates nothing (libiberty's callback entry points
 * write into the caller's buffer) but for a Rust v0 name with a Unicode identifier, whose
 * punycode libiberty decodes in memory from malloc. Its cost is stack: cp-demangle keeps
 * its tables in variable-length arrays and prints recursively. Measured (test_demangle):
 * the costliest of the 110,194 symbols of rustc's librustc_driver (LLVM's C++ included)
 * takes 36 KiB, real names at most about 140 bytes of stack per byte of the name, crafted
 * ones (a template of a thousand arguments) up to about 430; hence the callers' limits.
 * Thread-safe.
 */
#ifndef HS_DEMANGLE_H
#define HS_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* The longest mangled name demangled inside the profiled process (a real name of this
 * length costs at most about 140 KiB of stack, a crafted one 450 KiB; longer names stay
 * mangled in the profile and the CLI's readers demangle them), and in the CLI (threads
 * of 8 MiB: cp-demangle's tables take about 72 bytes per byte of the name, 2.3 MiB at
 * this limit, and its recursion limit refuses deeper names before about 1 MiB). */
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

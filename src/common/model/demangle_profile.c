/*
 * Demangling a profile read from a file (hs_profile_demangle, demangle.h): the readers'
 * step that gives every view the names a C++ or Rust user reads, whoever wrote the file
 * (Go's pprof before its symbolizer ran, older heapsift files, jemalloc or gperftools
 * profiles symbolized elsewhere). Function.name becomes the demangled name and
 * system_name keeps the mangled one, as pprof's symbolizer writes them. Called by
 * readers.c once per profile read; CLI only (the profiled process demangles as it
 * symbolizes, symbolize.c).
 */
#include "demangle.h"
#include "profile.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Room for the demangled names of the CLI, cut with "..." beyond it. */
#define DP_OUT (64 * 1024)

/* True when name is base[0..n) followed by "::h" and 16 hex digits: a Rust legacy name
 * demangled with its hash (__cxa_demangle's form, which older heapsift wrote). */
static bool dp_hash_tail(const char *name, const char *base, size_t n)
{
    if (strncmp(name, base, n) != 0 || strncmp(name + n, "::h", 3) != 0)
        return false;
    const char *h = name + n + 3;
    size_t k = 0;
    while (k < 16 && ((h[k] >= '0' && h[k] <= '9') || (h[k] >= 'a' && h[k] <= 'f')))
        k++;
    return k == 16 && h[16] == '\0';
}

/* The demangled name for f into buf, or false when it keeps its name. */
static bool dp_new_name(const hs_profile_t *p, const hs_function_t *f, char *buf)
{
    const char *name = hs_profile_get_str(p, f->name);
    const char *sys = hs_profile_get_str(p, f->system_name);
    if (hs_demangle_is_mangled(name))
        return hs_demangle(name, HS_DEMANGLE_MAX, buf, DP_OUT) > 0;
    if (!hs_demangle_is_mangled(sys) || strncmp(sys, "_ZN", 3) != 0)
        return false;
    size_t n = hs_demangle(sys, HS_DEMANGLE_MAX, buf, DP_OUT);
    return n > 0 && dp_hash_tail(name, buf, n);
}

int hs_profile_demangle(hs_profile_t *p)
{
    char *buf = NULL;
    int renamed = 0;
    for (size_t i = 0; i < p->nfunctions; i++) {
        hs_function_t *f = &p->functions[i];
        const char *name = hs_profile_get_str(p, f->name);
        if (name[0] != '_' && !strstr(name, "::h")) /* most names: nothing to do */
            continue;
        if (!buf && !(buf = malloc(DP_OUT)))
            return -ENOMEM;
        if (!dp_new_name(p, f, buf))
            continue;
        int64_t idx = hs_profile_str(p, buf);
        if (idx < 0) {
            free(buf);
            return -ENOMEM;
        }
        if (*hs_profile_get_str(p, f->system_name) == '\0')
            f->system_name = f->name;
        f->name = idx;
        renamed++;
    }
    free(buf);
    return renamed;
}

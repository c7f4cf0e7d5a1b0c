/*
 * The demangler (demangle.h): picks libiberty's entry point by the form of the name and
 * collects its output in the caller's buffer. Rust is tried first for "_R" (v0) and "_ZN"
 * (legacy) names: rust_demangle_callback accepts a legacy name only when its last path
 * element is the "h<16 hex>" hash, and then drops it; any other "_Z" name goes to
 * cplus_demangle_v3_callback with DMGL_PARAMS | DMGL_ANSI, the output __cxa_demangle
 * gives. (cplus_demangle with DMGL_RUST would send every name to the Rust demangler
 * alone, which refuses C++ names such as _ZN3foo3barEv.) Neither entry point calls
 * malloc; both may call the sink with part of a name before they fail, so a failure
 * empties it. Runs in the profiled process at dump time and in the CLI.
 */
#include "demangle.h"
#include "base/utf8.h"

#include <libiberty/demangle.h>
#include <string.h>

#define DM_OPTS (DMGL_PARAMS | DMGL_ANSI)

typedef struct {
    char *out;
    size_t cap; /* bytes of out, >= 8 */
    size_t len; /* bytes written, without the NUL */
    bool cut;   /* more came than fits */
} dm_sink_t;

/* libiberty's callback: appends what fits, remembers that more came. */
static void dm_put(const char *s, size_t n, void *opaque)
{
    dm_sink_t *k = opaque;
    size_t room = k->cap - 1 - k->len;
    if (n > room) {
        n = room;
        k->cut = true;
    }
    memcpy(k->out + k->len, s, n);
    k->len += n;
}

static void dm_reset(dm_sink_t *k)
{
    k->len = 0;
    k->cut = false;
}

/* The sink's text NUL-terminated; a cut one ends with "..." on a character boundary. */
static size_t dm_finish(dm_sink_t *k)
{
    k->out[k->len] = '\0';
    if (k->cut) {
        k->len = hs_utf8_prefix(k->out, k->cap - 4);
        memcpy(k->out + k->len, "...", 4);
        k->len += 3;
    }
    return k->len;
}

bool hs_demangle_is_mangled(const char *name)
{
    return name != NULL && name[0] == '_' && (name[1] == 'Z' || name[1] == 'R');
}

size_t hs_demangle(const char *name, size_t max_in, char *out, size_t outlen)
{
    dm_sink_t k = {.out = out, .cap = outlen};
    if (out == NULL || outlen < 8)
        return 0;
    out[0] = '\0';
    if (!hs_demangle_is_mangled(name) || strnlen(name, max_in + 1) > max_in)
        return 0;
    bool rust = name[1] == 'R' || name[2] == 'N';
    if (rust && rust_demangle_callback(name, DM_OPTS, dm_put, &k) && k.len > 0)
        return dm_finish(&k);
    dm_reset(&k);
    if (name[1] == 'Z' && cplus_demangle_v3_callback(name, DM_OPTS, dm_put, &k) && k.len > 0)
        return dm_finish(&k);
    out[0] = '\0';
    return 0;
}

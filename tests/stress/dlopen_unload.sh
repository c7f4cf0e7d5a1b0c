#!/bin/sh
# dlopen_unload: blocks allocated by a dlopen'ed library are freed after it is unloaded
# (tests/programs/stress_dlopen.c; the two plugins, built here, are the same code under
# two names, so plugin B can take plugin A's old address with the same layout). At
# HEAPSIFT_RATE=1, with the dwarf and libgcc unwinders:
#  - no crash; the profile written while A is loaded names plugin_site_a as the owner of
#    A's bytes; the profiles written after A's unload, before and after B is loaded, read in
#    both readers; A's frames resolve to plugin_site_a or are unknown: never to B's names,
#    and B's never to A's, although the dumps' symbol cache held A's names for the
#    addresses B's code took (plugin_site_b owns exactly B's bytes); main's cumulative
#    inuse still covers both plugins' blocks;
#  - after A's blocks are freed, plugin_site_a owns nothing; the exit profile is valid.
# usage: dlopen_unload.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" dlopen-unload stress_dlopen
PROG=$BUILD/programs/stress_dlopen
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($CC) to build the plugins"; exit 77; }

cat >"$T/plugin.c" <<'SRC'
#include <stdlib.h>
#include <string.h>
static void *volatile kept[8];
__attribute__((noinline, visibility("default"))) void *SITE(size_t n)
{
    void *p = malloc(n);
    if (p)
        memset(p, 0x5a, n);
    return p;
}
__attribute__((visibility("default"))) void plugin_alloc(void **out, int n, size_t size)
{
    for (int i = 0; i < n; i++)
        out[i] = SITE(size);
}
__attribute__((constructor)) static void plugin_init(void)
{
    for (int i = 0; i < 8; i++)
        kept[i] = malloc(64 + i);
}
__attribute__((destructor)) static void plugin_fini(void)
{
    for (int i = 0; i < 8; i++)
        free(kept[i]);
    void *volatile p = malloc(4096); /* allocate and free while being unloaded */
    free(p);
}
SRC
for x in a b; do
    "$CC" -shared -fPIC -O2 -g -DSITE=plugin_site_$x -o "$T/libplugin_$x.so" "$T/plugin.c" \
        2>"$T/cc.err" || { fail "cannot build the plugin"; show "$T/cc.err"; finish; }
done

for unwind in dwarf libgcc; do
    label=$unwind dir=$T/$unwind
    mkdir -p "$dir"
    bounded 60 "$label" env HEAPSIFT_RATE=1 HEAPSIFT_UNWIND=$unwind \
        HEAPSIFT_OUT="$dir/exit.pb.gz" LD_PRELOAD="$LIB" "$PROG" "$T/libplugin_a.so" \
        "$T/libplugin_b.so" "$dir" >"$T/$label.out" 2>"$T/$label.err" || {
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "$label: stress_dlopen exited $RC"
        show "$T/$label.err" 10
        continue
    }
    a=$(sed -n 's/^a_bytes=\([0-9]*\) b_bytes=\([0-9]*\)$/\1/p' "$T/$label.out")
    b=$(sed -n 's/^a_bytes=\([0-9]*\) b_bytes=\([0-9]*\)$/\2/p' "$T/$label.out")
    if valid "$dir/loaded.pb.gz" "$label: loaded.pb.gz"; then
        got=$(inuse_of "$dir/loaded.pb.gz" plugin_site_a)
        [ "$got" = "$a" ] || fail "$label: loaded.pb.gz: plugin_site_a owns ${got:-?} bytes, want $a"
    fi
    if valid "$dir/gone.pb.gz" "$label: gone.pb.gz"; then
        got=$(inuse_of "$dir/gone.pb.gz" plugin_site_a)
        [ "$got" = "$a" ] || [ "$got" = 0 ] ||
            fail "$label: gone.pb.gz: plugin_site_a owns ${got:-?} bytes, want $a (or 0, unknown)"
    fi
    if valid "$dir/unloaded.pb.gz" "$label: unloaded.pb.gz"; then
        got=$(inuse_of "$dir/unloaded.pb.gz" plugin_site_b)
        [ "$got" = "$b" ] || {
            fail "$label: unloaded.pb.gz: plugin_site_b owns ${got:-?} bytes, want $b" \
                "(more: frames at the addresses A and B took in turn were named after the wrong one)"
            [ "$HAVE_GO" = 1 ] && gotop "$dir/unloaded.pb.gz" inuse_space |
                grep -E 'flat|plugin|unknown|\[' >"$T/top" && show "$T/top"
        }
        got=$(inuse_of "$dir/unloaded.pb.gz" plugin_site_a)
        [ "$got" = "$a" ] || [ "$got" = 0 ] ||
            fail "$label: unloaded.pb.gz: plugin_site_a owns ${got:-?} bytes, want $a (or 0, unknown)"
        if [ "$HAVE_GO" = 1 ]; then
            cum=$(gotop "$dir/unloaded.pb.gz" inuse_space | table |
                awk -F '\t' '$1 == "main" { print $3 }')
            [ "${cum:-0}" -ge $((a + b)) ] ||
                fail "$label: unloaded.pb.gz: main's cumulative inuse_space ${cum:-absent}, want >= $((a + b))"
        fi
    fi
    if valid "$dir/freed.pb.gz" "$label: freed.pb.gz"; then
        got=$(inuse_of "$dir/freed.pb.gz" plugin_site_a)
        [ "$got" = 0 ] || fail "$label: freed.pb.gz: plugin_site_a still owns $got bytes"
    fi
    valid "$dir/exit.pb.gz" "$label: exit profile"
done
finish

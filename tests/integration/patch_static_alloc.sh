#!/bin/sh
# Entry-point patching (src/preload/reach/patch.c, issue 26) on the case it exists for: a PIE
# executable linked with a static allocator (libtcmalloc_minimal.a, libjemalloc_pic.a),
# whose own malloc and free no preloaded library can interpose. patch_static_alloc.c
# patches both, checks every call of a loop reaches the hooks and the results are
# unchanged, and that removing the patches restores the originals.
# Usage: patch_static_alloc.sh BUILD_DIR SOURCE_DIR. Exits 77 off x86-64, or when the
# compiler, the Zydis runtime or both archives are missing (scripts/setup.sh installs them).
set -eu
build=$1
src=$2
[ "$(uname -m)" = x86_64 ] || { echo "x86-64 only: skipping"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "no C compiler: skipping"; exit 77; }
ls /usr/lib/*/libZydis.so.4.0 >/dev/null 2>&1 || { echo "libZydis.so.4.0 not found: skipping"; exit 77; }
out=$build/patch_static_alloc
mkdir -p "$out"
ran=0
for lib in tcmalloc_minimal jemalloc_pic; do
    a=$(ls /usr/lib/*/lib$lib.a 2>/dev/null | head -n 1 || true)
    [ -n "$a" ] || { echo "lib$lib.a not found: not tried"; continue; }
    exe=$out/$lib
    cc -O2 -g -fPIE -pie -I"$src/src/preload" -I"$src/src/common" "$src/tests/integration/patch_static_alloc.c" \
        "$src/src/preload/reach/patch.c" "$src/src/preload/reach/patch_mem.c" -o "$exe" -Wl,-Bstatic -l:lib$lib.a -Wl,-Bdynamic \
        -lstdc++ -lpthread -lm -ldl
    # the executable's malloc is its own, not libc's
    nm "$exe" | grep -q ' T malloc$' || { echo "FAIL: $lib: malloc not defined by the executable"; exit 1; }
    res=$("$exe") || { echo "FAIL: $lib: $res"; exit 1; }
    echo "$lib: $res"
    ran=$((ran + 1))
done
[ "$ran" -gt 0 ] || { echo "no static allocator archive: skipping"; exit 77; }

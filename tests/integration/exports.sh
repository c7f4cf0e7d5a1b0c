#!/bin/sh
# exports: libheapsift.so exports the allocation entry points, the C++ operator new/delete
# symbols (every variant: plain, nothrow, sized, aligned) and heapsift_* -- nothing else
# sigaction, signal, _exit and _Exit (termsig.c), (linker-generated _init/_fini/_edata/_end/__bss_start and version nodes allowed), and
# every entry point is really there.
# usage: exports.sh BUILD_DIR SOURCE_DIR
set -eu
BUILD=$(cd "$1" && pwd)
LIB=$BUILD/libheapsift.so
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-exports.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm (binutils) not found"; exit 77; }
[ -e "$LIB" ] || { echo "FAIL: $LIB not built" >&2; exit 1; }

# One "NAME TYPE" per defined dynamic symbol, version suffix (@@VER) removed.
nm -D --defined-only --format=posix "$LIB" >"$T/nm.raw" || { echo "FAIL: nm -D $LIB failed" >&2; exit 1; }
awk '{ n = $1; sub(/@.*$/, "", n); print n, $2 }' "$T/nm.raw" | sort -u >"$T/syms"

C_API="malloc calloc realloc reallocarray free posix_memalign aligned_alloc memalign valloc
pvalloc malloc_usable_size"
# operator new/new[] (size_t [, align_val_t] [, nothrow_t const&]) and delete/delete[]
# (void* [, size_t] [, align_val_t] [, nothrow_t const&]) as libstdc++ declares them.
CXX_API="_Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t _ZnwmSt11align_val_t
_ZnamSt11align_val_t _ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t
_ZdlPv _ZdaPv _ZdlPvm _ZdaPvm _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t _ZdlPvSt11align_val_t
_ZdaPvSt11align_val_t _ZdlPvmSt11align_val_t _ZdaPvmSt11align_val_t
_ZdlPvSt11align_val_tRKSt9nothrow_t _ZdaPvSt11align_val_tRKSt9nothrow_t"
PUBLIC="heapsift_dump heapsift_leak_check"
LINKER="_init _fini _edata _end __bss_start"
# termsig.c: what a program asks of SIGINT/TERM/HUP says SIG_DFL while heapsift stands in;
# a thread ending the process while a signal's exit profile is written dies of the signal.
SIGNALS="sigaction signal _exit _Exit"

fails=0
# Unexpected exports: anything not in the lists, not heapsift_*, not a version node (type A
# with a name like HEAPSIFT_0.1).
echo "$C_API $CXX_API $LINKER $SIGNALS" | tr ' ' '\n' | grep -v '^$' | sort -u >"$T/allowed"
awk 'NR == FNR { ok[$1] = 1; next }
     ($1 in ok) || $1 ~ /^heapsift_[A-Za-z0-9_]+$/ { next }
     $2 == "A" && $1 ~ /^[A-Z][A-Z0-9_.]*$/ { next }
     { print }' "$T/allowed" "$T/syms" >"$T/extra"
if [ -s "$T/extra" ]; then
    echo "FAIL: $LIB exports symbols beyond the allocation entry points and heapsift_*:" >&2
    sed 's/^/    /' "$T/extra" >&2
    fails=$((fails + 1))
fi

# Missing entry points.
missing=""
for s in $C_API $CXX_API $PUBLIC; do
    awk -v s="$s" '$1 == s && $2 ~ /^[TWi]$/ { f = 1 } END { exit !f }' "$T/syms" ||
        missing="$missing $s"
done
if [ -n "$missing" ]; then
    echo "FAIL: $LIB does not export (as a defined function):$missing" >&2
    fails=$((fails + 1))
fi

if [ $fails -ne 0 ]; then
    exit 1
fi
echo "exports: ok ($(wc -l <"$T/syms") symbols)"

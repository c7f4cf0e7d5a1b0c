#!/bin/sh
# The build's own dependencies, checked before CMake runs (Makefile's configure): each
# missing one is named with the command that installs them all. Prints nothing and exits
# 0 when everything is there. scripts/setup.sh installs them.
missing=""
for c in cmake cc c++ pkg-config make; do
    command -v "$c" >/dev/null 2>&1 || missing="$missing $c"
done
if command -v pkg-config >/dev/null 2>&1; then
    for m in libdw libelf zlib; do
        pkg-config --exists "$m" 2>/dev/null || missing="$missing $m(-dev)"
    done
fi
# The demangler (src/common/model/demangle.c) links Debian's static libiberty.
[ -f /usr/include/libiberty/demangle.h ] || missing="$missing libiberty(-dev)"
[ -z "$missing" ] && exit 0
echo "heapsift: missing build dependencies:$missing; run 'make setup' (or 'make demo') first" >&2
exit 1

#!/bin/sh
# Builds bench/symbolize_bench.c against BUILD_DIR's libhs_common.a and runs it on the
# given ELF files (default: the C library and this build's heapsift CLI). Extra options
# (--print, --step N, --names-only) go to the program; see its opening comment.
# Usage: sh bench/symbolize_bench.sh BUILD_DIR [OPTIONS] [FILE...]
set -eu
build=$(cd "${1:?usage: symbolize_bench.sh BUILD_DIR [OPTIONS] [FILE...]}" && pwd)
shift
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
bin=$build/symbolize_bench
cc -std=gnu11 -O2 -g -Wall -Wextra -I"$src/src/common" -I"$src/include" \
    -o "$bin" "$here/symbolize_bench.c" "$build/libhs_common.a" \
    $(pkg-config --libs libdw) -lz -ldl -lpthread
opts=
while [ $# -gt 0 ]; do
    case $1 in
    --step) opts="$opts $1 $2"; shift 2 ;;
    --*) opts="$opts $1"; shift ;;
    *) break ;;
    esac
done
if [ $# -eq 0 ]; then
    libc=$(ldd "$build/heapsift" | sed -n 's/.*=> \(.*libc\.so\.6\) .*/\1/p')
    set -- "$libc" "$build/heapsift"
fi
# shellcheck disable=SC2086
exec "$bin" $opts "$@"

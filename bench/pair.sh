#!/bin/sh
# bench/pair.sh: the extra instructions heapsift adds to one unsampled malloc(64)+free pair
# (issue 43), interposed on glibc and through the in-place hooks on a static
# tcmalloc_minimal, tcmalloc and jemalloc, for one or more builds of libheapsift.so side
# by side (e.g. main's before and a branch's after). Method (bench/reach.sh's part 2):
# bench/pairs.c built dynamically (glibc, interposition) and statically on Debian's
# archives (the hooks), run under `valgrind --tool=callgrind --toggle-collect=run_pairs
# --smc-check=all` with N and 2N pairs, without heapsift and with LD_PRELOAD at
# HEAPSIFT_RATE=2^40 (nothing is ever sampled); per pair = (Ir(2N) - Ir(N)) / N, so
# start-up and one-off costs cancel; extra = heapsift's per pair minus the plain one's.
# Callgrind counts instructions: the figures do not depend on the machine's load.
# usage: sh bench/pair.sh [LABEL=]LIB [[LABEL=]LIB...]   (each a libheapsift.so; its column
#        is named LABEL, or by its directory) env: N (100000), ALLOCATORS
#        ("tcmalloc_minimal tcmalloc jemalloc"), CC (gcc), CXX (g++)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
[ $# -ge 1 ] || { echo "usage: sh bench/pair.sh [LABEL=]LIB [[LABEL=]LIB...]" >&2; exit 1; }
for l in "$@"; do
    [ -f "${l#*=}" ] || { echo "pair: no ${l#*=}" >&2; exit 1; }
done
command -v valgrind >/dev/null || { echo "pair: valgrind is not installed" >&2; exit 1; }
[ "$(uname -m)" = x86_64 ] || { echo "pair: the in-place hooks are x86-64 only" >&2; exit 1; }
n=${N:-100000}
allocs=${ALLOCATORS:-tcmalloc_minimal tcmalloc jemalloc}
cc=${CC:-gcc}
cxx=${CXX:-g++}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-pair.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

p_static() {
    case $1 in
    tcmalloc) echo "-Wl,-Bstatic -l:libtcmalloc.a -Wl,-Bdynamic -lunwind" ;;
    tcmalloc_minimal) echo "-Wl,-Bstatic -l:libtcmalloc_minimal.a -Wl,-Bdynamic" ;;
    jemalloc) echo "-Wl,-Bstatic -l:libjemalloc_pic.a -Wl,-Bdynamic -lm -ldl" ;;
    *) echo "pair: unknown allocator $1" >&2; exit 1 ;;
    esac
}

"$cc" -std=gnu11 -O2 -g -c -o "$tmp/pairs.o" "$here/pairs.c"
"$cc" -o "$tmp/pairs-glibc" "$tmp/pairs.o"
for a in $allocs; do
    # shellcheck disable=SC2046 # the flags are split on purpose
    "$cxx" -pthread -o "$tmp/pairs-$a" "$tmp/pairs.o" $(p_static "$a")
    nm "$tmp/pairs-$a" | grep -q ' T malloc$' ||
        { echo "pair: pairs-$a: malloc is not the executable's own" >&2; exit 1; }
done

# p_ir BIN COUNT [LIB]: callgrind's total Ir for the loop.
p_ir() {
    out=$tmp/cg.out
    if [ $# -ge 3 ]; then
        HEAPSIFT_RATE=1099511627776 HEAPSIFT_OUTPUT="$tmp/prof" LD_PRELOAD="$3" \
            valgrind --tool=callgrind --toggle-collect=run_pairs --smc-check=all \
            --callgrind-out-file="$out" "$1" "$2" 64 >/dev/null 2>"$tmp/vg.err" ||
            { cat "$tmp/vg.err" >&2; exit 1; }
    else
        valgrind --tool=callgrind --toggle-collect=run_pairs --smc-check=all \
            --callgrind-out-file="$out" "$1" "$2" 64 >/dev/null 2>"$tmp/vg.err" ||
            { cat "$tmp/vg.err" >&2; exit 1; }
    fi
    sed -n 's/^summary: //p' "$out"
}
# p_per BIN [LIB]: Ir per pair, (Ir(2N) - Ir(N)) / N.
p_per() {
    a=$(p_ir "$1" "$n" ${2:+"$2"})
    b=$(p_ir "$1" $((2 * n)) ${2:+"$2"})
    awk -v a="$a" -v b="$b" -v n="$n" 'BEGIN { printf "%.2f", (b - a) / n }'
}

printf '| route | plain Ir per pair |'
for l in "$@"; do
    case $l in
    *=*) label=${l%%=*} ;;
    *) label=$(basename "$(dirname "$l")") ;;
    esac
    printf ' extra per pair, %s |' "$label"
done
printf '\n| --- | --- |'
for l in "$@"; do printf ' --- |'; done
printf '\n'
for a in glibc $allocs; do
    if [ "$a" = glibc ]; then route="glibc, interposed"; else route="static $a, hooked in place"; fi
    plain=$(p_per "$tmp/pairs-$a")
    printf '| %s | %s |' "$route" "$plain"
    for l in "$@"; do
        hs=$(p_per "$tmp/pairs-$a" "${l#*=}")
        awk -v h="$hs" -v p="$plain" 'BEGIN { printf " %.2f |", h - p }'
    done
    printf '\n'
done

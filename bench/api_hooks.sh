#!/bin/sh
# bench/api_hooks.sh: the instructions heapsift's hooks on an allocator's own API
# (src/preload/hooks_api.c, issue 38) add to a non-sampled allocate/release pair of 64
# bytes, counted by callgrind (--toggle-collect=run_pairs, --smc-check=all since the code
# is patched at run time) on bench/api_pairs.c: no profiler, and heapsift at
# HEAPSIFT_RATE=2^40 (nothing sampled), at N and 2N pairs; extra per pair =
# ((hs(2N) - hs(N)) - (plain(2N) - plain(N))) / N. The programs:
#   own        the executable defines je_*, _rjem_* (no _rjem_free) and mi_* over a free
#              list of its own: routes je (je_malloc + je_free: the API hooks' pair before
#              issue 38), jex (je_mallocx + je_sdallocx), rjem (_rjem_mallocx +
#              _rjem_sdallocx), mi (mi_malloc_aligned + mi_free)
#   je-shared  linked against Debian's libjemalloc.so: mallocx + sdallocx, mallocx + dallocx
#   je-static  linked against libjemalloc_pic.a: the same
#   mi-shared  linked against Debian's libmimalloc.so: mi_malloc_aligned + mi_free
# With a second library (BASE_LIB, e.g. a build of the commit before), its figures go
# in a column of their own; "-" where it does not hook the route (its reach line says so).
# usage: sh bench/api_hooks.sh LIB [BASE_LIB]   env: N (200000), CC (cc)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
lib=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
base=${2:+$(cd "$(dirname "$2")" && pwd)/$(basename "$2")}
n=${N:-200000}
cc=${CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/api_hooks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
f="-O2 -g"
$cc $f -o "$tmp/own" "$here/api_pairs.c"
$cc $f -DREAL_JEMALLOC -o "$tmp/je-shared" "$here/api_pairs.c" -ljemalloc
$cc $f -DREAL_JEMALLOC -o "$tmp/je-static" "$here/api_pairs.c" -Wl,-Bstatic -l:libjemalloc_pic.a \
    -Wl,-Bdynamic -lpthread -lm -ldl
$cc $f -DREAL_MIMALLOC -o "$tmp/mi-shared" "$here/api_pairs.c" -lmimalloc

# ir EXE ROUTE K [LIB]: run_pairs' instructions for K pairs (with LIB preloaded); the
# reach line into $tmp/reach
ir() {
    set -- "$1" "$2" "$3" "${4:-}"
    if [ -n "$4" ]; then
        env LD_PRELOAD="$4" HEAPSIFT_RATE=1099511627776 HEAPSIFT_OUT="$tmp/p.%p.pb.gz" \
            valgrind --tool=callgrind --toggle-collect=run_pairs --smc-check=all \
            --callgrind-out-file="$tmp/cg.out" "$tmp/$1" "$2" "$3" >/dev/null 2>"$tmp/cg.err"
    else
        valgrind --tool=callgrind --toggle-collect=run_pairs --smc-check=all \
            --callgrind-out-file="$tmp/cg.out" "$tmp/$1" "$2" "$3" >/dev/null 2>"$tmp/cg.err"
    fi
    grep '^heapsift: reach:' "$tmp/cg.err" >"$tmp/reach" || : >"$tmp/reach"
    sed -n 's/^summary: //p' "$tmp/cg.out"
    rm -f "$tmp/cg.out" "$tmp"/p.*.pb.gz
}

# extra EXE ROUTE LIB WORD: extra instructions per pair, or "-" when LIB's reach line does
# not say WORD is hooked in place
extra() {
    a=$(ir "$1" "$2" "$n" "$3")
    grep -q "hooked in place: .*$4" "$tmp/reach" || { echo -; return; }
    b=$(ir "$1" "$2" $((n * 2)) "$3")
    echo $(((b - a - plain) * 100 / n)) | awk '{ printf "%.2f", $1 / 100 }'
}

echo "| program | route | Ir per pair, no profiler | extra per pair, heapsift${base:+ | extra per pair, base library} |"
echo "| --- | --- | --- | ---${base:+ | ---} |"
for row in "own je je_" "own jex je_" "own rjem _rjem_" "own mi mi_" "je-shared mallocx mallocx" \
    "je-shared dallocx dallocx" "je-static mallocx mallocx" "je-static dallocx dallocx" \
    "mi-shared mireal mi_"; do
    set -- $row
    p1=$(ir "$1" "$2" "$n")
    p2=$(ir "$1" "$2" $((n * 2)))
    plain=$((p2 - p1))
    per=$(echo "$plain $n" | awk '{ printf "%.2f", $1 / $2 }')
    new=$(extra "$1" "$2" "$lib" "$3")
    old=""
    [ -n "$base" ] && old=" | $(extra "$1" "$2" "$base" "$3")"
    echo "| $1 | $2 | $per | $new$old |"
done

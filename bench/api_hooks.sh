#!/bin/sh
# bench/api_hooks.sh: the instructions heapsift's hooks on an allocator's own API
# (src/preload/reach/hooks_api.c, issue 38) add to a non-sampled allocate/release pair of 64
# bytes, counted by callgrind (--toggle-collect=run_pairs, --smc-check=all since the code
# is patched at run time) on bench/api_pairs.c, heapsift at HEAPSIFT_RATE=2^40 (nothing
# sampled) with its hooks and with HEAPSIFT_HOOKS=off, at N and 2N pairs; extra per pair =
# ((hooked(2N) - hooked(N)) - (off(2N) - off(N))) / N. The programs:
#   own-*      the executable defines one API over a free list of its own: je_malloc +
#              je_free (the API hooks' pair before issue 38), je_mallocx + je_sdallocx,
#              _rjem_mallocx + _rjem_sdallocx (no _rjem_free), mi_malloc_aligned + mi_free
#   je-shared  linked against Debian's libjemalloc.so: -s mallocx + sdallocx, -d mallocx + dallocx
#   je-static  linked against libjemalloc_pic.a: the same
#   mi-shared  linked against Debian's libmimalloc.so: mi_malloc_aligned + mi_free
#   je-shared-c  calloc + free through interposition into a libjemalloc.so whose mallocx
#              the program imports: the guard heapsift then puts around hs_real's calloc
# The baseline is the same program with heapsift loaded and HEAPSIFT_HOOKS=off, not the
# program alone: under valgrind, static jemalloc's sdallocx takes its slow path (89
# instructions more a pair) in a process without heapsift, and its fast one with heapsift
# loaded, hooks or not; the environment must be the same on both sides.
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
b=$here/api_pairs.c
jes="-Wl,-Bstatic -l:libjemalloc_pic.a -Wl,-Bdynamic -lpthread -lm -ldl"
for r in je jex rjem mi; do
    $cc $f -DROUTE_$(echo $r | tr a-z A-Z) -o "$tmp/own-$r" "$b"
done
$cc $f -DROUTE_MALLOCX -o "$tmp/je-shared-s" "$b" -ljemalloc
$cc $f -DROUTE_DALLOCX -o "$tmp/je-shared-d" "$b" -ljemalloc
$cc $f -DROUTE_MALLOCX -o "$tmp/je-static-s" "$b" $jes
$cc $f -DROUTE_DALLOCX -o "$tmp/je-static-d" "$b" $jes
$cc $f -DROUTE_MIREAL -o "$tmp/mi-shared" "$b" -lmimalloc
$cc $f -DROUTE_CALLOC -o "$tmp/je-shared-c" "$b" -ljemalloc

# ir EXE K LIB HOOKS: run_pairs' instructions for K pairs, LIB preloaded at
# HEAPSIFT_RATE=2^40 with HEAPSIFT_HOOKS=HOOKS; the reach line into $tmp/reach
ir() {
    env LD_PRELOAD="$3" HEAPSIFT_HOOKS="$4" HEAPSIFT_RATE=1099511627776 \
        HEAPSIFT_OUT="$tmp/p.%p.pb.gz" valgrind --tool=callgrind --toggle-collect=run_pairs \
        --smc-check=all --callgrind-out-file="$tmp/cg.out" "$tmp/$1" "$2" >/dev/null 2>"$tmp/cg.err"
    grep '^heapsift: reach:' "$tmp/cg.err" >"$tmp/reach" || : >"$tmp/reach"
    sed -n 's/^summary: //p' "$tmp/cg.out"
    rm -f "$tmp/cg.out" "$tmp"/p.*.pb.gz
}

# extra EXE LIB WORD: instructions per pair the hooks add (HEAPSIFT_HOOKS=auto over off,
# the same library loaded both times), or "-" when LIB's reach line does not say WORD is
# hooked in place; per: the pair's own cost, hooks off
extra() {
    o1=$(ir "$1" "$n" "$2" off)
    o2=$(ir "$1" $((n * 2)) "$2" off)
    per=$(echo "$o1 $o2 $n" | awk '{ printf "%.2f", ($2 - $1) / $3 }')
    a=$(ir "$1" "$n" "$2" auto)
    grep -q "hooked in place: .*$3" "$tmp/reach" || { echo "$per -"; return; }
    b=$(ir "$1" $((n * 2)) "$2" auto)
    echo "$o1 $o2 $a $b $n" | awk '{ printf "%.2f %.2f", ($2 - $1) / $5, (($4 - $3) - ($2 - $1)) / $5 }'
}

echo "| program | pair | Ir per pair, hooks off | Ir the hooks add per pair${base:+ | the same, base library}${base:+ | hooks off, base library} |"
echo "| --- | --- | --- | ---${base:+ | --- | ---} |"
for row in "own-je je_malloc+je_free je_" "own-jex je_mallocx+je_sdallocx je_" \
    "own-rjem _rjem_mallocx+_rjem_sdallocx _rjem_" "own-mi mi_malloc_aligned+mi_free mi_" \
    "je-shared-s mallocx+sdallocx mallocx" "je-shared-d mallocx+dallocx dallocx" \
    "je-static-s mallocx+sdallocx mallocx" "je-static-d mallocx+dallocx dallocx" \
    "mi-shared mi_malloc_aligned+mi_free mi_" "je-shared-c calloc+free(interposed) mallocx"; do
    set -- $row
    new=$(extra "$1" "$lib" "$3")
    old=""
    if [ -n "$base" ]; then
        o=$(extra "$1" "$base" "$3")
        old=" | ${o#* } | ${o%% *}"
    fi
    echo "| $1 | $2 | ${new%% *} | ${new#* }$old |"
done

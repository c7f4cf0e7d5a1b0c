#!/bin/sh
# Issue 39 part 4: sampled jemalloc heap_v2 dumps read figure for figure as jeprof reads
# them. jeprof scales each record in floating point (AdjustSamples), sums the floats per
# stack, per function and per total, and truncates only what it prints; heapsift must
# give the same integers, not the sums of truncated records.
#
# A program of 160 small allocation sites (8 to 600 bytes, malloc and calloc), each
# reached through two callers, so that every site's flat row and every caller's cum row
# add up many stacks, is run under Debian's libjemalloc2 with prof_accum at
# lg_prof_sample 0, 10, 14 and 17, and once without prof_accum (in-use counts only).
# A quarter of the sites allocate through wrappers named allocate, cpp_alloc and
# do_memalign: pprof's list of allocator frames drops those names, jeprof's keeps them
# as the allocating function (and so must heapsift for a jemalloc file).
# For each dump and each sample type:
#  - the total of `jeprof --text` and of `heapsift top` are equal;
#  - every row heapsift top shows has jeprof's flat and cum for that function (a frame
#    heapsift leaves unnamed, [libstdc++.so.6...], is matched by its two figures alone:
#    jeprof names it after the nearest dynamic symbol), and every function of the
#    program that jeprof shows above pprof's 0.5% cut is among them;
#  - go tool pprof reads `heapsift convert --to pprof` with jeprof's total.
# Usage: jeprof_figures.sh BUILD_DIR SOURCE_DIR. Exits 77 with the reason when jeprof,
# libjemalloc, go or a C compiler is missing (scripts/setup.sh installs them).
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" jeprof
hs_need_go
hs_need_built "$CLI"
command -v jeprof >/dev/null 2>&1 || { echo "SKIP: jeprof not found (libjemalloc-dev)"; exit 77; }
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
[ -n "$je" ] || { echo "SKIP: libjemalloc.so.2 not found (libjemalloc2)"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "SKIP: no C compiler"; exit 77; }
export GOCACHE="$T/gocache"

# The program: site_I allocates SIZE_I bytes COUNT times, keeping one block in KEEP.
nsites=160
{
    echo '#include <stdlib.h>'
    echo '#include <string.h>'
    echo 'void *keep[1 << 21]; /* external: the compiler may not drop what is kept */'
    echo 'int nkeep;'
    for w in allocate cpp_alloc do_memalign; do
        echo "__attribute__((noinline)) void *$w(size_t n) { return malloc(n); }"
    done
    i=0
    while [ $i -lt $nsites ]; do
        size=$((8 + (i * 37) % 593))
        call="malloc($size)"
        [ $((i % 3)) -ne 0 ] || call="calloc(1, $size)"
        case $((i % 8)) in
        1) call="allocate($size)" ;;
        2) call="cpp_alloc($size)" ;;
        5) call="do_memalign($size)" ;;
        esac
        echo "__attribute__((noinline)) void site_$i(int count, int keep_every)"
        echo "{ for (int j = 0; j < count; j++) { char *p = $call; p[0] = 1;"
        echo "    if (j % keep_every == 0) keep[nkeep++] = p; else free(p); } }"
        i=$((i + 1))
    done
    printf 'static void (*const sites[])(int, int) = {'
    i=0
    while [ $i -lt $nsites ]; do
        printf 'site_%d, ' $i
        i=$((i + 1))
    done
    echo '};'
    echo '__attribute__((noinline)) void via_a(int i, int n) { sites[i](n, 2 + i % 5); }'
    echo '__attribute__((noinline)) void via_b(int i, int n) { sites[i](n / 2 + 40, 3); }'
    echo 'int main(void)'
    echo '{'
    echo "    for (int i = 0; i < $nsites; i++) {"
    echo '        via_a(i, 150 + (i * 97) % 2500);'
    echo '        via_b(i, 150 + (i * 53) % 1800);'
    echo '    }'
    echo '    return nkeep < 0;'
    echo '}'
} >"$T/sites.c"
cc -O1 -g -fno-omit-frame-pointer -fno-optimize-sibling-calls -o "$T/sites" "$T/sites.c"

# rows FILE: "NAME<TAB>FLAT<TAB>CUM" of a jeprof --text or heapsift top table, sorted.
rows() {
    awk '/^ *flat +flat%/ { on = 1; next }
        /^Total: / { on = 1; next }
        on && NF >= 6 {
            n = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", n)
            f = $1; c = $4; sub(/B$/, "", f); sub(/B$/, "", c)
            printf "%s\t%s\t%s\n", n, f, c
        }' "$1" | sort
}

# check_type NAME FILE TYPE JEPROF_OPTION
check_type() {
    name=$1 f=$2 st=$3 opt=$4
    jeprof --text --show_bytes "$opt" "$T/sites" "$f" >"$T/je.txt" 2>/dev/null
    "$CLI" top --unit B --sample-type "$st" "$f" >"$T/hs.txt" 2>"$T/hs.err" ||
        { fail "$name $st: heapsift top failed"; show "$T/hs.err"; return; }
    jt=$(sed -n 's/^Total: \([0-9]*\) .*/\1/p' "$T/je.txt")
    ht=$(sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p' "$T/hs.txt")
    pt=$(go tool pprof -top -unit=B -sample_index="$st" "$T/conv.pb.gz" 2>/dev/null |
        sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p')
    rows "$T/je.txt" >"$T/je.rows"
    rows "$T/hs.txt" >"$T/hs.rows"
    # heapsift's rows against jeprof's: by name, or by figures for an unnamed object.
    bad=$(awk -F '\t' 'NR == FNR { fl[$1] = $2; cu[$1] = $3; fig[$2 "\t" $3] = 1; next }
        $1 ~ /^\[.*\]$/ { if (!(($2 "\t" $3) in fig)) print "  " $0 " (no jeprof row with these figures)"; next }
        !($1 in fl) { print "  " $0 " (not in jeprof)"; next }
        fl[$1] != $2 || cu[$1] != $3 { print "  " $0 " (jeprof: " fl[$1] "\t" cu[$1] ")" }' \
        "$T/je.rows" "$T/hs.rows")
    # The program's functions jeprof shows above the 0.5% cut must all be shown.
    cut=$((jt / 200))
    missing=$(awk -F '\t' -v cut="$cut" 'NR == FNR { have[$1] = 1; next }
        $1 ~ /^(site_[0-9]+|via_[ab]|main|allocate|cpp_alloc|do_memalign)$/ && $3 > cut && !($1 in have) { print "  " $1 }' \
        "$T/hs.rows" "$T/je.rows")
    nrows=$(wc -l <"$T/hs.rows")
    echo "$name $st: jeprof $jt, heapsift $ht, go tool pprof on the conversion $pt; $nrows rows"
    [ -n "$jt" ] && [ "$jt" -gt 0 ] || fail "$name $st: jeprof printed no total"
    [ "$ht" = "$jt" ] || fail "$name $st: heapsift total '$ht', jeprof '$jt'"
    [ "$pt" = "$jt" ] || fail "$name $st: go tool pprof reads the conversion as '$pt', jeprof '$jt'"
    [ "$nrows" -ge 20 ] || fail "$name $st: only $nrows rows in heapsift top"
    [ -z "$bad" ] || { fail "$name $st: rows differ from jeprof's (name, flat, cum):"; echo "$bad" >&2; }
    [ -z "$missing" ] || { fail "$name $st: jeprof's rows missing from heapsift top:"; echo "$missing" >&2; }
}

# dump NAME CONF TYPES...: runs the program under jemalloc's profiler and checks the dump.
dump() {
    name=$1 conf=$2
    shift 2
    rm -f "$T"/je.*.heap
    MALLOC_CONF="prof:true,prof_final:true,prof_prefix:$T/je,$conf" LD_PRELOAD=$je "$T/sites" ||
        { fail "$name: the program failed under jemalloc"; return; }
    f=$(ls "$T"/je.*.heap 2>/dev/null | head -n 1)
    [ -n "$f" ] && head -n 1 "$f" | grep -q '^heap_v2/' || { fail "$name: no heap_v2 dump"; return; }
    mv "$f" "$T/$name.heap"
    f=$T/$name.heap
    echo "$name: $(head -n 1 "$f"), $(grep -c '^@' "$f") stacks"
    "$CLI" convert --to pprof -q -o "$T/conv.pb.gz" "$f" || { fail "$name: convert failed"; return; }
    for st in "$@"; do
        check_type "$name" "$f" "$st" "--$st"
    done
}

all="inuse_space inuse_objects alloc_space alloc_objects"
# shellcheck disable=SC2086
{
    dump lg0 lg_prof_sample:0,prof_accum:true $all
    dump lg10 lg_prof_sample:10,prof_accum:true $all
    dump lg14 lg_prof_sample:14,prof_accum:true $all
    dump lg17 lg_prof_sample:17,prof_accum:true $all
    dump lg12_inuse lg_prof_sample:12 inuse_space inuse_objects
}

if [ "$FAILS" -ne 0 ]; then
    echo "jeprof_figures: $FAILS check(s) failed" >&2
    exit 1
fi
echo "jeprof_figures: ok"

#!/bin/sh
# dwarf_mix: file:line for a program whose .debug_aranges libdw 0.188 cannot read, which
# gave every frame of the Rust programs linking jemalloc-sys line 0 ("No source
# information" in heapsift list): tests/programs/dwarfmix, main.c built -gdwarf-4 and
# sites.c -gdwarf-5 -ffunction-sections, linked with --gc-sections (its empty function
# dropped, a pair (0, 0) left inside sites.c's set of .debug_aranges, where libdw stops
# reading the set, then fails on the rest); and the same sources built by clang, which
# writes no .debug_aranges at all. The build is checked to have what it is made for
# (both DWARF versions; the early (0, 0); no table from clang), then each program runs at
# rate 1 and its exit profile must place v4_site's and v5_site's 1200000 bytes on their
# malloc lines, the calloc lines holding 2400 and 1600 bytes, in go tool pprof -lines
# -top (the lines the in-process symbolizer wrote) and in heapsift list, which must also
# print what go tool pprof -list prints.
# Usage: dwarf_mix.sh BUILD_DIR SOURCE_DIR. Exits 77 (skip) when go is missing.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" dwarf_mix
src=$(cd "$2" && pwd)/tests/programs/dwarfmix
hs_need_go
hs_need_built "$CLI" "$LIB"
for t in cc clang-14 readelf; do
    command -v $t >/dev/null 2>&1 || { echo "FAIL: $t not found (scripts/setup.sh installs it)"; exit 1; }
done
export GOCACHE="$T/gocache"

# The expected lines, from the sources' markers.
line_of() { grep -n "/\* site: $2 \*/" "$src/$1" | cut -d: -f1; }
v4=$(line_of main.c v4) v4k=$(line_of main.c "v4 keep")
v5=$(line_of sites.c v5) v5k=$(line_of sites.c "v5 keep")

# build COMPILER OUT: main.c as DWARF 4, sites.c as DWARF 5 in function sections
build() {
    $1 -O2 -g -gdwarf-4 -c "$src/main.c" -o "$T/main.o"
    $1 -O2 -g -gdwarf-5 -ffunction-sections -c "$src/sites.c" -o "$T/sites.o"
    $1 -Wl,--gc-sections -o "$2" "$T/main.o" "$T/sites.o"
}
build cc "$T/gcc"
build clang-14 "$T/clang"

for p in gcc clang; do
    for v in 4 5; do
        readelf --debug-dump=info "$T/$p" | grep -q "Version: *$v\$" ||
            fail "$p build: no DWARF $v unit"
    done
done
# A pair (0, 0) followed by another pair before the set's end.
readelf --debug-dump=aranges "$T/gcc" | awk '
    /Length:/ { z = 0 }
    $1 ~ /^0+$/ && $2 ~ /^0+$/ { z = 1; next }
    z && $1 ~ /^[0-9a-f]+$/ && NF == 2 { early = 1 }
    END { exit !early }' || fail "gcc build: no (0, 0) pair inside a set of .debug_aranges"
readelf -S "$T/clang" | grep -q debug_aranges && fail "clang build: has .debug_aranges"

# check PROGRAM: its profile has the sites' lines, in pprof and in heapsift list
check() {
    p=$1 f=$T/$1.pb.gz
    "$CLI" run --rate 1 -o "$f" -- "$T/$p" >/dev/null 2>"$T/run.err" ||
        { fail "$p: heapsift run: status $?"; show "$T/run.err"; return 0; }
    go tool pprof -symbolize=none -lines -top -unit=B -nodefraction=0 -nodecount=0 \
        -sample_index=inuse_space "$f" >"$T/top" 2>/dev/null
    for want in "1200000B v4_site $src/main.c:$v4" "2400B v4_site $src/main.c:$v4k" \
        "1200000B v5_site $src/sites.c:$v5" "1600B v5_site $src/sites.c:$v5k"; do
        awk -v w="$want" '$1 " " $6 " " $7 == w { found = 1 } END { exit !found }' "$T/top" ||
            { fail "$p: go tool pprof -lines -top has no row '$want'"; show "$T/top"; }
    done
    for fn in v4_site v5_site; do
        (cd "$T" && "$CLI" list --symbolize=none --unit B "^$fn\$" "$f") >"$T/ours" 2>&1 ||
            { fail "$p: heapsift list $fn: status $?"; show "$T/ours"; continue; }
        (cd "$T" && go tool pprof -symbolize=none -unit=B -list "^$fn\$" "$f") >"$T/theirs" 2>/dev/null || true
        cmp -s "$T/ours" "$T/theirs" ||
            { fail "$p: heapsift list $fn vs go tool pprof -list"; diff "$T/ours" "$T/theirs" | show /dev/stdin 12; }
    done
    "$CLI" list --unit B v5_site "$f" >"$T/list" 2>&1
    grep -q "ROUTINE ======================== v5_site in $src/sites.c" "$T/list" ||
        { fail "$p: heapsift list v5_site names no sites.c"; show "$T/list"; }
    got=$(awk -v l="$v5:" '$3 == l { print $1 }' "$T/list")
    [ "$got" = 1200000B ] || { fail "$p: heapsift list: line $v5 of sites.c has '$got'"; show "$T/list"; }
    got=$("$CLI" list --unit B v4_site "$f" | awk -v l="$v4:" '$3 == l { print $1 }')
    [ "$got" = 1200000B ] || fail "$p: heapsift list: line $v4 of main.c has '$got'"
}
check gcc
check clang

echo "dwarf_mix: $FAILS failures"
[ "$FAILS" -eq 0 ]

#!/bin/sh
# leaf_cxx: the leaf is the code that asked (drop_frames, src/common/model/dropframes.c) in a C++
# program whose memory comes through libstdc++'s allocator templates: tests/programs/leaf_cc.cc
# at HEAPSIFT_RATE=1, interposed, and linked with a static jemalloc (its executable defines
# malloc: the in-place hooks) when libjemalloc_pic.a is there:
# - `heapsift top` and `go tool pprof -top` give each site exactly the bytes the program
#   says (site_alloc flat, through std::__new_allocator<char>::allocate; site_new flat;
#   std::vector<char>::reserve flat and site_vec, its caller, cum), their tables agree byte
#   for byte from "Showing nodes" on, and no allocator frame (operator new/delete, malloc &
#   co, std::__new_allocator, std::allocator_traits, _Vector_base::_M_allocate) holds any flat
#   bytes in either;
# - no stack of `go tool pprof -traces` or `heapsift collapsed` ends in such a frame, and the
#   leak report's site_alloc starts at site_alloc;
# - `heapsift top --no-drop-frames` puts the bytes of site_alloc and vector::reserve back on
#   the allocator's frame (std::__new_allocator<char>::allocate, inlined into both), and the
#   share of the flat column allocator frames held without drop_frames is printed.
# usage: leaf_cxx.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" leaf_cxx
SRC=$(cd "$2" && pwd)
PROG=$BUILD/programs/leaf_cc
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"

# The allocator's frames, as this test knows them (independent of the rule).
ALLOC_RE='^(malloc|calloc|realloc|free|operator (new|delete).*|std::(__new_allocator|allocator_traits|allocator)[<:].*|__gnu_cxx::new_allocator.*|std::_Vector_base<.*>::_M_allocate.*|_Zn[wa].*|_Zd[la]Pv.*|je_.*|_rjem_.*)$'

# rows: a -top table on stdin -> common.sh's table, the " (inline)" mark dropped
rows() {
    table | sed 's/ (inline)\t/\t/'
}

# expect LABEL EXPECT ROWS: every site of EXPECT (NAME flat|cum OBJECTS BYTES) has exactly
# its bytes in ROWS (NAME, or NAME(args))
expect() {
    awk -F '\t' -v label="$1" '
        NR == FNR { m = split($0, e, " "); n = e[1]; for (i = 2; i < m - 2; i++) n = n " " e[i]
                    want[n] = e[m]; kind[n] = e[m - 2]; next }
        { fl[$1] = $2; cu[$1] = $3; names[++nn] = $1 }
        END { for (w in want) {
                  got = ""
                  for (i = 1; i <= nn; i++)
                      if (names[i] == w || substr(names[i], 1, length(w) + 1) == w "(")
                          got = (kind[w] == "cum" ? cu[names[i]] : fl[names[i]])
                  if (got == "" || got + 0 != want[w] + 0) {
                      printf "%s: %s %s = %s, want %s\n", label, w, kind[w], got, want[w]; bad++ }
              }
              exit bad > 0 }' "$2" "$3" >&2
}

# no_alloc_flat LABEL ROWS: no allocator frame with flat bytes
no_alloc_flat() {
    awk -F '\t' -v re="$ALLOC_RE" '$1 ~ re && $2 + 0 != 0 { print; bad++ } END { exit bad > 0 }' \
        "$2" >"$T/bad" || { fail "$1: allocator frames hold flat bytes"; show "$T/bad" 10; }
}

# alloc_share ROWS: the percentage of the flat column allocator frames hold
alloc_share() {
    awk -F '\t' -v re="$ALLOC_RE" '{ t += $2; if ($1 ~ re) a += $2 }
        END { printf "%.1f", t ? 100 * a / t : 0 }' "$1"
}

check_prog() { # NAME PROGRAM: run it and check every view
    name=$1
    prog=$2
    f=$T/$name.pb.gz
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$f" HEAPSIFT_LEAKS=1 LD_PRELOAD="$LIB" "$prog" --expect \
        >"$T/$name.expect" 2>"$T/$name.err" || { fail "$name: status $?"; show "$T/$name.err"; return 0; }
    [ -s "$f" ] || { fail "$name: no profile"; show "$T/$name.err"; return 0; }
    "$CLI" top --unit B --sample-type inuse_space "$f" >"$T/$name.hs" 2>"$T/$name.hs.err" ||
        { fail "$name: heapsift top: status $?"; show "$T/$name.hs.err"; }
    go tool pprof -top -symbolize=none -unit=B -sample_index=inuse_space "$f" >"$T/$name.go" \
        2>/dev/null || fail "$name: go tool pprof -top"
    rows <"$T/$name.hs" >"$T/$name.hs.rows"
    rows <"$T/$name.go" >"$T/$name.go.rows"
    expect "$name: heapsift top" "$T/$name.expect" "$T/$name.hs.rows" ||
        { fail "$name: heapsift top's sites"; show "$T/$name.hs" 30; }
    expect "$name: go tool pprof -top" "$T/$name.expect" "$T/$name.go.rows" ||
        { fail "$name: go tool pprof -top's sites"; show "$T/$name.go" 30; }
    sed -n '/^Showing nodes/,$p' "$T/$name.hs" >"$T/$name.hs.tail"
    sed -n '/^Showing nodes/,$p' "$T/$name.go" >"$T/$name.go.tail"
    cmp -s "$T/$name.hs.tail" "$T/$name.go.tail" ||
        { fail "$name: heapsift top and go tool pprof -top differ"; diff "$T/$name.hs.tail" "$T/$name.go.tail" | head -20 >&2; }
    no_alloc_flat "$name: heapsift top" "$T/$name.hs.rows"
    no_alloc_flat "$name: go tool pprof -top" "$T/$name.go.rows"

    # every stack's leaf, in go tool pprof -traces and heapsift collapsed
    traces "$f" | awk -F ';' -v re="$ALLOC_RE" '
        { n = $1; sub(/\(.*$/, "", n); if ($1 ~ re || n ~ re) { print; bad++ } } END { exit bad > 0 }' \
        >"$T/bad" || { fail "$name: go tool pprof -traces: stacks end in the allocator"; show "$T/bad" 5; }
    "$CLI" collapsed --sample-type alloc_space "$f" 2>/dev/null | awk -v re="$ALLOC_RE" '
        { s = $0; sub(/ [-0-9]+$/, "", s); n = split(s, fr, ";"); leaf = fr[n]; short = leaf
          sub(/\(.*$/, "", short)
          if (leaf ~ re || short ~ re) { print; bad++ } } END { exit bad > 0 }' >"$T/bad" ||
        { fail "$name: heapsift collapsed: stacks end in the allocator"; show "$T/bad" 5; }

    # the leak report (stderr): site_alloc's stack starts at site_alloc
    bytes=$(awk '$1 == "site_alloc" { print $4 }' "$T/$name.expect")
    awk -v b="$bytes" '$0 ~ "^heapsift: " b " bytes in [0-9]+ objects? allocated from:$" { getline; print; exit }' \
        "$T/$name.err" >"$T/$name.leak0"
    grep -q ' in site_alloc()' "$T/$name.leak0" ||
        { fail "$name: the leak report's site_alloc does not start at site_alloc: $(cat "$T/$name.leak0")"; show "$T/$name.err" 30; }

    # --no-drop-frames: the allocator's frame (inlined into site_alloc and into reserve) holds
    # their bytes again, site_alloc none
    "$CLI" top --no-drop-frames --unit B --sample-type inuse_space "$f" 2>/dev/null | rows >"$T/$name.raw.rows"
    want=$(awk '$1 == "site_alloc" || $1 == "std::vector<char," { s += $NF } END { print s }' "$T/$name.expect")
    raw=$(awk -F '\t' 'index($1, "std::__new_allocator<char>::allocate") == 1 { print $2 }' "$T/$name.raw.rows")
    site=$(awk -F '\t' 'index($1, "site_alloc(") == 1 { print $2 }' "$T/$name.raw.rows")
    [ "${raw:-0}" = "$want" ] && [ "${site:-0}" = 0 ] ||
        { fail "$name: --no-drop-frames: std::__new_allocator<char>::allocate holds '${raw:-}' (want $want), site_alloc '${site:-}' (want 0)"; show "$T/$name.raw.rows" 20; }
    echo "$name: allocator frames hold $(alloc_share "$T/$name.raw.rows")% of the flat column without drop_frames, $(alloc_share "$T/$name.hs.rows")% with it"
}

check_prog interposed "$PROG"

# The same program with a static jemalloc: its executable defines malloc (in-place hooks).
if c++ -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -I"$SRC/tests/programs" \
    -o "$T/leaf_je" "$SRC/tests/programs/leaf_cc.cc" -pthread -Wl,-Bstatic -l:libjemalloc_pic.a \
    -Wl,-Bdynamic -lm -ldl 2>"$T/cc.err"; then
    check_prog static_jemalloc "$T/leaf_je"
else
    fail "cannot link libjemalloc_pic.a (libjemalloc-dev)"
    show "$T/cc.err"
fi

if [ $FAILS -ne 0 ]; then
    echo "leaf_cxx: $FAILS check(s) failed" >&2
    exit 1
fi
echo "leaf_cxx: ok"

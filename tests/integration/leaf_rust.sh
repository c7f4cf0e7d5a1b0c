#!/bin/sh
# leaf_rust: the leaf is the code that asked (drop_frames, src/common/model/dropframes.c) in a Rust
# program whose memory comes through Rust's plumbing: tests/programs/rust/leaf.rs, built
# here with the machine's rustc (no crates), with legacy and with v0 symbol mangling, at
# HEAPSIFT_RATE=1. Its Vec growth ends in alloc::raw_vec frames (RawVec::grow_one,
# finish_grow), __rust_realloc and std's __rdl_realloc, its Box::new in __rust_alloc:
# - each site (site_vec, site_reserve, site_box) holds exactly the bytes the program says,
#   flat, in `heapsift top`, in `go tool pprof -top -symbolize=none` (the names as the
#   profile has them) and in `go tool pprof -top` (pprof demangles them first, then prunes);
#   heapsift's table is pprof's (-symbolize=none) byte for byte from "Showing nodes" on;
# - no allocator frame (malloc & co, __rust_alloc & co, __rdl_*, alloc::alloc, alloc::raw_vec,
#   std::alloc, in any of their forms) holds flat bytes, in any of the three;
# - `heapsift top --no-drop-frames` leaves site_vec no flat bytes (the allocator's frames hold
#   them), and the share of the flat column allocator frames held is printed for the record.
# usage: leaf_rust.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" leaf_rust
SRC=$(cd "$2" && pwd)
hs_need_go
hs_need_built "$LIB" "$CLI"
RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] || RUSTC=${HOME:-/root}/.cargo/bin/rustc
[ -x "$RUSTC" ] || { echo "FAIL: no rustc (scripts/setup.sh installs Debian's rustc)" >&2; exit 1; }

# The allocator's frames, as this test knows them, demangled (legacy and v0, pprof's and
# __cxa_demangle's forms) and mangled.
ALLOC_RE='^(malloc|calloc|realloc|free|posix_memalign|(.*::)?__r(ust|dl|g)_[a-z_]*(::h[0-9a-f]+)?|<?alloc::(alloc|raw_vec)::.*|std::alloc::.*|std::sys::.*alloc.*|<.* as core::alloc::.*|.*raw_vec.*|.*5alloc5alloc.*|.*3std5alloc.*|.*___rustc.*)$'

# rows: a -top table on stdin -> common.sh's table, the " (inline)" mark dropped
rows() {
    table | sed 's/ (inline)\t/\t/'
}

# sites LABEL EXPECT ROWS: each site of EXPECT (NAME flat BYTES) is the one row whose name
# holds NAME, with exactly BYTES flat
sites() {
    awk -F '\t' -v label="$1" '
        NR == FNR { split($0, e, " "); want[e[1]] = e[3]; next }
        { for (w in want) if (index($1, w)) { got[w] += $2; n[w]++ } }
        END { for (w in want) if (n[w] != 1 || got[w] != want[w] + 0) {
                  printf "%s: %s: %d rows, flat %s, want one row with %s\n", label, w, n[w],
                         got[w], want[w]; bad++ }
              exit bad > 0 }' "$2" "$3" >&2
}

no_alloc_flat() {
    awk -F '\t' -v re="$ALLOC_RE" '$1 ~ re && $2 + 0 != 0 { print; bad++ } END { exit bad > 0 }' \
        "$2" >"$T/bad" || { fail "$1: allocator frames hold flat bytes"; show "$T/bad" 10; }
}

alloc_share() {
    awk -F '\t' -v re="$ALLOC_RE" '{ t += $2; if ($1 ~ re) a += $2 }
        END { printf "%.1f", t ? 100 * a / t : 0 }' "$1"
}

for mangling in legacy v0; do
    bin=$T/leaf_$mangling
    flags="" # legacy is stable rustc's default (naming it needs -Z unstable-options)
    [ $mangling = legacy ] || flags="-C symbol-mangling-version=$mangling"
    # shellcheck disable=SC2086
    "$RUSTC" -O -C debuginfo=0 $flags -o "$bin" "$SRC/tests/programs/rust/leaf.rs" 2>"$T/rustc.err" ||
        { fail "rustc leaf.rs ($mangling)"; show "$T/rustc.err"; continue; }
    f=$T/$mangling.pb.gz
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$f" LD_PRELOAD="$LIB" "$bin" >"$T/$mangling.expect" \
        2>"$T/$mangling.err" || { fail "$mangling: status $?"; show "$T/$mangling.err"; continue; }
    [ "$(wc -l <"$T/$mangling.expect")" -eq 3 ] || { fail "$mangling: output"; show "$T/$mangling.expect"; }
    "$CLI" top --unit B --sample-type inuse_space "$f" >"$T/$mangling.hs" 2>&1 ||
        fail "$mangling: heapsift top"
    go tool pprof -top -symbolize=none -unit=B -sample_index=inuse_space "$f" \
        >"$T/$mangling.go" 2>/dev/null || fail "$mangling: go tool pprof -top -symbolize=none"
    go tool pprof -top -unit=B -sample_index=inuse_space "$f" >"$T/$mangling.god" 2>/dev/null ||
        fail "$mangling: go tool pprof -top"
    for v in hs go god; do
        rows <"$T/$mangling.$v" >"$T/$mangling.$v.rows"
        sites "$mangling ($v)" "$T/$mangling.expect" "$T/$mangling.$v.rows" ||
            { fail "$mangling: the sites' flat bytes ($v)"; show "$T/$mangling.$v" 25; }
        no_alloc_flat "$mangling ($v)" "$T/$mangling.$v.rows"
    done
    sed -n '/^Showing nodes/,$p' "$T/$mangling.hs" >"$T/$mangling.hs.tail"
    sed -n '/^Showing nodes/,$p' "$T/$mangling.go" >"$T/$mangling.go.tail"
    cmp -s "$T/$mangling.hs.tail" "$T/$mangling.go.tail" ||
        { fail "$mangling: heapsift top and go tool pprof -top differ"; diff "$T/$mangling.hs.tail" "$T/$mangling.go.tail" | head -20 >&2; }

    "$CLI" top --no-drop-frames --unit B --sample-type inuse_space "$f" 2>/dev/null |
        rows >"$T/$mangling.raw.rows"
    v=$(awk -F '\t' 'index($1, "site_vec") { s += $2 } END { print s + 0 }' "$T/$mangling.raw.rows")
    [ "$v" = 0 ] || { fail "$mangling: --no-drop-frames: site_vec still holds $v flat"; show "$T/$mangling.raw.rows" 20; }
    echo "$mangling: allocator frames hold $(alloc_share "$T/$mangling.raw.rows")% of the flat column without drop_frames, $(alloc_share "$T/$mangling.hs.rows")% with it"
done

if [ $FAILS -ne 0 ]; then
    echo "leaf_rust: $FAILS check(s) failed" >&2
    exit 1
fi
echo "leaf_rust: ok"

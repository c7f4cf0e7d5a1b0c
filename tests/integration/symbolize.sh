#!/bin/sh
# heapsift symbolize: names and lines for unsymbolized frames, from the binaries the
# mappings name, build ids checked.
#  - a stripped program profiled by heapsift (frames unnamed, build id recorded) is
#    symbolized from its unstripped twin put at the same path (same build id): big_site
#    gets its name and prog.c line, read back with `go tool pprof -symbolize=none`;
#  - a different build at that path (another build id) gives one warning naming the file
#    and leaves the frames unnamed;
#  - a gperftools HEAPPROFILE file (addresses only) symbolized by heapsift has the rows
#    with flat use that `go tool pprof` shows when it symbolizes with the program itself.
# Usage: symbolize.sh BUILD_DIR SOURCE_DIR. Exits 77 when go or strip is missing.
set -eu
build=$1
hs=$build/heapsift
command -v go >/dev/null 2>&1 || { echo "go not found: skipping"; exit 77; }
command -v strip >/dev/null 2>&1 || { echo "strip not found: skipping"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "no C compiler: skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

cat >"$tmp/prog.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
static void *keep[100000];
static int nkeep;
__attribute__((noinline)) void *big_site(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *small_site(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
int main(void)
{
    for (int i = 0; i < 300; i++)
        keep[nkeep++] = big_site(150000 + i + VARIANT);
    for (int i = 0; i < 40000; i++) {
        void *p = small_site(64 + (size_t)(i % 3000));
        if (i % 3 == 0)
            keep[nkeep++] = p;
        else
            free(p);
    }
    return 0;
}
EOF
mkdir "$tmp/bin"
cc -O1 -g -DVARIANT=0 -o "$tmp/prog.dbg" "$tmp/prog.c"
cc -O1 -g -DVARIANT=1 -o "$tmp/prog.other" "$tmp/prog.c"
strip -o "$tmp/bin/prog" "$tmp/prog.dbg"
"$hs" run -q -o "$tmp/run.pb.gz" --rate 32768 -- "$tmp/bin/prog" || fail "heapsift run"
raw() { go tool pprof -symbolize=none -raw "$1" 2>/dev/null; }
if raw "$tmp/run.pb.gz" | grep -q 'big_site'; then
    echo "note: the stripped program's frames were named anyway; the first part proves little"
fi

cp "$tmp/prog.dbg" "$tmp/bin/prog"
"$hs" symbolize -o "$tmp/s.pb.gz" "$tmp/run.pb.gz" 2>"$tmp/err" || { fail "symbolize"; cat "$tmp/err" >&2; }
raw "$tmp/s.pb.gz" | grep -q ' big_site .*prog\.c:5 ' ||
    { fail "symbolized profile has no 'big_site prog.c:5' location"; raw "$tmp/s.pb.gz" | sed -n '/^Locations/,$p' | head -n 20 >&2; }
[ ! -s "$tmp/err" ] || { fail "symbolize with matching build ids warned:"; cat "$tmp/err" >&2; }

cp "$tmp/prog.other" "$tmp/bin/prog"
"$hs" symbolize -o "$tmp/m.pb.gz" "$tmp/run.pb.gz" 2>"$tmp/err" || fail "symbolize (mismatch) failed"
n=$(grep -c "warning: $tmp/bin/prog: build id" "$tmp/err" || true)
[ "$n" -eq 1 ] || { fail "want one build-id warning for bin/prog, got $n:"; cat "$tmp/err" >&2; }
! raw "$tmp/m.pb.gz" | grep -q 'big_site' || fail "frames named from a binary with another build id"

tc=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n 1 || true)
if [ -n "$tc" ]; then
    HEAPPROFILE="$tmp/hp" LD_PRELOAD=$tc "$tmp/prog.dbg" 2>/dev/null
    f=$(ls "$tmp"/hp.*.heap | tail -n 1)
    "$hs" symbolize -q -o "$tmp/g.pb.gz" "$f" || fail "symbolize of a gperftools profile"
    rows() { sed -n '/flat%/,$p' | awk 'NR > 1 && $1 != "0" {print $1, $NF}' | sort; }
    go tool pprof -top -unit=B "$tmp/prog.dbg" "$f" 2>/dev/null | rows >"$tmp/want"
    go tool pprof -symbolize=none -top -unit=B "$tmp/g.pb.gz" 2>/dev/null | rows >"$tmp/got"
    echo "gperftools flat rows (pprof symbolizing itself, then heapsift symbolize):"
    cat "$tmp/want" "$tmp/got"
    [ -s "$tmp/want" ] && cmp -s "$tmp/want" "$tmp/got" || fail "flat rows differ"
fi

if [ $fails -ne 0 ]; then
    echo "symbolize: $fails check(s) failed" >&2
    exit 1
fi
echo "symbolize: ok"

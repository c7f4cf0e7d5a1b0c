#!/bin/sh
# gperftools heap profiles, made here by Debian's gperftools: HEAPPROFILE (`heap profile:
# ... @ heapprofile`, every allocation, in-use and allocated counts) under a C program,
# and tcmalloc's sampled heap (`@ heap_v2/RATE`, from MallocExtension::GetHeapSample in a
# C++ program). heapsift and `go tool pprof` read the same file: the totals of every
# sample type must be equal, and for the HEAPPROFILE file the function pprof puts first
# (it symbolizes with the program) must be ours too, with the same flat bytes.
# Usage: formats_gperftools.sh BUILD_DIR SOURCE_DIR. Exits 77 when gperftools (library or
# headers: libgoogle-perftools-dev), a C or C++ compiler, or go is missing (scripts/setup.sh
# installs them), never dropping a part.
set -eu
build=$1
hs=$build/heapsift
lib=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n 1 || true)
[ -n "$lib" ] || { echo "libtcmalloc.so.4 not found (libgoogle-perftools4): skipping"; exit 77; }
command -v go >/dev/null 2>&1 || { echo "go not found: skipping"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "no C compiler: skipping"; exit 77; }
command -v c++ >/dev/null 2>&1 || { echo "no C++ compiler (the heap_v2 part): skipping"; exit 77; }
[ -f /usr/include/gperftools/malloc_extension.h ] ||
    { echo "no gperftools headers (libgoogle-perftools-dev; the heap_v2 part): skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

total() { sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p'; }
first_row() { sed -n '/flat%/{n;p;q}'; }

compare() { # name file prog sample-types...
    name=$1 f=$2 prog=$3
    shift 3
    for st in "$@"; do
        want=$(go tool pprof -top -unit=B -sample_index="$st" "$prog" "$f" 2>/dev/null | total)
        got=$("$hs" top --unit B --sample-type "$st" "$f" 2>/dev/null | total)
        echo "$name $st: go tool pprof $want, heapsift $got"
        [ -n "$want" ] && [ "$want" = "$got" ] || fail "$name $st: heapsift '$got' != pprof '$want'"
    done
}

cat >"$tmp/prog.c" <<'EOF'
#include <stdlib.h>
#include <string.h>
static void *keep[100000];
static int nkeep;
__attribute__((noinline)) void *big_site(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *small_site(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
__attribute__((noinline)) void *mid(int i) { return small_site(64 + (size_t)(i % 3000)); }
int main(void)
{
    for (int i = 0; i < 300; i++)
        keep[nkeep++] = big_site(200000 + i);
    for (int i = 0; i < 50000; i++) {
        void *p = mid(i);
        if (i % 3 == 0)
            keep[nkeep++] = p;
        else
            free(p);
    }
    return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/prog" "$tmp/prog.c"
HEAPPROFILE="$tmp/hp" LD_PRELOAD=$lib "$tmp/prog" 2>"$tmp/err"
f=$(ls "$tmp"/hp.*.heap 2>/dev/null | tail -n 1)
if [ -z "$f" ] || ! head -n 1 "$f" | grep -q '@ heapprofile'; then
    fail "HEAPPROFILE wrote no heapprofile file"
    cat "$tmp/err" >&2
else
    compare heapprofile "$f" "$tmp/prog" alloc_objects alloc_space inuse_objects inuse_space
    want=$(go tool pprof -top -unit=B "$tmp/prog" "$f" 2>/dev/null | first_row | awk '{print $1, $NF}')
    got=$("$hs" top --unit B "$f" 2>/dev/null | first_row | awk '{print $1, $NF}')
    echo "heapprofile first row: go tool pprof '$want', heapsift '$got'"
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "heapprofile: first row '$got' != '$want'"
fi

cat >"$tmp/sample.cc" <<'EOF'
#include <gperftools/malloc_extension.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
static void *keep[100000];
extern "C" __attribute__((noinline)) void *site(size_t n)
{
    void *p = malloc(n);
    memset(p, 1, n);
    return p;
}
int main(int, char **argv)
{
    int k = 0;
    for (int i = 0; i < 60000; i++) {
        void *p = site(100 + (size_t)(i % 5000));
        if (i % 3 == 0)
            keep[k++] = p;
        else
            free(p);
    }
    std::string s;
    MallocExtension::instance()->GetHeapSample(&s);
    FILE *f = fopen(argv[1], "w");
    fwrite(s.data(), 1, s.size(), f);
    return fclose(f) != 0;
}
EOF
c++ -O1 -g -o "$tmp/sample" "$tmp/sample.cc" -ltcmalloc
TCMALLOC_SAMPLE_PARAMETER=32768 "$tmp/sample" "$tmp/v2.heap"
if head -n 1 "$tmp/v2.heap" | grep -q '@ heap_v2/32768'; then
    compare heap_v2 "$tmp/v2.heap" "$tmp/sample" objects space
else
    fail "GetHeapSample did not write a heap_v2/32768 profile"
    head -n 2 "$tmp/v2.heap" >&2
fi

if [ $fails -ne 0 ]; then
    echo "formats_gperftools: $fails check(s) failed" >&2
    exit 1
fi
echo "formats_gperftools: ok"

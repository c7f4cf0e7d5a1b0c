#!/bin/sh
# jemalloc heap_v2 profiles, made here by Debian's libjemalloc2 (MALLOC_CONF=prof:true)
# under a small C program, read by heapsift and by jeprof: the totals of every sample
# type must be what `jeprof --text` prints (jeprof sums unrounded records and truncates
# the sum; so does heapsift), the function jeprof puts first must be ours too with the
# same flat bytes, and `go tool pprof` must read our conversion with the same totals.
# (jeprof_figures.sh checks every row on dumps of many small sites.)
# Usage: formats_jemalloc.sh BUILD_DIR SOURCE_DIR. Exits 77 when jemalloc, jeprof or go
# is missing (scripts/setup.sh installs them), never dropping a cross-check.
set -eu
build=$1
hs=$build/heapsift
lib=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
[ -n "$lib" ] || { echo "libjemalloc.so.2 not found: skipping"; exit 77; }
command -v jeprof >/dev/null 2>&1 || { echo "jeprof not found (libjemalloc-dev): skipping"; exit 77; }
command -v go >/dev/null 2>&1 || { echo "go not found (go tool pprof reads the conversion): skipping"; exit 77; }
command -v cc >/dev/null 2>&1 || { echo "no C compiler: skipping"; exit 77; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache"
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }

cat >"$tmp/prog.c" <<'EOF'
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
static void *keep[3][100000];
__attribute__((noinline)) void *big_site(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *small_site(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
__attribute__((noinline)) void *deep(int d, size_t n) { return d ? deep(d - 1, n) : small_site(n); }
static void *churn(void *arg)
{
    long t = (long)arg;
    int nkeep = 0;
    for (int i = 0; i < 40000; i++) {
        void *p = deep((int)(i % 13 + t), 64 + i % 2000);
        if (i % 4 == 0)
            keep[t][nkeep++] = p;
        else
            free(p);
    }
    return NULL;
}
int main(void)
{
    pthread_t th[2];
    for (long t = 0; t < 2; t++)
        pthread_create(&th[t], NULL, churn, (void *)(t + 1));
    for (int i = 0; i < 400; i++)
        keep[0][i] = big_site(100000 + i);
    churn(0);
    for (int t = 0; t < 2; t++)
        pthread_join(th[t], NULL);
    return 0;
}
EOF
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$tmp/prog" "$tmp/prog.c"

# jeprof's total line ("Total: N B" or "Total: N objects") for one option.
jeprof_total() { jeprof --text "$@" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) .*/\1/p'; }
# go tool pprof's total ("... of N total", B or plain counts) for a sample index.
pprof_total() {
    go tool pprof -top -unit=B -sample_index="$2" "$1" 2>/dev/null |
        sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p'
}
hs_total() {
    "$hs" top --unit B --sample-type "$2" "$1" 2>/dev/null | sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p'
}

check() { # name conf jeprof-opts-and-types...
    name=$1 conf=$2
    shift 2
    rm -f "$tmp"/je.*
    MALLOC_CONF="prof:true,prof_final:true,prof_prefix:$tmp/je,$conf" LD_PRELOAD=$lib "$tmp/prog"
    f=$(ls "$tmp"/je.*.heap | head -n 1)
    [ -s "$f" ] || { fail "$name: jemalloc wrote no profile"; return; }
    head -n 1 "$f" | grep -q '^heap_v2/' || { fail "$name: not a heap_v2 file"; return; }
    stacks=$(grep -c '^@' "$f")
    "$hs" convert --to pprof -q -o "$tmp/conv.pb.gz" "$f" || { fail "$name: convert failed"; return; }
    while [ $# -gt 0 ]; do
        opt=$1 st=$2
        shift 2
        want=$(jeprof_total $opt "$tmp/prog" "$f")
        got=$(hs_total "$f" "$st")
        conv=$(pprof_total "$tmp/conv.pb.gz" "$st")
        echo "$name $st: jeprof $want, heapsift $got, go tool pprof on the conversion $conv"
        [ -n "$want" ] && [ "$got" = "$want" ] ||
            fail "$name $st: heapsift total '$got' vs jeprof '$want' ($stacks stacks)"
        [ "$conv" = "$got" ] || fail "$name $st: converted total '$conv' != '$got'"
    done
    # The first function of jeprof's flat list is ours too, with the same flat bytes.
    jeprof --text --show_bytes "$tmp/prog" "$f" 2>/dev/null | sed -n 2p >"$tmp/je1"
    "$hs" top --unit B -n 1 "$f" 2>/dev/null | tail -n 1 >"$tmp/hs1"
    jf=$(awk '{print $NF}' "$tmp/je1") jv=$(awk '{print $1}' "$tmp/je1")
    hf=$(awk '{print $NF}' "$tmp/hs1") hv=$(awk '{sub(/B$/, "", $1); print $1}' "$tmp/hs1")
    echo "$name first: jeprof $jf $jv, heapsift $hf $hv ($stacks stacks)"
    [ "$jf" = "$hf" ] || fail "$name: first function '$hf', jeprof says '$jf'"
    [ "$hv" = "$jv" ] || fail "$name: $hf flat $hv, jeprof $jv"
}

check inuse lg_prof_sample:14 --show_bytes inuse_space --inuse_objects inuse_objects
check accum lg_prof_sample:12,prof_accum:true --show_bytes inuse_space \
    --inuse_objects inuse_objects "--alloc_space --show_bytes" alloc_space \
    --alloc_objects alloc_objects

if [ $fails -ne 0 ]; then
    echo "formats_jemalloc: $fails check(s) failed" >&2
    exit 1
fi
echo "formats_jemalloc: ok"

#!/bin/sh
# Remakes the corpus files that real tools write (the committed copies came from it; the
# hand-made ones come from make_hand.py and the .heap files written by hand): jemalloc's
# heap_v2 (libjemalloc2, prof:true), gperftools' heap profile (HEAPPROFILE, libtcmalloc)
# and binary CPU profile (CPUPROFILE, libprofiler), and from a Go program the ?debug=1
# heap text, a CPU profile and the goroutine and threadcreate texts. Usage:
# make_real.sh OUT_DIR. Each missing tool is skipped; small programs keep files small.
set -eu
out=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/p.c" <<'CEOF'
#include <stdlib.h>
#include <string.h>
static void *keep[6000];
__attribute__((noinline)) void *site_small(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *site_big(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
int main(void)
{
    for (int i = 0; i < 6000; i++) {
        void *p = i % 50 ? site_small(40 + (size_t)(i % 200)) : site_big(300000);
        if (i % 3)
            keep[i] = p;
        else
            free(p);
    }
    volatile double x = 0;
    for (long i = 0; i < 30000000; i++)
        x += (double)i;
    return 0;
}
CEOF
cc -O1 -g -fno-omit-frame-pointer -o "$tmp/p" "$tmp/p.c"
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
if [ -n "$je" ]; then
    MALLOC_CONF="prof:true,prof_final:true,prof_accum:true,lg_prof_sample:14,prof_prefix:$tmp/je" \
        LD_PRELOAD=$je "$tmp/p"
    cp "$(ls "$tmp"/je.*.heap | head -n 1)" "$out/jemalloc.heap"
fi
tc=$(ls /usr/lib/*/libtcmalloc_and_profiler.so.4 2>/dev/null | head -n 1 || true)
if [ -n "$tc" ]; then
    HEAPPROFILE="$tmp/hp" CPUPROFILE="$tmp/cpu.prof" LD_PRELOAD=$tc "$tmp/p" 2>/dev/null
    cp "$(ls "$tmp"/hp.*.heap | tail -n 1)" "$out/gperftools.heap"
    cp "$tmp/cpu.prof" "$out/gperftools_cpu.prof"
fi
if command -v go >/dev/null 2>&1; then
    mkdir "$tmp/g"
    printf 'module g\n\ngo 1.19\n' >"$tmp/g/go.mod"
    cp "$(dirname "$0")/go_prog.go" "$tmp/g/main.go"
    (cd "$tmp/g" && GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod go build -o g . &&
        ./g "$out/go_heap_debug1.txt" "$out/go_cpu.pb.gz" "$out/go_goroutine.txt" \
            "$out/go_threadcreate.txt")
fi

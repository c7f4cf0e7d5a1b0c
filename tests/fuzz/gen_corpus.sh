#!/bin/sh
# Makes the fuzzers' seed corpus from real programs' outputs: a small C program profiled by
# jemalloc (heap_v2), gperftools (HEAPPROFILE) and heapsift (pprof), and a small Go
# program's heap profile as debug=1 text and as protobuf; each tool that is missing is
# skipped. Adds the committed files of tests/corpus (issue 24's forms, some hand-made
# because no tool writes them). Usage: gen_corpus.sh BUILD_DIR OUT_DIR.
# Writes OUT_DIR/legacy (text), OUT_DIR/pprof (raw protobuf), OUT_DIR/any (all, gzipped
# and not).
set -eu
mkdir -p "$2/legacy" "$2/pprof" "$2/any"
build=$(cd "$1" && pwd)
out=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cat >"$tmp/p.c" <<'CEOF'
#include <stdlib.h>
#include <string.h>
static void *keep[4096];
__attribute__((noinline)) void *site_a(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *site_b(int d, size_t n) { return d ? site_b(d - 1, n) : site_a(n); }
int main(void)
{
    for (int i = 0; i < 4000; i++) {
        void *p = site_b(i % 3, 1000 + (size_t)i);
        if (i % 2)
            keep[i] = p;
        else
            free(p);
    }
    return 0;
}
CEOF
cc -O1 -g -o "$tmp/p" "$tmp/p.c"
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
if [ -n "$je" ]; then
    MALLOC_CONF="prof:true,prof_final:true,prof_accum:true,lg_prof_sample:12,prof_prefix:$tmp/je" \
        LD_PRELOAD=$je "$tmp/p"
    cp "$(ls "$tmp"/je.*.heap | head -n 1)" "$out/legacy/jemalloc.heap"
fi
tc=$(ls /usr/lib/*/libtcmalloc.so.4 2>/dev/null | head -n 1 || true)
if [ -n "$tc" ]; then
    HEAPPROFILE="$tmp/hp" LD_PRELOAD=$tc "$tmp/p" 2>/dev/null
    cp "$(ls "$tmp"/hp.*.heap | tail -n 1)" "$out/legacy/gperftools.heap"
fi
if [ -x "$build/heapsift" ] && [ -e "$build/libheapsift.so" ]; then
    "$build/heapsift" run -q -o "$tmp/hs.pb.gz" --rate 8192 -- "$tmp/p" &&
        gzip -dc "$tmp/hs.pb.gz" >"$out/pprof/heapsift.pb"
fi
if command -v go >/dev/null 2>&1; then
    mkdir "$tmp/g"
    printf 'module g\n\ngo 1.19\n' >"$tmp/g/go.mod"
    cat >"$tmp/g/main.go" <<'GOEOF'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

func inl(n int) []byte { return make([]byte, n) }

//go:noinline
func site(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, inl(1000+i))
	}
}

func main() {
	runtime.MemProfileRate = 4096
	site(2000)
	runtime.GC()
	for i, d := range []int{1, 0} {
		f, _ := os.Create(os.Args[1+i])
		pprof.Lookup("heap").WriteTo(f, d)
		f.Close()
	}
}
GOEOF
    (cd "$tmp/g" && GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod go build -o g . &&
        ./g "$out/legacy/go_debug1.txt" "$tmp/go.pb.gz" &&
        gzip -dc "$tmp/go.pb.gz" >"$out/pprof/go.pb")
fi
# The readers' corpus (tests/corpus, issue 24): one seed for each form it holds.
corpus=$(cd "$(dirname "$0")/../corpus" && pwd)
for f in "$corpus"/*.heap "$corpus"/*.txt; do
    cp "$f" "$out/legacy/corpus_$(basename "$f")"
done
for f in "$corpus"/*.pb "$corpus"/*.prof; do
    cp "$f" "$out/pprof/corpus_$(basename "$f")"
done
gzip -dc "$corpus/go_cpu.pb.gz" >"$out/pprof/corpus_go_cpu.pb"
for f in "$out"/legacy/* "$out"/pprof/*; do
    [ -e "$f" ] || continue
    cp "$f" "$out/any/"
    gzip -c "$f" >"$out/any/$(basename "$f").gz"
done

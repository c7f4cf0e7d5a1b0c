#!/bin/sh
# heapsift top vs go tool pprof -top: byte for byte from the "Showing nodes" line on, for
# every sample type, several units, -n and --cum. Profiles come from a tiny Go program
# (runtime/pprof heap profile, inlined frames included) and from a C generator built on
# heapsift's own profile model (random stacks, unsymbolized and unnamed frames, inline
# lines, recursion, negative values). Usage: top_vs_pprof.sh BUILD_DIR SOURCE_DIR.
# Exits 77 (skip) when go is missing.
set -eu
build=$1
src=$2
hs=$build/heapsift
command -v go >/dev/null 2>&1 || { echo "go not found: skipping"; exit 77; }
[ -x "$hs" ] || { echo "missing $hs"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOPATH="$tmp/gopath" GO111MODULE=on

mkdir "$tmp/gogen"
cat >"$tmp/gogen/go.mod" <<'EOF'
module gogen

go 1.19
EOF
cat >"$tmp/gogen/main.go" <<'EOF'
package main

import (
	"os"
	"runtime"
	"runtime/pprof"
)

var keep [][]byte

//go:noinline
func leafA(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 4096))
	}
}

//go:noinline
func leafB(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 100000))
	}
}

func inlined(n int) []byte { return make([]byte, n) }

//go:noinline
func caller(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, inlined(3000))
	}
}

//go:noinline
func temp(n int) {
	for i := 0; i < n; i++ {
		b := make([]byte, 50000)
		_ = b
	}
}

//go:noinline
func rec(d int) {
	if d == 0 {
		leafA(200)
		return
	}
	rec(d - 1)
}

//go:noinline
func small(n int) {
	for i := 0; i < n; i++ {
		keep = append(keep, make([]byte, 64))
	}
}

func main() {
	runtime.MemProfileRate = 4096
	leafA(1000)
	leafB(300)
	caller(500)
	temp(2000)
	rec(5)
	small(100000)
	runtime.GC()
	f, err := os.Create(os.Args[1])
	if err != nil {
		panic(err)
	}
	pprof.WriteHeapProfile(f)
	f.Close()
}
EOF
(cd "$tmp/gogen" && go run . "$tmp/go.pb.gz")

# The C generator: random profiles through heapsift's own model and writer.
cat >"$tmp/gen.c" <<'EOF'
#include "pprof.h"
#include <stdio.h>
#include <stdlib.h>

static unsigned seed;
static unsigned rnd(unsigned n) { return (unsigned)(rand_r(&seed) % n); }

static void add_mappings(hs_profile_t *p, int n)
{
    static const char *files[] = {"/usr/bin/app", "/lib/x86_64-linux-gnu/libc.so.6", "",
                                  "/opt/x/libfoo.so"};
    for (int i = 0; i < n; i++) {
        hs_mapping_t m = {0};
        m.memory_start = 0x400000 + (uint64_t)i * 0x100000;
        m.memory_limit = m.memory_start + 0x100000;
        m.filename = hs_profile_str(p, files[i]);
        if (i == 0 && rnd(2))
            m.build_id = hs_profile_str(p, "abcdef0123456789");
        hs_profile_add_mapping(p, &m);
    }
}

static void add_code(hs_profile_t *p, int nmaps)
{
    char name[64];
    int nfuncs = 5 + (int)rnd(300), nlocs = 5 + (int)rnd(400);
    for (int i = 0; i < nfuncs; i++) {
        name[0] = '\0';
        if (rnd(20))
            snprintf(name, sizeof(name), "%s%d", rnd(2) ? "ns::func" : "Zeta_", (int)rnd(1000));
        hs_profile_add_function(p, name, name, "src/x.c", (int64_t)rnd(3));
    }
    for (int i = 0; i < nlocs; i++) {
        hs_line_t lines[3];
        size_t nl = rnd(8) == 0 ? 0 : 1 + rnd(3) / 2 + (rnd(6) == 0);
        for (size_t j = 0; j < nl; j++) {
            lines[j].function_id = 1 + rnd((unsigned)p->nfunctions);
            lines[j].line = (int64_t)rnd(100);
        }
        hs_profile_add_location(p, 1 + rnd((unsigned)nmaps), 0x400000 + rnd(0x300000), lines,
                                nl);
    }
}

static void add_samples(hs_profile_t *p)
{
    int n = (int)rnd(600), scale = (int)rnd(4);
    static const int64_t sizes[] = {16, 4096, 1 << 20, 1 << 28};
    for (int i = 0; i < n; i++) {
        uint64_t stack[24];
        size_t depth = rnd(20) == 0 ? 0 : 1 + rnd(12);
        for (size_t j = 0; j < depth; j++)
            stack[j] = (j > 0 && rnd(6) == 0) ? stack[rnd((unsigned)j)]
                                               : 1 + rnd((unsigned)p->nlocations);
        int64_t v[4];
        v[0] = rnd(10) == 0 ? 0 : 1 + rnd(1000);
        v[1] = v[0] * (1 + (int64_t)rnd((unsigned)sizes[scale]));
        v[2] = rnd(3) ? 0 : v[0] / 2;
        v[3] = v[1] / (1 + rnd(3));
        if (rnd(50) == 0)
            v[3] = -v[3];
        hs_profile_add_sample(p, stack, depth, v);
    }
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    seed = (unsigned)atoi(argv[2]);
    hs_profile_t *p = hs_profile_new();
    hs_profile_add_sample_type(p, "alloc_objects", "count");
    hs_profile_add_sample_type(p, "alloc_space", rnd(5) ? "bytes" : "count");
    hs_profile_add_sample_type(p, "inuse_objects", "count");
    hs_profile_add_sample_type(p, "inuse_space", "bytes");
    if (rnd(2))
        p->default_sample_type = hs_profile_str(p, rnd(2) ? "alloc_space" : "inuse_objects");
    int nmaps = 1 + (int)rnd(4);
    add_mappings(p, nmaps);
    add_code(p, nmaps);
    add_samples(p);
    if (rnd(2))
        hs_profile_add_comment(p, "generated by top_vs_pprof.sh");
    if (rnd(2))
        hs_profile_add_comment(p, "#hidden comment");
    if (rnd(2))
        p->time_nanos = 1700000000000000000 + (int64_t)rnd(1000000) * 1000000000;
    if (rnd(3) == 0)
        p->duration_nanos = (int64_t)rnd(100000) * 1000000;
    p->period_type.type = hs_profile_str(p, "space");
    p->period_type.unit = hs_profile_str(p, "bytes");
    p->period = 524288;
    int rc = hs_pprof_write_file(p, argv[1]);
    hs_profile_free(p);
    return rc ? 1 : 0;
}
EOF
cc=${CC:-cc}
"$cc" -std=gnu11 -O1 -I"$src/src/common" "$tmp/gen.c" "$src/src/common/profile.c" \
    "$src/src/common/pprof.c" "$src/src/common/pb.c" "$src/src/common/buf.c" -lz -o "$tmp/gen"

fails=0
checks=0
# compare FILE HEAPSIFT_ARGS -- PPROF_ARGS
compare() {
    f=$1
    shift
    hsargs=""
    while [ "$1" != "--" ]; do
        hsargs="$hsargs $1"
        shift
    done
    shift
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    # Neither side symbolizes: the generator's mappings name real libraries at made-up
    # addresses, which each side's symbolizer would read differently.
    "$hs" top --symbolize=none "$f" $hsargs >"$tmp/ours.full" 2>"$tmp/ours.err" || true
    go tool pprof -top -symbolize=none "$@" "$f" >"$tmp/theirs.full" 2>/dev/null || true
    sed -n '/^Showing nodes/,$p' "$tmp/ours.full" >"$tmp/ours"
    sed -n '/^Showing nodes/,$p' "$tmp/theirs.full" >"$tmp/theirs"
    if [ ! -s "$tmp/theirs" ] || ! cmp -s "$tmp/ours" "$tmp/theirs"; then
        fails=$((fails + 1))
        echo "FAIL: heapsift top $f$hsargs  vs  go tool pprof -top $*"
        cat "$tmp/ours.err"
        diff "$tmp/ours" "$tmp/theirs" | head -20 || true
    fi
}

for st in alloc_objects alloc_space inuse_objects inuse_space; do
    for unit in auto B kB MB GB; do
        pu=$unit
        [ "$unit" = auto ] && pu=minimum
        compare "$tmp/go.pb.gz" --sample-type $st --unit $unit -- -sample_index=$st -unit=$pu
    done
    compare "$tmp/go.pb.gz" --sample-type $st --cum -n 3 -- -sample_index=$st -cum -nodecount=3
done
compare "$tmp/go.pb.gz" -- # the default sample type

seed=1
while [ $seed -le 40 ]; do
    "$tmp/gen" "$tmp/gen.pb.gz" $seed
    compare "$tmp/gen.pb.gz" --
    compare "$tmp/gen.pb.gz" --sample-type alloc_objects -- -sample_index=alloc_objects
    compare "$tmp/gen.pb.gz" --sample-type alloc_space --cum -- -sample_index=alloc_space -cum
    compare "$tmp/gen.pb.gz" --sample-type inuse_space --unit MB -n 7 -- \
        -sample_index=inuse_space -unit=MB -nodecount=7
    seed=$((seed + 1))
done

# Bad input: exit 2 for a non-profile, 3 for a missing file, never a crash.
printf 'not a profile\n' >"$tmp/garbage"
status=0
"$hs" top "$tmp/garbage" >/dev/null 2>"$tmp/err" || status=$?
grep -q "^heapsift: error: $tmp/garbage: " "$tmp/err" && [ $status -eq 2 ] ||
    { echo "FAIL: garbage file gave status $status: $(cat "$tmp/err")"; fails=$((fails + 1)); }
head -c 100 "$tmp/go.pb.gz" >"$tmp/truncated"
status=0
"$hs" top "$tmp/truncated" >/dev/null 2>"$tmp/err" || status=$?
[ $status -eq 2 ] || { echo "FAIL: truncated file gave status $status"; fails=$((fails + 1)); }
status=0
"$hs" top "$tmp/missing" >/dev/null 2>"$tmp/err" || status=$?
[ $status -eq 3 ] || { echo "FAIL: missing file gave status $status"; fails=$((fails + 1)); }

echo "top_vs_pprof: $checks comparisons, $fails failures"
[ $fails -eq 0 ]

#!/bin/sh
# The analyzer benchmark (issue 4): how fast heapsift reads and shows a big foreign
# profile, against jeprof and go tool pprof.
#  1. generates a large C program: FUNCS functions, each calling one of four random others
#     chosen by the bits of a hash it carries, to a depth of 12..27 frames, allocating at
#     the end; main runs CALLS such chains and keeps a third of the blocks;
#  2. runs it under Debian's libjemalloc2 with MALLOC_CONF=prof:true,lg_prof_sample:LG to
#     get a heap_v2 file with tens of thousands of distinct stacks;
#  3. times, as medians of ROUNDS runs: `jeprof --text PROG FILE`, `heapsift top FILE`
#     (reads the jemalloc file and symbolizes it itself) and `go tool pprof -top` on the
#     pprof file `heapsift convert --to pprof` made of it (already symbolized);
#  4. prints a Markdown section; with --record appends it to bench/history/YYYY-MM-DD.md.
# Usage: sh bench/analyzer/run.sh BUILD_DIR [--record]. Variables: FUNCS (3000), CALLS
# (90000), LG (10), ROUNDS (3).
set -eu
build=$(cd "${1:?usage: run.sh BUILD_DIR [--record]}" && pwd)
record=${2:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
FUNCS=${FUNCS:-3000} CALLS=${CALLS:-90000} LG=${LG:-10} ROUNDS=${ROUNDS:-3}
hs=$build/heapsift
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
[ -x "$hs" ] || { echo "build heapsift first ($hs)" >&2; exit 1; }
[ -n "$je" ] && command -v jeprof >/dev/null 2>&1 ||
    { echo "needs libjemalloc2 and jeprof (libjemalloc-dev)" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache"

gen() { # the program's source, deterministic
    awk -v n="$FUNCS" -v calls="$CALLS" 'BEGIN {
        srand(42)
        print "#include <stdint.h>\n#include <stdlib.h>\n#include <string.h>"
        print "static void *keep[1 << 20]; static int nkeep;"
        print "__attribute__((noinline)) void *leaf_alloc(uint64_t x) {"
        print "    size_t n = 64 + (x >> 40) % 4000; void *p = malloc(n); memset(p, 0, n);"
        print "    if (x % 3 == 0) keep[nkeep++ & ((1 << 20) - 1)] = p; else free(p); return p; }"
        for (i = 0; i < n; i++) print "void *f" i "(uint64_t x, int d);"
        for (i = 0; i < n; i++) {
            print "__attribute__((noinline)) void *f" i "(uint64_t x, int d) {"
            print "    void *r; x = x * 6364136223846793005ull + 1442695040888963407ull;"
            print "    if (d >= 12 + (int)(x >> 60)) return leaf_alloc(x);"
            printf "    switch (x >> 62) {"
            for (k = 0; k < 4; k++)
                printf " case %d: r = f%d(x, d + 1); break;", k, int(rand() * n)
            print " default: r = 0; }"
            print "    __asm__ volatile(\"\" ::: \"memory\"); return r; }"
        }
        print "int main(void) {"
        print "    for (uint64_t i = 0; i < " calls "; i++) {"
        print "        uint64_t x = i * 0x9e3779b97f4a7c15ull;"
        printf "        switch (i %% 8) {"
        for (k = 0; k < 8; k++) printf " case %d: f%d(x, 0); break;", k, int(rand() * n)
        print " } }"
        print "    return 0; }"
    }'
}

gen >"$tmp/big.c"
cc -O1 -g -fno-optimize-sibling-calls -fno-omit-frame-pointer -o "$tmp/big" "$tmp/big.c"
MALLOC_CONF="prof:true,prof_final:true,lg_prof_sample:$LG,prof_prefix:$tmp/je" LD_PRELOAD=$je \
    "$tmp/big"
f=$(ls "$tmp"/je.*.heap | head -n 1)
stacks=$(grep -c '^@' "$f")
"$hs" convert --to pprof -q -o "$tmp/conv.pb.gz" "$f"

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
time_cmd() { # label command...: median wall seconds of ROUNDS runs
    label=$1
    shift
    : >"$tmp/t.$label"
    r=0
    while [ $r -lt "$ROUNDS" ]; do
        t0=$(now)
        "$@" >"$tmp/out.$label" 2>/dev/null
        t1=$(now)
        echo "$t1 - $t0" | bc -l >>"$tmp/t.$label"
        r=$((r + 1))
    done
    median <"$tmp/t.$label"
}

t_hs=$(time_cmd heapsift "$hs" top "$f")
t_je=$(time_cmd jeprof jeprof --text "$tmp/big" "$f")
t_go=-
command -v go >/dev/null 2>&1 && t_go=$(time_cmd pprof go tool pprof -top "$tmp/conv.pb.gz")
tot_je=$(jeprof --text --show_bytes "$tmp/big" "$f" 2>/dev/null | sed -n 's/^Total: \([0-9]*\) B/\1/p')
tot_hs=$("$hs" top --unit B "$f" | sed -n 's/.* of \([0-9]*\)B total$/\1/p')
ratio() { echo "scale=1; $1 / $2" | bc -l; }

section() {
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    echo
    echo "## analyzer: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo
    echo "- machine: $(uname -m), $(nproc) CPUs, $cpu; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- heapsift commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- workload: \`bench/analyzer/run.sh\`, FUNCS=$FUNCS CALLS=$CALLS, jemalloc lg_prof_sample=$LG:" \
        "a heap_v2 file of $(wc -c <"$f") bytes with $stacks stacks; medians of $ROUNDS runs"
    echo "- totals (inuse_space): jeprof $tot_je B, heapsift $tot_hs B"
    echo
    echo "| command | median wall (s) | jeprof / this |"
    echo "| --- | --- | --- |"
    echo "| \`jeprof --text PROG FILE\` | $t_je | 1.0 |"
    [ "$t_go" = - ] || echo "| \`go tool pprof -top\` on \`heapsift convert --to pprof\`'s file | $t_go | $(ratio "$t_je" "$t_go") |"
    echo "| \`heapsift top FILE\` (reads and symbolizes the jemalloc file) | $t_hs | $(ratio "$t_je" "$t_hs") |"
}
section | tee "$tmp/section.md"
if [ "$record" = --record ]; then
    # shellcheck source=bench/record.sh
    . "$src/bench/record.sh"
    bench_record "$src/bench" "$tmp/section.md"
fi

#!/bin/sh
# Issue 24: heapsift reads every heap profile in tests/corpus/ as pprof or jeprof does.
#  - pprof-readable files (hand-made: heapz_v2 memory map, growthz/growth, no final
#    newline, NUL and invalid UTF-8 names, a delta): `heapsift top` and `traces` against
#    `go tool pprof -top` and `-traces`, byte for byte from "Showing nodes" on, for every
#    sample type at function and address granularity (control bytes in pprof's output
#    written \xNN first, as heapsift shows them);
#  - malformed lines: read like the file without them, with one warning line;
#  - absurd counts and rate: exit 0, no negative figure (UBSan builds would report UB);
#  - the flame graph SVG of invalid UTF-8 names is well-formed XML; collapsed of a delta
#    sums to top's "accounting for";
#  - non-heap profiles (Go CPU, goroutine, threadcreate, gperftools CPU, contention): exit 2
#    and the kind named;
#  - made here with the real tools: jemalloc heap_v2 against `jeprof --text` row for row
#    (flat of each function) and in totals, every sample type; Go ?debug=1 against
#    `go tool pprof BINARY`: totals and the rows of main.* and runtime.goexit.
# Usage: readers_corpus.sh BUILD_DIR SOURCE_DIR. Exits 77 with the reason when go, jeprof,
# libjemalloc or python3 is missing.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" readers
src=$2
C=$src/tests/corpus
hs_need_go
hs_need_built "$CLI"
command -v jeprof >/dev/null 2>&1 || { echo "SKIP: jeprof not found (libjemalloc-dev)"; exit 77; }
je=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
[ -n "$je" ] || { echo "SKIP: libjemalloc.so.2 not found"; exit 77; }
command -v python3 >/dev/null 2>&1 || { echo "SKIP: python3 not found"; exit 77; }
export GOCACHE="$T/gocache" GOFLAGS=-mod=mod GOPATH="$T/gopath"
checks=0

# pprof writes names' bytes raw; heapsift writes control bytes as \xNN.
esc() { python3 -c 'import sys,re; d=sys.stdin.buffer.read(); sys.stdout.buffer.write(re.sub(rb"[\x00-\x08\x0a-\x1f\x7f]", lambda m: m.group(0) if m.group(0)==b"\n" else b"\\x%02x" % m.group(0)[0], d))'; }

# same VIEW FILE REF_FILE HS_ARGS -- PPROF_ARGS
same() {
    view=$1 f=$2 ref=$3
    shift 3
    hsargs=""
    while [ "$1" != "--" ]; do hsargs="$hsargs $1"; shift; done
    shift
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    "$CLI" $view --symbolize=none $hsargs "$f" 2>"$T/err" | sed -n '/^Showing nodes/,$p' >"$T/ours" || true
    go tool pprof -$view -symbolize=none "$@" "$ref" 2>/dev/null | sed -n '/^Showing nodes/,$p' |
        esc >"$T/theirs" || true
    if [ "$view" = traces ]; then # no "Showing nodes" line: compare the whole output
        "$CLI" traces --symbolize=none $hsargs "$f" 2>/dev/null | sed -n '/^-----/,$p' >"$T/ours" || true
        go tool pprof -traces -symbolize=none "$@" "$ref" 2>/dev/null | sed -n '/^-----/,$p' | esc >"$T/theirs" || true
    fi
    [ -s "$T/theirs" ] && cmp -s "$T/ours" "$T/theirs" ||
        { fail "$view $(basename "$f")$hsargs vs pprof $*"; diff "$T/ours" "$T/theirs" | head -8 >&2 || true; }
}

types() { go tool pprof -raw -symbolize=none "$1" 2>/dev/null | sed -n 's/^PeriodType.*//; /^Samples:/{n;p;q}' | tr -s ' ' '\n' | sed -n 's/\/.*//p'; }

compare_all() { # FILE [REF]
    f=$1 ref=${2:-$1}
    for st in $(types "$ref"); do
        for g in functions addresses; do
            same top "$f" "$ref" --sample-type "$st" --unit B --granularity=$g -- -sample_index="$st" -unit=B -$g
            same traces "$f" "$ref" --sample-type "$st" --granularity=$g -- -sample_index="$st" -$g
        done
    done
}

for f in heapz_v2_memmap.heap growthz.heap growth_brpc.heap no_final_newline.heap nul_names.pb \
    invalid_utf8.pb delta.pb; do
    [ -n "$(types "$C/$f")" ] || fail "pprof finds no sample type in $f"
    compare_all "$C/$f"
done
# A jemalloc file without its final newline reads as the complete one.
"$CLI" top --symbolize=none --unit B "$C/jemalloc_no_final_newline.heap" >"$T/a" 2>&1 || fail "jemalloc without final newline refused"
"$CLI" top --symbolize=none --unit B "$C/jemalloc.heap" >"$T/b" 2>&1
cmp -s "$T/a" "$T/b" || fail "jemalloc without final newline reads differently"

# Malformed lines: skipped and counted; the rest as pprof reads the file without them.
grep -v -e garbage -e 'zz' "$C/malformed_lines.heap" >"$T/clean.heap"
compare_all "$C/malformed_lines.heap" "$T/clean.heap"
"$CLI" top --symbolize=none "$C/malformed_lines.heap" 2>&1 >/dev/null |
    grep -q "^heapsift: warning: .*malformed_lines.heap: skipped 2 malformed lines (the first is line 3)" ||
    fail "no single warning for the skipped lines"

# Absurd values saturate: no wrapped (negative) figure.
for f in absurd_counts.heap absurd_rate.heap; do
    for st in $(types "$C/$f"); do
        "$CLI" top --symbolize=none --unit B --sample-type "$st" "$C/$f" >"$T/o" 2>&1 || fail "$f refused"
        ! grep -q -- ' -[0-9]' "$T/o" || fail "$f $st: a negative figure: $(sed -n 3p "$T/o")"
    done
    "$CLI" convert --to legacy -o "$T/conv.heap" "$C/$f" 2>/dev/null || true
    ! grep -Eq -- '(^|[:[] *)-[0-9]' "$T/conv.heap" 2>/dev/null || fail "$f: convert wrote a negative count"
done

# Flame graph of invalid UTF-8 names: well-formed XML. Collapsed of a delta: signed sum.
"$CLI" flamegraph --symbolize=none -o "$T/fg.svg" "$C/invalid_utf8.pb" 2>/dev/null || fail "flamegraph failed"
python3 -c 'import sys, xml.dom.minidom as m; m.parse(sys.argv[1])' "$T/fg.svg" 2>"$T/xml" ||
    fail "flame graph SVG is not well-formed: $(tail -1 "$T/xml")"
sum=$("$CLI" collapsed --symbolize=none "$C/delta.pb" 2>"$T/note" | awk '{s += $NF} END {print s}')
acc=$("$CLI" top --symbolize=none --unit B "$C/delta.pb" | sed -n 's/^Showing nodes accounting for \(-\{0,1\}[0-9]*\)B.*/\1/p')
[ "$sum" = "$acc" ] || fail "collapsed of a delta sums to $sum, top accounts for $acc"
grep -q "values are signed" "$T/note" || fail "collapsed says nothing of signed values"

# Not heap profiles: exit 2, the kind named.
for fk in "go_cpu.pb.gz:a CPU profile" "gperftools_cpu.prof:a CPU profile" \
    "go_goroutine.txt:a goroutine profile" "go_threadcreate.txt:a thread creation profile" \
    "contention.txt:a contention"; do
    f=${fk%%:*} k=${fk#*:}
    st=0
    "$CLI" top "$C/$f" >/dev/null 2>"$T/err" || st=$?
    [ $st -eq 2 ] && grep -q "this is $k.*heapsift reads heap profiles" "$T/err" ||
        fail "$f: status $st, $(cat "$T/err")"
done

# jemalloc, made here, against jeprof: every function's flat row and the totals.
cat >"$T/p.c" <<'CEOF'
#include <stdlib.h>
#include <string.h>
static void *keep[6000];
__attribute__((noinline)) void *site_small(size_t n) { void *p = malloc(n); memset(p, 1, n); return p; }
__attribute__((noinline)) void *site_big(size_t n) { void *p = malloc(n); memset(p, 2, n); return p; }
__attribute__((noinline)) void *site_odd(size_t n) { void *p = malloc(n); memset(p, 3, n); return p; }
int main(void)
{
    for (int i = 0; i < 6000; i++) {
        void *p = i % 50 ? site_small(40 + (size_t)(i % 200)) : site_big(300000);
        keep[i] = i % 7 == 0 ? site_odd(3000 + (size_t)i) : p;
        if (i % 3 == 0)
            free(keep[i]), keep[i] = NULL;
    }
    return 0;
}
CEOF
cc -O1 -g -fno-omit-frame-pointer -o "$T/p" "$T/p.c"
MALLOC_CONF="prof:true,prof_final:true,prof_accum:true,lg_prof_sample:14,prof_prefix:$T/je" LD_PRELOAD=$je "$T/p"
jf=$(ls "$T"/je.*.heap | head -n 1)
stacks=$(grep -c '^@' "$jf")
for pair in inuse_space: alloc_space:--alloc_space inuse_objects:--inuse_objects alloc_objects:--alloc_objects; do
    st=${pair%%:*} opt=${pair#*:}
    # shellcheck disable=SC2086
    jeprof --text --show_bytes $opt "$T/p" "$jf" 2>/dev/null >"$T/jt"
    jtot=$(sed -n 's/^Total: \([0-9]*\) .*/\1/p' "$T/jt")
    # The rows of the program's own functions (jeprof names some allocator-internal
    # frames after unrelated libstdc++ symbols; heapsift cuts those frames).
    awk '$1 != 0 && NF >= 6 && $6 ~ /^site_/ {print $6, $1}' "$T/jt" | sort >"$T/jrows"
    "$CLI" top --unit B -n 1000 --sample-type "$st" "$jf" 2>/dev/null >"$T/ht" || true
    htot=$(sed -n 's/.* of \([0-9]*\)B\{0,1\} total$/\1/p' "$T/ht")
    sed -n '/flat%/,$p' "$T/ht" | awk 'NR > 1 && $1 != "0" && $6 ~ /^site_/ {v = $1; sub(/B$/, "", v); print $6, v}' | sort >"$T/hrows"
    checks=$((checks + 1))
    cmp -s "$T/jrows" "$T/hrows" || { fail "jemalloc $st: flat rows differ from jeprof"; diff "$T/hrows" "$T/jrows" >&2 || true; }
    echo "jemalloc $st: jeprof total $jtot, heapsift $htot ($stacks stacks)"
    [ -n "$jtot" ] && [ "$htot" = "$jtot" ] || fail "jemalloc $st: total $htot vs jeprof $jtot"
done

# Go ?debug=1 text, made here, against go tool pprof with the binary.
mkdir "$T/g"
printf 'module g\n\ngo 1.19\n' >"$T/g/go.mod"
cp "$C/go_prog.go" "$T/g/main.go"
(cd "$T/g" && go build -o g . && ./g "$T/go.txt") || fail "go program"
for st in alloc_objects alloc_space inuse_objects inuse_space; do
    checks=$((checks + 1))
    "$CLI" top --symbolize=none --unit B --sample-type $st "$T/go.txt" 2>/dev/null >"$T/ours"
    go tool pprof -top -unit=B -sample_index=$st "$T/g/g" "$T/go.txt" 2>/dev/null >"$T/theirs"
    for x in ours theirs; do
        sed -n 's/.* of \(.*\) total$/\1/p' "$T/$x" >"$T/$x.sel"
        grep -E ' (main\.[A-Za-z]+|runtime\.goexit)$' "$T/$x" >>"$T/$x.sel" || true
    done
    grep -q goexit "$T/ours.sel" || fail "go $st: runtime.goexit not named"
    cmp -s "$T/ours.sel" "$T/theirs.sel" || { fail "go $st: rows differ"; diff "$T/ours.sel" "$T/theirs.sel" >&2 || true; }
done

echo "readers_corpus: $checks comparisons, $FAILS failures"
[ "$FAILS" -eq 0 ]

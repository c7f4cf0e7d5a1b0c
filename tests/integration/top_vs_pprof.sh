#!/bin/sh
# heapsift top vs go tool pprof -top: byte for byte from the "Showing nodes" line on, for
# every sample type, several units, -n and --cum. Profiles come from a tiny Go program
# (runtime/pprof heap profiles of two runs, inlined frames included) and from a C generator built on
# heapsift's own profile model (random stacks, unsymbolized and unnamed frames, inline
# lines, recursion, negative values). Usage: top_vs_pprof.sh BUILD_DIR SOURCE_DIR.
# Exits 77 (skip) when go is missing.
set -eu
. "$(dirname "$0")/../lib/common.sh"
build=$1
src=$2
hs=$build/heapsift
hs_need_go
[ -x "$hs" ] || { echo "missing $hs"; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
export GOCACHE="$tmp/gocache" GOFLAGS=-mod=mod GOPATH="$tmp/gopath" GO111MODULE=on

hs_make_test_profiles "$tmp" "$src" # $tmp/go.pb.gz, $tmp/go2.pb.gz and the generator $tmp/gen

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
for st in alloc_objects alloc_space inuse_objects inuse_space; do # Go's second run
    compare "$tmp/go2.pb.gz" --sample-type $st -- -sample_index=$st
    compare "$tmp/go2.pb.gz" --sample-type $st --cum -- -sample_index=$st -cum
done

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

#!/bin/sh
# heapsift's views vs go tool pprof on the same files, byte for byte: traces (-traces),
# peek (-peek), top at every granularity (-lines, -addresses) with --focus/--ignore/--hide/--show
# (-focus/-ignore/-hide/-show), sample labels (traces, --tags, --tagfocus/--tagignore with string
# regexps and numeric ranges with units), and diff (-top -diff_base) without heapsift's
# extra "change" column. Profiles come from a Go program (runtime/pprof: two runs, also
# diffed against each other), from heapsift itself running
# tests/programs/sites, and from a C generator on heapsift's own profile model (random
# stacks, inline frames, unsymbolized and unnamed frames, recursion).
# Usage: views_vs_pprof.sh BUILD_DIR SOURCE_DIR. Exits 77 (skip) when go is missing.
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

# Two runs of sites under heapsift, for diff (different seeds) and the rest.
lib=$build/libheapsift.so
for seed in 1 2; do
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$seed HEAPSIFT_OUT="$tmp/sites$seed.pb.gz" LD_PRELOAD="$lib" \
        "$build/programs/sites" >/dev/null
done

fails=0
checks=0
tagged=0 # --tags comparisons with labels in the output
# check NAME OURS_CMD... -- PPROF_ARGS...: full outputs, byte for byte. Both sides leave
# unsymbolized frames alone: the generator's mappings name real libraries at made-up
# addresses, which each side's symbolizer would read differently.
check() {
    name=$1
    shift
    ours=""
    while [ "$1" != "--" ]; do
        ours="$ours $1"
        shift
    done
    shift
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    st=0
    "$hs" $ours --symbolize=none --comments >"$tmp/ours" 2>"$tmp/ours.err" || st=$?
    go tool pprof -symbolize=none "$@" >"$tmp/theirs" 2>/dev/null || true
    if [ ! -s "$tmp/theirs" ] && [ $st -ne 0 ]; then # both refuse (incompatible profiles)
        return 0
    fi
    if [ "$name" = tags ]; then # no labels left: both print nothing
        if [ -s "$tmp/theirs" ]; then tagged=$((tagged + 1)); fi
        if [ ! -s "$tmp/theirs" ] && [ ! -s "$tmp/ours" ] && [ $st -eq 0 ]; then return 0; fi
    fi
    if [ "$name" = diff ]; then # drop heapsift's verdict column, the first after cum%
        sed -E 's/^( *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+) +(change|grew|shrank|noise|same)( |$)/\1\3/' "$tmp/ours" >"$tmp/o2"
        mv "$tmp/o2" "$tmp/ours"
    fi
    # pprof orders edges of equal |weight| and opposite signs as its map iteration falls
    # (its Less says neither is first): for peek, the same lines in another order pass.
    if [ "$name" = peek ] && [ -s "$tmp/theirs" ] && ! cmp -s "$tmp/ours" "$tmp/theirs" &&
        [ "$(sort "$tmp/ours" | cksum)" = "$(sort "$tmp/theirs" | cksum)" ]; then
        return 0
    fi
    if [ ! -s "$tmp/theirs" ] || ! cmp -s "$tmp/ours" "$tmp/theirs"; then
        fails=$((fails + 1))
        echo "FAIL: heapsift$ours  vs  go tool pprof $*"
        cat "$tmp/ours.err"
        diff "$tmp/ours" "$tmp/theirs" | head -20 || true
    fi
}

views() {
    f=$1
    re=$2
    check traces traces "$f" -- -traces "$f"
    check traces traces --sample-type alloc_space "$f" -- -traces -sample_index=alloc_space "$f"
    check peek peek "$re" "$f" -- -peek "$re" "$f"
    check peek peek --sample-type alloc_objects "$re" "$f" -- -peek "$re" -sample_index=alloc_objects "$f"
    for g in lines addresses; do
        check top top --granularity=$g "$f" -- -top -$g "$f"
        check traces traces --granularity=$g "$f" -- -traces -$g "$f"
        check peek peek --granularity=$g "$re" "$f" -- -peek "$re" -$g "$f"
    done
    check top top --focus "$re" "$f" -- -top -focus "$re" "$f"
    check top top --ignore "$re" "$f" -- -top -ignore "$re" "$f"
    check top top --hide "$re" "$f" -- -top -hide "$re" "$f"
    check top top --show "$re|main" "$f" -- -top -show "$re|main" "$f"
    check traces traces --show "$re" "$f" -- -traces -show "$re" "$f"
    check top top --granularity=lines --show "$re" "$f" -- -top -lines -show "$re" "$f"
    check top top --cum --focus main --hide "$re" "$f" -- -top -cum -focus main -hide "$re" "$f"
    check traces traces --focus "$re" --hide runtime "$f" -- -traces -focus "$re" -hide runtime "$f"
}

# Labels: the generator puts string labels (tenant, region; some samples with two tenants)
# and numeric ones (lifetime in nanoseconds, request and retries without a unit) on most
# of its profiles.
tagviews() {
    f=$1
    check tags top --tags "$f" -- -tags "$f"
    check tags top --tags --unit MB --sample-type alloc_objects "$f" -- -tags -unit=MB -sample_index=alloc_objects "$f"
    check traces traces --tagfocus tenant=acme "$f" -- -traces -tagfocus=tenant=acme "$f"
    check traces traces --tagfocus 'us-1,tenant:a' "$f" -- -traces -tagfocus='us-1,tenant:a' "$f"
    check traces traces --tagignore lifetime=1ms: "$f" -- -traces -tagignore=lifetime=1ms: "$f"
    check top top --tagfocus lifetime=100us:1s "$f" -- -top -tagfocus=lifetime=100us:1s "$f"
    check top top --tagfocus :64kb --tagignore 'tenant=glob|ini' "$f" -- -top -tagfocus=:64kb -tagignore='tenant=glob|ini' "$f"
    check tags top --tags --tagfocus 1kb:500kb "$f" -- -tags -tagfocus=1kb:500kb "$f"
    check tags top --tags --tagfocus lifetime=1s "$f" -- -tags -tagfocus=lifetime=1s "$f"
    # edges: a unitless number (matches only keys without a known unit), a sign, a range
    # of two unit kinds (then a regexp), a key-less regexp list
    check tags top --tags --tagfocus retries=2 "$f" -- -tags -tagfocus=retries=2 "$f"
    check tags top --tags --tagignore +1kb: "$f" -- -tags -tagignore=+1kb: "$f"
    check tags top --tags --tagfocus lifetime=1ms:1kb "$f" -- -tags -tagfocus=lifetime=1ms:1kb "$f"
    check tags top --tags --tagfocus 'tenant:(acme|globex),eu' "$f" -- -tags -tagfocus='tenant:(acme|globex),eu' "$f"
}

views "$tmp/go.pb.gz" 'leaf|small'
views "$tmp/go2.pb.gz" 'leaf|caller'
# Two profiles written by Go's runtime (two runs, the second with 1500 more leafA objects).
check diff diff "$tmp/go.pb.gz" "$tmp/go2.pb.gz" -- -top -diff_base "$tmp/go.pb.gz" "$tmp/go2.pb.gz"
check diff diff --sample-type alloc_space "$tmp/go2.pb.gz" "$tmp/go.pb.gz" -- \
    -top -sample_index=alloc_space -diff_base "$tmp/go2.pb.gz" "$tmp/go.pb.gz"
views "$tmp/sites1.pb.gz" 'site_(malloc|small)'
check diff diff "$tmp/sites1.pb.gz" "$tmp/sites2.pb.gz" -- -top -diff_base "$tmp/sites1.pb.gz" "$tmp/sites2.pb.gz"
check diff diff --cum --sample-type alloc_objects "$tmp/sites2.pb.gz" "$tmp/sites1.pb.gz" -- \
    -top -cum -sample_index=alloc_objects -diff_base "$tmp/sites2.pb.gz" "$tmp/sites1.pb.gz"

seed=1
while [ $seed -le 15 ]; do
    "$tmp/gen" "$tmp/gen.pb.gz" $seed
    "$tmp/gen" "$tmp/genb.pb.gz" $((seed + 100))
    views "$tmp/gen.pb.gz" 'func[1-4]'
    tagviews "$tmp/gen.pb.gz"
    check diff diff "$tmp/genb.pb.gz" "$tmp/gen.pb.gz" -- -top -diff_base "$tmp/genb.pb.gz" "$tmp/gen.pb.gz"
    seed=$((seed + 1))
done

# Every verb: --help on stdout with status 0.
for v in top traces peek tree collapsed flamegraph diff suspects lifetimes check; do
    checks=$((checks + 1))
    "$hs" $v --help >"$tmp/help" 2>&1 && grep -q "^usage: heapsift $v" "$tmp/help" ||
        { echo "FAIL: heapsift $v --help"; fails=$((fails + 1)); }
done

echo "views_vs_pprof: $checks comparisons, $fails failures, $tagged label listings"
[ $tagged -ge 10 ] || { echo "FAIL: only $tagged --tags comparisons had labels"; fails=$((fails + 1)); }
[ $fails -eq 0 ]

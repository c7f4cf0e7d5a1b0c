#!/bin/sh
# heapsift graph vs go tool pprof -dot on the same files. Profiles without labels (two runs
# of tests/programs/sites under heapsift): the DOT text byte for byte, at every
# granularity, with filters, sample types and a node count that forces pprof's second
# selection. Go's runtime/pprof profiles and the random generator's (labels on most
# samples): the same once pprof's label boxes (nodelets, not drawn by heapsift) are taken
# out, the generator's with --nodecount 0 (pprof counts label boxes as nodes when it picks
# the top 80). --base against -diff_base: the same with the colours taken out; then the
# colours themselves on tests/programs/grow run with 4000 and 12000 objects at site_grow:
# site_grow and its callers grew, site_steady and site_small did not. Last, the SVG
# Graphviz makes of it parses (xmllint) and has a box per node of the DOT text, and so
# does heapsift's own layout (--layout heapsift, what the endpoint serves).
# Usage: graph_vs_pprof.sh BUILD_DIR SOURCE_DIR. Exits 77 (skip) when go or dot is missing.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" graph
src=$2
hs_need_go
command -v dot >/dev/null 2>&1 || { echo "SKIP: Graphviz's dot not found (sh scripts/setup.sh)"; exit 77; }
hs_need_built "$CLI" "$LIB" "$BUILD/programs/sites" "$BUILD/programs/grow"

hs_make_test_profiles "$T" "$src" >/dev/null 2>&1 || { echo "FAIL: test profiles not made"; exit 1; }
for seed in 1 2; do
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$seed HEAPSIFT_OUT="$T/sites$seed.pb.gz" LD_PRELOAD="$LIB" \
        "$BUILD/programs/sites" >/dev/null
done

checks=0
# check MODE OURS_ARGS... -- PPROF_ARGS...: MODE exact, nolabels (pprof's nodelet lines and
# their edges' minlen dropped) or nocolour (also colours and heapsift's classes dropped).
check() {
    mode=$1
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
    "$CLI" graph $ours --symbolize=none --comments >"$T/ours" 2>"$T/ours.err" || st=$?
    go tool pprof -symbolize=none -dot "$@" >"$T/theirs" 2>/dev/null || true
    if [ ! -s "$T/theirs" ] && [ $st -eq 2 ]; then # both refuse (incompatible profiles)
        return 0
    fi
    [ $st -eq 0 ] || { fail "heapsift graph$ours: status $st"; show "$T/ours.err"; return 0; }
    [ -s "$T/theirs" ] || { fail "go tool pprof -dot $*: no output"; return 0; }
    if [ "$mode" != exact ]; then
        grep -Ev '^N+[0-9]+_[0-9]+ \[|^N+[0-9]+(_[0-9]+)? -> N+[0-9]+_[0-9]+ \[' "$T/theirs" |
            sed 's/ minlen=2//' >"$T/t2"
        mv "$T/t2" "$T/theirs"
    fi
    if [ "$mode" = nocolour ]; then
        for f in ours theirs; do
            sed -E 's/ (color|fillcolor|class)="[^"]*"//g' "$T/$f" >"$T/t2"
            mv "$T/t2" "$T/$f"
        done
    fi
    # pprof orders edges of equal |weight| and opposite signs, or between nodes of the same
    # name, as its map iteration falls (its Less says neither is first): the same lines in
    # another order pass, as in views_vs_pprof's peek.
    cmp -s "$T/ours" "$T/theirs" || [ "$(sort "$T/ours" | cksum)" = "$(sort "$T/theirs" | cksum)" ] ||
        { fail "heapsift graph$ours  vs  go tool pprof -dot $*"; diff "$T/ours" "$T/theirs" | show /dev/stdin 12; }
}

for f in "$T/sites1.pb.gz" "$T/sites2.pb.gz"; do
    check exact "$f" -- "$f"
    check exact --granularity=lines "$f" -- -lines "$f"
    check exact --granularity=addresses "$f" -- -addresses "$f"
    check exact --nodecount 6 "$f" -- -nodecount=6 "$f"
    check exact --focus 'site_(m|c)' --hide _start "$f" -- -focus 'site_(m|c)' -hide _start "$f"
    check exact --sample-type alloc_objects --nodefraction 0.05 "$f" -- -sample_index=alloc_objects -nodefraction=0.05 "$f"
    check exact --edgefraction 0.1 --unit kB "$f" -- -edgefraction=0.1 -unit=kB "$f"
done
for f in "$T/go.pb.gz" "$T/go2.pb.gz"; do
    check nolabels "$f" -- "$f"
    check nolabels --granularity=lines "$f" -- -lines "$f"
done
seed=1
while [ $seed -le 8 ]; do
    "$T/gen" "$T/gen.pb.gz" $seed
    "$T/gen" "$T/genb.pb.gz" $((seed + 100))
    check nolabels --nodecount 0 "$T/gen.pb.gz" -- -nodecount=0 "$T/gen.pb.gz"
    check nolabels --nodecount 0 --granularity=lines "$T/gen.pb.gz" -- -nodecount=0 -lines "$T/gen.pb.gz"
    check nolabels --nodecount 0 --nodefraction 0 "$T/gen.pb.gz" -- -nodecount=0 -nodefraction=0 "$T/gen.pb.gz"
    check nocolour --nodecount 0 --base "$T/genb.pb.gz" "$T/gen.pb.gz" -- -nodecount=0 -diff_base "$T/genb.pb.gz" "$T/gen.pb.gz"
    seed=$((seed + 1))
done
# (Not Go's two runs: where a function's bytes are equal in both, its diff is 0 and pprof
# draws an edge of weight 0 to a node it dropped, "N7 -> N0", which heapsift does not.)
check nocolour --base "$T/sites1.pb.gz" "$T/sites2.pb.gz" -- -diff_base "$T/sites1.pb.gz" "$T/sites2.pb.gz"

# --base colours: grow with 4000 and 12000 objects at site_grow (16 MB and 48 MB).
seed=1
for n in 4000 12000; do # at rate 4096 with fixed seeds, as web_ui.sh: the same run each time
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$seed HEAPSIFT_OUT="$T/grow$n.pb.gz" LD_PRELOAD="$LIB" \
        "$BUILD/programs/grow" $n >/dev/null
    seed=$((seed + 1))
done
"$CLI" graph --base "$T/grow4000.pb.gz" "$T/grow12000.pb.gz" >"$T/diff.dot" 2>"$T/err" ||
    { fail "graph --base: status $?"; show "$T/err"; }
class() { # the class of the node whose tooltip names $1
    sed -n "s/.* tooltip=\"$1 (.*class=\"\([a-z]*\)\".*/\1/p" "$T/diff.dot"
}
for fn in site_grow main; do
    [ "$(class $fn)" = grew ] || { fail "graph --base: $fn is '$(class $fn)', not grew"; show "$T/diff.dot"; }
done
for fn in site_steady site_small; do
    c=$(class $fn)
    [ -z "$c" ] || [ "$c" = noise ] || { fail "graph --base: $fn is '$c', not noise"; show "$T/diff.dot"; }
done
grep -q 'tooltip="site_grow (.*color="#b2' "$T/diff.dot" || fail "graph --base: site_grow not red"

# SVG through Graphviz: well-formed, one box per DOT node (and the legend's), a title each.
"$CLI" graph -o "$T/g.svg" "$T/sites1.pb.gz" 2>"$T/err" || { fail "graph -o g.svg: status $?"; show "$T/err"; }
"$CLI" graph "$T/sites1.pb.gz" >"$T/g.dot"
if command -v xmllint >/dev/null 2>&1; then
    xmllint --noout "$T/g.svg" 2>"$T/err" || { fail "g.svg does not parse"; show "$T/err"; }
fi
nodes=$(grep -c '^N[0-9]* \[' "$T/g.dot")
boxes=$(grep -c '<g id="node[0-9]*" class="node"' "$T/g.svg" || true)
[ "$nodes" -ge 10 ] && [ "$boxes" -eq $((nodes + 1)) ] ||
    fail "g.svg has $boxes node groups for $nodes nodes (and the legend)"
grep -q 'title="site_malloc ([0-9.]*MB)"' "$T/g.svg" || fail "g.svg has no site_malloc box"
"$CLI" graph --svg "$T/sites1.pb.gz" >"$T/out.svg" && grep -q '^<svg' "$T/out.svg" ||
    fail "graph --svg: no SVG on stdout"
# heapsift's own layout (the endpoint's ?display=svg): well-formed, and its boxes are the
# DOT text's nodes, name and cum each (titles against tooltips), on two profiles.
for f in sites1 go2; do
    "$CLI" graph --layout heapsift -o "$T/own.svg" "$T/$f.pb.gz" 2>"$T/err" || { fail "--layout heapsift: status $?"; show "$T/err"; }
    "$CLI" graph "$T/$f.pb.gz" >"$T/own.dot"
    if command -v xmllint >/dev/null 2>&1; then
        xmllint --noout "$T/own.svg" 2>"$T/err" || { fail "$f: own layout's SVG does not parse"; show "$T/err"; }
    fi
    sed -n 's/^N[0-9]* \[.* tooltip="\([^"]*\)".*/\1/p' "$T/own.dot" | sort >"$T/want"
    sed -n 's/^<g id="node[0-9]*" class="node"[^>]*><title>\([^<]*\)<\/title>.*/\1/p' "$T/own.svg" |
        sed 's/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g' | sort >"$T/got"
    [ -s "$T/want" ] && cmp -s "$T/want" "$T/got" ||
        { fail "$f: own layout's boxes differ from the DOT nodes"; diff "$T/want" "$T/got" | show /dev/stdin; }
done
# Without dot: a one-line error naming Graphviz, status 3, no file.
st=0
PATH=/nonexistent "$CLI" graph -o "$T/none.svg" "$T/sites1.pb.gz" 2>"$T/err" || st=$?
[ $st -eq 3 ] && grep -q "Graphviz" "$T/err" && [ ! -e "$T/none.svg" ] ||
    { fail "graph without dot: status $st"; show "$T/err"; }

echo "graph_vs_pprof: $checks comparisons with go tool pprof -dot, $FAILS failures"
[ "$FAILS" -eq 0 ]

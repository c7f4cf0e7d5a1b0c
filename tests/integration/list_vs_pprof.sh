#!/bin/sh
# heapsift list vs go tool pprof -list, byte for byte: tests/programs/sites (built -g, its
# source in this tree) profiled by heapsift, listed from three directories (the build
# directory: absolute paths; the source tree's tests/: pprof's guess that strips up to
# "/tests/"; /: absolute again), with --sample-type, --unit and --focus, several functions
# at once and functions without source lines; and the random generator's profiles, whose
# source files do not exist (pprof's " Error: could not find file" line). Then the values:
# site_malloc's malloc line holds its whole flat value, the one `heapsift top` gives; from
# a directory named like one on the source's path (pprof's guess goes wrong there) the
# source is still found; no match exits 1 with one line.
# Usage: list_vs_pprof.sh BUILD_DIR SOURCE_DIR. Exits 77 (skip) when go is missing.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" list
src=$(cd "$2" && pwd)
hs_need_go
hs_need_built "$CLI" "$LIB" "$BUILD/programs/sites"

hs_make_test_profiles "$T" "$src" >/dev/null 2>&1 || { echo "FAIL: test profiles not made"; exit 1; }
HEAPSIFT_RATE=4096 HEAPSIFT_SEED=1 HEAPSIFT_OUT="$T/sites.pb.gz" LD_PRELOAD="$LIB" \
    "$BUILD/programs/sites" >/dev/null

checks=0
# check DIR REGEX FILE [OPTIONS -- PPROF_OPTIONS]
check() {
    dir=$1 re=$2 f=$3
    shift 3
    ours="" theirs=""
    if [ $# -gt 0 ]; then
        while [ "$1" != "--" ]; do
            ours="$ours $1"
            shift
        done
        shift
        theirs="$*"
    fi
    checks=$((checks + 1))
    # shellcheck disable=SC2086
    (cd "$dir" && "$CLI" list --symbolize=none $ours "$re" "$f") >"$T/ours" 2>"$T/ours.err" ||
        { fail "heapsift list$ours '$re' in $dir: status $?"; show "$T/ours.err"; return 0; }
    # shellcheck disable=SC2086
    (cd "$dir" && go tool pprof -symbolize=none -list "$re" $theirs "$f") >"$T/theirs" 2>/dev/null || true
    cmp -s "$T/ours" "$T/theirs" ||
        { fail "heapsift list$ours '$re' vs go tool pprof -list $theirs in $dir"; diff "$T/ours" "$T/theirs" | show /dev/stdin 12; }
}

for dir in "$BUILD" "$src/tests" /; do
    check "$dir" 'site_(malloc|small)|run_all' "$T/sites.pb.gz"
    check "$dir" '^main$|thread' "$T/sites.pb.gz"
done
check "$BUILD" 'site_' "$T/sites.pb.gz" --sample-type alloc_objects -- -sample_index=alloc_objects
check "$BUILD" 'site_(calloc|realloc)' "$T/sites.pb.gz" --unit kB -- -unit=kB
check "$BUILD" 'site_|run_all' "$T/sites.pb.gz" --focus site_small -- -focus=site_small
check "$BUILD" 'clone|_start' "$T/sites.pb.gz"
check "$T" 'main\.' "$T/go.pb.gz"
seed=1
while [ $seed -le 4 ]; do
    "$T/gen" "$T/gen.pb.gz" $seed
    check "$T" 'func[1-4]|Zeta_[1-3]' "$T/gen.pb.gz"
    seed=$((seed + 1))
done

# The values against top: site_malloc's malloc call holds all of its flat bytes.
"$CLI" list --unit B site_malloc "$T/sites.pb.gz" >"$T/list" 2>&1 || fail "list site_malloc: status $?"
flat=$("$CLI" top --unit B "$T/sites.pb.gz" | awk '$6 == "site_malloc" { print $1 }')
line=$(awk '/malloc\(OBJSZ\)/ { print $1 }' "$T/list")
[ -n "$flat" ] && [ "$line" = "$flat" ] || { fail "site_malloc's malloc line has '$line', top's flat is '$flat'"; show "$T/list"; }
grep -q "ROUTINE ======================== site_malloc in $src/tests/programs/sites.c" "$T/list" ||
    { fail "no ROUTINE line naming sites.c"; show "$T/list"; }
# From a directory named like one on the source's path (pprof's guess strips up to it and
# finds nothing there; pprof stops, heapsift opens the path as the profile has it).
mkdir -p "$T/programs"
(cd "$T/programs" && "$CLI" list site_malloc "$T/sites.pb.gz") >"$T/list2" 2>&1 || fail "list from programs/: status $?"
grep -q 'malloc(OBJSZ)' "$T/list2" || { fail "list from a directory named programs: no source"; show "$T/list2"; }
cli_refuses list 1 "no matches found for regexp: nothing_like_this" nothing_like_this "$T/sites.pb.gz"

echo "list_vs_pprof: $checks comparisons with go tool pprof -list, $FAILS failures"
[ "$FAILS" -eq 0 ]

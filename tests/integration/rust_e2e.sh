#!/bin/sh
# rust_e2e: Rust programs built as RisingWave, TiKV and jemalloc_pprof's users build them,
# profiled as a user would, against their known allocation sites (issue 38). The programs
# (tests/programs/rust/cargo, built offline by its build.sh, the ctest fixture "rust") put
# tikv-jemallocator's GlobalAlloc over jemalloc-sys 0.3 (malloc or mallocx to allocate,
# sdallocx to free, rallocx to grow, calloc or MALLOCX_ZERO for zeroed memory), prefixed
# (_rjem_*) and unprefixed, with fat LTO and without, one with v0 symbol names, and the
# mimalloc crate's (mi_malloc_aligned, mi_zalloc_aligned, mi_realloc_aligned, mi_free) over
# Debian's libmimalloc.so; and the same sites on Rust's default allocator (rsys: malloc &
# co, interposed; no reach line), the control. Each runs under `heapsift run --rate 1`; at rate 1 every figure
# is exact, and the program prints them (--expect):
#  - every site's alloc_objects, alloc_space, inuse_objects and inuse_space, through
#    go tool pprof (-symbolize=none: the names are the profile's own) and heapsift top:
#    hold_site's 10 MiB live; churn_site's 1.25 GiB allocated and freed through sdallocx
#    (mi_free); grow_site's Vec<u64> grown to 8 MiB through rallocx (19 allocations, 8 MiB
#    live); boxes aligned to 64 (mallocx with MALLOCX_ALIGN, half freed with the flag),
#    8-byte blocks aligned to 32 and zeroed pages (counted at the size asked for);
#    rsites::keep_site in a library crate (through __rust_alloc unless LTO inlined it:
#    each block counted once); and the total of run(), which makes every allocation;
#  - names as Rust users read them, `<crate>::hold_site` (no hash, no _ZN/_RNv), in go
#    tool pprof (with and without its own demangler) and in heapsift's top, traces,
#    peek, tree, list, collapsed, flamegraph, graph, lifetimes, diff, suspects and the
#    leak report;
#  - no allocator frame (__rust_alloc & co, alloc::alloc, alloc::raw_vec, a GlobalAlloc
#    impl, _rjem_*, mallocx & co, malloc & co, mi_*, operator new) as a flat leaf;
#  - the reach line (stderr and the profile's comments) says the allocator's API is
#    hooked and nothing bypasses heapsift;
#  - the unprefixed builds' exit profile holds no more than jemalloc's own `allocated`;
#  - one program under LD_PRELOAD, as a user sets it; dumps made with heapsift_dump after
#    each of hold_site's 10 steps, for diff (+9 MiB) and suspects (growing, +9 MiB).
# x86-64 only (exit 77 elsewhere). usage: rust_e2e.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" rust_e2e
SRC=$(cd "$2" && pwd)
RB=${HS_RUST_CACHE:-$SRC/build-rust}/bin
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: in-place hooks are x86-64 only"; exit 77; }
hs_need_go
hs_need_built "$LIB" "$CLI"
VARIANTS="rjemp rjemp_lto rjemu rjemu_lto rjemv0 rmimalloc rsys"
for v in $VARIANTS; do
    [ -x "$RB/$v" ] || { echo "FAIL: $RB/$v not built (tests/programs/rust/cargo/build.sh, the fixture rust/build)" >&2; exit 1; }
done
command -v python3 >/dev/null 2>&1 || { echo "FAIL: python3 (scripts/setup.sh installs it)" >&2; exit 1; }

# Allocator frames, demangled or not: what must never be a flat leaf.
. "$(dirname "$0")/../lib/allocrx.sh"
# A mangled Rust or C++ name (legacy _ZN...E, v0 _RNv...)
MANGLED_RX='_ZN[0-9]|_RN[vCsMXYINt]'

# alloc_leaves TABLE: the table's rows with a flat value whose name is an allocator frame
alloc_leaves() {
    awk -F '\t' -v rx="$ALLOC_RX" '$1 != "<dropped>" && $2 + 0 != 0 && $1 ~ rx' "$1"
}

# cell TABLE ROW flat|cum: ROW's value (a row named ROW or ROW(args))
cell() {
    awk -F '\t' -v row="$2" -v col="$3" '
        $1 == row || index($1, row "(") == 1 { print (col == "flat" ? $2 : $3); exit }' "$1"
}

# named LABEL FILE V: FILE (a view's output) names V::hold_site and holds no mangled name
named() {
    grep -qF "$3::hold_site" "$2" || { fail "$1: no '$3::hold_site'"; show "$2" 15; }
    if grep -Eq "$MANGLED_RX" "$2"; then
        fail "$1: mangled names"
        grep -Eo "[^ ;\"<>]*($MANGLED_RX)[^ ;\"<>]*" "$2" | sort -u | head -5 | sed 's/^/    | /' >&2
    fi
}

# tables V PROFILE LABEL: each sample type's table from both readers, compared with V's
# figures; the leaves and the names of every row
tables() {
    v=$1 f=$2 l=$3 col=3
    for st in alloc_objects alloc_space inuse_objects inuse_space; do
        gotop "$f" $st >"$T/go.$st" 2>&1 || { fail "$l: go tool pprof $st"; show "$T/go.$st"; }
        table <"$T/go.$st" >"$T/$l.go.$st"
        compare "$l: go tool pprof $st" "$T/$v.expect" "$T/$l.go.$st" $col 0 ||
            { fail "$l: go tool pprof -sample_index=$st: figures"; show "$T/go.$st" 12; }
        hstop "$f" $st >"$T/hs.$st" 2>&1 || { fail "$l: heapsift top $st"; show "$T/hs.$st"; }
        table <"$T/hs.$st" >"$T/$l.hs.$st"
        compare "$l: heapsift top $st" "$T/$v.expect" "$T/$l.hs.$st" $col 0 ||
            { fail "$l: heapsift top --sample-type $st: figures"; show "$T/hs.$st" 12; }
        for r in go hs; do
            alloc_leaves "$T/$l.$r.$st" >"$T/leaves"
            [ ! -s "$T/leaves" ] || { fail "$l: allocator frames as flat leaves ($r, $st)"; show "$T/leaves" 8; }
            cut -f1 "$T/$l.$r.$st" | grep -E "$MANGLED_RX" >"$T/mangled" &&
                { fail "$l: mangled names in the $st table ($r)"; show "$T/mangled" 5; }
        done
        col=$((col + 1))
    done
    # bytes freed through sdallocx (mi_free): churn_site's alloc_space - inuse_space
    want=$(awk -v n="$v::churn_site" '$1 == n { print $4 - $6 }' "$T/$v.expect")
    a=$(cell "$T/$l.go.alloc_space" "$v::churn_site" cum) i=$(cell "$T/$l.go.inuse_space" "$v::churn_site" cum)
    [ "$((${a:-0} - ${i:-0}))" = "$want" ] ||
        fail "$l: churn_site freed $((${a:-0} - ${i:-0})) bytes (alloc_space ${a:-absent} - inuse_space ${i:-absent}), want $want"
    # grow_site: its final 8 MiB live in one buffer, after 19 allocations
    [ "$(cell "$T/$l.go.inuse_objects" "$v::grow_site" cum)" = 1 ] || fail "$l: grow_site's Vec is not one live object"
    # the leaf of every sample (go tool pprof -traces)
    traces "$f" >"$T/$l.traces" 2>/dev/null || fail "$l: go tool pprof -traces"
    awk -F ';' -v rx="$ALLOC_RX" '$1 ~ rx { print; n++ } END { exit n > 0 }' "$T/$l.traces" >"$T/bad" ||
        { fail "$l: samples whose leaf is an allocator frame (-traces, leaf first)"; show "$T/bad" 5; }
    # below each site (its frame nearest the leaf), nothing of the allocator, and every
    # frame by its full path: the debug info's short names ("alloc", "finish_grow", as
    # DW_AT_name gives v0-mangled std's inlined frames) hide what a frame is
    awk -F ';' -v rx="$ALLOC_RX" -v pre="$v::" '
        { for (i = 1; i <= NF; i++) if (index($i, pre) == 1 || index($i, "rsites::") == 1) break
          if (i > NF) next
          for (j = 1; j < i; j++) if ($j ~ rx || index($j, "::") == 0) {
              printf "\"%s\" below %s\n", $j, $i; n++; break } }
        END { exit n > 0 }' "$T/$l.traces" | sort -u >"$T/bad"
    [ ! -s "$T/bad" ] || { fail "$l: allocator frames or short names below a site (-traces)"; show "$T/bad" 5; }
    # go tool pprof's own demangler (no -symbolize=none) names the site the same way
    go tool pprof -top -nodecount=0 -sample_index=inuse_space "$f" 2>/dev/null >"$T/go.sym"
    table <"$T/go.sym" | cut -f1 | grep -qx "$v::hold_site" ||
        { fail "$l: go tool pprof (demangling) has no row $v::hold_site"; show "$T/go.sym" 15; }
}

# reach V ERRFILE PROFILE WHAT...: the reach line (ERRFILE and the profile's comments) says
# each WHAT is hooked, and nothing bypasses heapsift
reach() {
    v=$1 e=$2 f=$3
    shift 3
    grep '^heapsift: reach: ' "$e" >"$T/reach" || true
    [ "$(wc -l <"$T/reach")" = 1 ] || { fail "$v: $(wc -l <"$T/reach") reach lines on stderr, want 1"; show "$e"; }
    go tool pprof -raw "$f" 2>/dev/null | grep 'reach: ' >"$T/reach.pb" ||
        fail "$v: no reach comment in the profile"
    for r in "$T/reach" "$T/reach.pb"; do
        ! grep -q 'bypass' "$r" || { fail "$v: the reach line says calls bypass heapsift"; show "$r"; }
        for w in "$@"; do
            sed 's/calls bypass heapsift:.*//' "$r" | grep -qF -- "$w" ||
                { fail "$v: the reach line does not say $w is hooked"; show "$r"; }
        done
    done
}

# views V PROFILE: heapsift's other views of PROFILE name V's sites as Rust users read them
views() {
    v=$1 f=$2
    "$CLI" traces "$f" >"$T/v.traces" 2>&1 || fail "$v: heapsift traces: status $?"
    named "$v: heapsift traces" "$T/v.traces" "$v"
    "$CLI" peek "$v::hold_site" "$f" >"$T/v.peek" 2>&1 || fail "$v: heapsift peek: status $?"
    named "$v: heapsift peek" "$T/v.peek" "$v"
    "$CLI" tree --all "$f" >"$T/v.tree" 2>&1 || fail "$v: heapsift tree: status $?"
    named "$v: heapsift tree" "$T/v.tree" "$v"
    "$CLI" collapsed "$f" >"$T/v.coll" 2>&1 || fail "$v: heapsift collapsed: status $?"
    named "$v: heapsift collapsed" "$T/v.coll" "$v"
    "$CLI" flamegraph -o "$T/v.svg" "$f" 2>"$T/v.err" || { fail "$v: heapsift flamegraph: status $?"; show "$T/v.err"; }
    named "$v: heapsift flamegraph" "$T/v.svg" "$v"
    "$CLI" graph -o "$T/v.dot" "$f" 2>"$T/v.err" || { fail "$v: heapsift graph: status $?"; show "$T/v.err"; }
    named "$v: heapsift graph" "$T/v.dot" "$v"
    # list: the routine's header names it; its cum in inuse_space is hold_site's 10 MiB
    "$CLI" list --unit B "$v::hold_site" "$f" >"$T/v.list" 2>&1 || fail "$v: heapsift list: status $?"
    named "$v: heapsift list" "$T/v.list" "$v"
    want=$(awk -v n="$v::hold_site" '$1 == n { print $6 }' "$T/$v.expect")
    awk '/\(flat, cum\)/ { print $2; exit }' "$T/v.list" | grep -qx "${want}B" ||
        { fail "$v: heapsift list: hold_site's cum is not ${want}B"; show "$T/v.list" 5; }
    # lifetimes: churn_site's blocks, freed at once, are named too
    "$CLI" lifetimes "$f" >"$T/v.life" 2>&1 || fail "$v: heapsift lifetimes: status $?"
    grep -qF "$v::churn_site" "$T/v.life" || { fail "$v: heapsift lifetimes: no $v::churn_site"; show "$T/v.life" 15; }
    ! grep -Eq "$MANGLED_RX" "$T/v.life" || { fail "$v: heapsift lifetimes: mangled names"; show "$T/v.life" 15; }
}

# series V: V's dumps after each of hold_site's 10 steps (heapsift_dump), read by diff
# (hold_site +9 MiB from the first to the last) and suspects (growing by 9 MiB)
series() {
    v=$1
    mkdir -p "$T/ser.$v"
    st=0
    "$CLI" run --rate 1 -o "$T/ser.$v.pb.gz" -- "$RB/$v" "$T/ser.$v" >/dev/null 2>"$T/ser.err" || st=$?
    [ $st = 0 ] || { fail "$v with dumps: status $st"; show "$T/ser.err"; return 0; }
    step=$(awk -v n="$v::hold_site" '$1 == n { print $6 / 10 }' "$T/$v.expect")
    "$CLI" diff --unit B "$T/ser.$v/step.000.pb.gz" "$T/ser.$v/step.009.pb.gz" >"$T/diff" 2>&1 ||
        fail "$v: heapsift diff: status $?"
    named "$v: heapsift diff" "$T/diff" "$v"
    # rows: flat flat% sum% cum cum% change NAME
    got=$(awk -v n=" $v::hold_site" 'substr($0, length($0) - length(n) + 1) == n { print $4 }' "$T/diff")
    [ "$got" = "$((9 * step))B" ] ||
        { fail "$v: heapsift diff: hold_site did not grow by $((9 * step)) bytes"; show "$T/diff" 15; }
    "$CLI" suspects --json "$T/ser.$v" >"$T/susp.json" 2>"$T/susp.err" || { fail "$v: heapsift suspects: status $?"; show "$T/susp.err"; }
    "$CLI" suspects "$T/ser.$v" >"$T/susp.txt" 2>&1 || true
    named "$v: heapsift suspects" "$T/susp.txt" "$v"
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for s in d["stacks"]:
    if sys.argv[2] in s["frames"]:
        print(s["verdict"], s["growth"])
        break
' "$T/susp.json" "$v::hold_site" >"$T/susp" || fail "$v: heapsift suspects --json: unreadable"
    [ "$(cat "$T/susp")" = "growing $((9 * step))" ] ||
        { fail "$v: suspects: hold_site '$(cat "$T/susp")', want 'growing $((9 * step))'"; show "$T/susp.txt" 10; }
}

# jemalloc_allocated PROFILE: its accounting's jemalloc `allocated` (empty if none)
jemalloc_allocated() {
    go tool pprof -raw "$1" 2>/dev/null | sed -n 's/.*allocator: jemalloc allocated=\([0-9]*\).*/\1/p' | head -1
}

for v in $VARIANTS; do
    "$RB/$v" --expect >"$T/$v.expect" || { fail "$v --expect: status $?"; continue; }
    st=0
    "$CLI" run --rate 1 -o "$T/$v.pb.gz" -- "$RB/$v" >"$T/$v.out" 2>"$T/$v.err" || st=$?
    [ $st = 0 ] || { fail "$v: status $st under heapsift run"; show "$T/$v.err"; continue; }
    grep -q "^$v done: 160 blocks held" "$T/$v.out" || { fail "$v: output changed"; show "$T/$v.out"; }
    tables $v "$T/$v.pb.gz" $v
    views $v "$T/$v.pb.gz"
    case $v in
    rjemp* | rjemv0) reach $v "$T/$v.err" "$T/$v.pb.gz" "_rjem_*" ;;
    rjemu*) reach $v "$T/$v.err" "$T/$v.pb.gz" mallocx sdallocx rallocx "defined by $v" ;;
    rmimalloc) reach $v "$T/$v.err" "$T/$v.pb.gz" "mi_*" ;;
    rsys) ! grep -q 'reach:' "$T/$v.err" || { fail "rsys: a reach line on the default allocator"; show "$T/$v.err"; } ;;
    esac
    case $v in
    rjemu*)
        # the live bytes the profile gives are held by jemalloc (its `allocated`, the
        # usable sizes of live blocks, is at least the sum of their requested sizes)
        al=$(jemalloc_allocated "$T/$v.pb.gz")
        live=$(cell "$T/$v.go.inuse_space" main cum)
        [ -n "$al" ] && [ -n "$live" ] && [ "$live" -le "$al" ] ||
            fail "$v: the profile says ${live:-?} bytes live, jemalloc's allocated says ${al:-nothing}"
        ;;
    esac
done

# as a user sets it: LD_PRELOAD and HEAPSIFT_RATE, no heapsift run (verbose: the reach
# line on stderr too)
v=rjemu_lto
st=0
HEAPSIFT_VERBOSE=1 HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/preload.pb.gz" LD_PRELOAD="$LIB" "$RB/$v" >"$T/preload.out" 2>"$T/preload.err" || st=$?
[ $st = 0 ] || { fail "$v under LD_PRELOAD: status $st"; show "$T/preload.err"; }
[ $st = 0 ] && tables $v "$T/preload.pb.gz" preload && reach $v "$T/preload.err" "$T/preload.pb.gz" mallocx sdallocx rallocx

# the leak report at exit names the sites too
st=0
"$CLI" run --rate 1 --leaks 1 -o "$T/leaks.pb.gz" -- "$RB/rjemp_lto" >/dev/null 2>"$T/leaks.err" || st=$?
[ $st = 0 ] || fail "rjemp_lto --leaks 1: status $st"
named "rjemp_lto: the leak report" "$T/leaks.err" rjemp_lto

for v in rjemp_lto rjemu_lto rmimalloc; do
    series $v
done

[ "$FAILS" -eq 0 ] && echo "rust_e2e: ok"
exit $((FAILS > 0))

#!/bin/sh
# api_hooks: an allocator's own API hooked in place (src/preload/reach/hooks_api.c; issue 38), on
# programs with known sites (tests/programs/api), exact at HEAPSIFT_RATE=1 in go tool pprof
# and in heapsift top (flat alloc_objects, alloc_space, inuse_objects, inuse_space of every
# site; the profile's alloc_space and inuse_space totals; bytes freed are alloc_space less
# inuse_space):
#  - jemalloc_api (mallocx with MALLOCX_ALIGN, _ZERO, _ARENA, _TCACHE; sdallocx and dallocx;
#    rallocx; xallocx held, refused and with extra; blocks freed through another path),
#    linked against Debian's libjemalloc.so (malloc interposed, mallocx & co patched in the
#    library) and against libjemalloc_pic.a (all of it defined by the executable, as
#    Rust's unprefixed jemalloc-sys);
#  - mimalloc_api (mi_malloc_aligned, mi_zalloc_aligned, mi_realloc_aligned, mi_free, the
#    plain forms), linked against Debian's libmimalloc.so (whose malloc is mi_malloc: each
#    block counted once) and, -DMI_OWN, defining that API in the executable (Debian ships
#    no static libmimalloc);
#  - rjem_api: tikv-jemallocator's _rjem_malloc, _rjem_mallocx, _rjem_sdallocx and
#    _rjem_rallocx in the executable, with no _rjem_free;
#  - each allocation and release counted once (the profile's exact counters), the reach
#    line says what is hooked, and what bypasses heapsift: with HEAPSIFT_HOOKS=off, when
#    the patcher refuses _rjem_sdallocx (the only release: nothing of the API is hooked),
#    and when it refuses _rjem_rallocx alone (the rest is hooked and exact).
# Every program's output and exit status are unchanged. x86-64 only (exit 77 elsewhere).
# usage: api_hooks.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" api_hooks
SRC=$(cd "$2" && pwd)
P=$SRC/tests/programs/api
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: in-place hooks are x86-64 only"; exit 77; }
hs_need_go
hs_need_built "$LIB" "$CLI"
CFLAGS="-O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -I$P"

# run NAME WANT CMD...: CMD under heapsift at rate 1 into $T/NAME.pb.gz, printing WANT
# (verbose: its stderr carries the reach line)
run() {
    name=$1 want=$2
    shift 2
    st=0
    HEAPSIFT_VERBOSE=1 HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$name.pb.gz" LD_PRELOAD="$LIB" "$@" >"$T/$name.out" \
        2>"$T/$name.err" || st=$?
    [ "$st" -eq 0 ] || { fail "$name: status $st"; show "$T/$name.err"; }
    [ "$(cat "$T/$name.out")" = "$want" ] || fail "$name: output '$(cat "$T/$name.out")', want '$want'"
    # the same program without heapsift prints the same
    [ "$("$@" 2>&1)" = "$want" ] || fail "$name: the program alone does not print '$want'"
}

# says NAME TEXT: NAME's stderr has one reach line and it says TEXT
says() {
    n=$(grep -c '^heapsift: reach: ' "$T/$1.err" || true)
    [ "$n" -eq 1 ] || { fail "$1: $n reach lines on stderr, want 1"; show "$T/$1.err"; }
    grep -qF "$2" "$T/$1.err" || { fail "$1: the reach line does not say '$2'"; show "$T/$1.err"; }
}

# sites NAME EXPECT: each site of EXPECT ("site flat alloc_objects alloc_space
# inuse_objects inuse_space" lines) exact in go tool pprof and heapsift top
sites() {
    col=3
    for st in alloc_objects alloc_space inuse_objects inuse_space; do
        gotop "$T/$1.pb.gz" $st >"$T/$1.go.$st" 2>&1 || { fail "$1: go tool pprof $st"; show "$T/$1.go.$st"; }
        table <"$T/$1.go.$st" >"$T/$1.go.tab"
        compare "$1 go pprof $st" "$2" "$T/$1.go.tab" $col 0 || { fail "$1: go tool pprof -sample_index=$st"; show "$T/$1.go.$st" 30; }
        hstop "$T/$1.pb.gz" $st >"$T/$1.hs.$st" 2>&1 || { fail "$1: heapsift top $st"; show "$T/$1.hs.$st"; }
        table <"$T/$1.hs.$st" >"$T/$1.hs.tab"
        compare "$1 heapsift top $st" "$2" "$T/$1.hs.tab" $col 0 || { fail "$1: heapsift top --sample-type $st"; show "$T/$1.hs.$st" 30; }
        col=$((col + 1))
    done
}

# totals NAME ALLOC_SPACE INUSE_SPACE: main's cumulative bytes, the sites' sum (beyond it,
# the profile's total holds start-up's only: libjemalloc.so brings libstdc++, whose
# emergency pool is allocated before main)
totals() {
    for st in alloc_space inuse_space; do
        want=$2
        [ $st = inuse_space ] && want=$3
        got=$(table <"$T/$1.go.$st" | awk -F '\t' '$1 == "main" { print $3 }')
        [ "$got" = "$want" ] || { fail "$1: main's cum $st ${got:-absent}, want $want"; show "$T/$1.go.$st" 30; }
    done
}

# counted NAME ALLOCS FREES: the profile's exact counters, every call counted once: ALLOCS
# the program's, and one per object allocated outside main (start-up)
counted() {
    all=$(sed -n 's/.* of \([0-9]*\)B* total.*/\1/p' "$T/$1.go.alloc_objects" | head -1)
    in_main=$(table <"$T/$1.go.alloc_objects" | awk -F '\t' '$1 == "main" { print $3 }')
    a=$(($2 + ${all:-0} - ${in_main:-0}))
    go tool pprof -raw "$T/$1.pb.gz" 2>/dev/null | grep -q "exact: allocs=$a frees=$3 " ||
        { fail "$1: not every call counted once (want allocs=$a frees=$3)"; go tool pprof -raw "$T/$1.pb.gz" 2>&1 | grep exact: >&2; }
}

# --- jemalloc: mallocx & co, shared and static ------------------------------------------
cat >"$T/je.expect" <<'EOF'
site_align flat 100 100000 100 100000
site_zero flat 200 400000 0 0
site_arena flat 300 900000 100 300000
site_tcache flat 100 50000 50 25000
site_grow flat 200 1010000 100 1000000
site_x_grow flat 100 100000 100 101000
site_x_fail flat 100 100000 100 100000
site_x_extra flat 100 100000 100 102000
site_cross flat 500 420000 0 0
EOF
if cc $CFLAGS -o "$T/je_shared" "$P/jemalloc_api.c" -ljemalloc 2>"$T/cc.err"; then
    run je_shared "jemalloc done" "$T/je_shared"
    says je_shared "reach: hooked in place: dallocx, sdallocx, mallocx, rallocx, xallocx (libjemalloc.so.2's own allocator API)"
    sites je_shared "$T/je.expect"
    totals je_shared 3180000 1728000
    counted je_shared 1700 1050
    HEAPSIFT_HOOKS=off run je_off "jemalloc done" "$T/je_shared"
    says je_off "calls bypass heapsift: dallocx, sdallocx, mallocx, rallocx, xallocx (libjemalloc.so.2's own allocator API); the memory they allocate is not in its profiles (HEAPSIFT_HOOKS=off)"
else
    fail "cannot link against libjemalloc.so (libjemalloc-dev)"; show "$T/cc.err"
fi
if cc $CFLAGS -o "$T/je_static" "$P/jemalloc_api.c" -Wl,-Bstatic -l:libjemalloc_pic.a -Wl,-Bdynamic \
    -lpthread -lm -ldl 2>"$T/cc.err"; then
    run je_static "jemalloc done" "$T/je_static"
    says je_static ", dallocx, sdallocx, mallocx, rallocx, xallocx (defined by je_static)"
    says je_static "reach: hooked in place: free, malloc, calloc, realloc"
    sites je_static "$T/je.expect"
    totals je_static 3180000 1728000
    counted je_static 1700 1050
else
    fail "cannot link libjemalloc_pic.a (libjemalloc-dev)"; show "$T/cc.err"
fi
# the same, exported (-rdynamic) and stripped: its allocator's API is seen only in its
# dynamic symbols, found there by name; main's totals and the exact counts as above
if cc $CFLAGS -rdynamic -o "$T/je_stripped" "$P/jemalloc_api.c" -Wl,-Bstatic -l:libjemalloc_pic.a \
    -Wl,-Bdynamic -lpthread -lm -ldl 2>"$T/cc.err" && strip "$T/je_stripped" 2>>"$T/cc.err"; then
    run je_stripped "jemalloc done" "$T/je_stripped"
    says je_stripped ", dallocx, sdallocx, mallocx, rallocx, xallocx (defined by je_stripped)"
    for st in alloc_space inuse_space alloc_objects; do # (its static sites lost their names)
        gotop "$T/je_stripped.pb.gz" $st >"$T/je_stripped.go.$st" 2>&1 || fail "je_stripped: go tool pprof $st"
    done
    totals je_stripped 3180000 1728000
    counted je_stripped 1700 1050
else
    fail "cannot link libjemalloc_pic.a -rdynamic and strip it"; show "$T/cc.err"
fi

# --- mimalloc: the API Rust's mimalloc crate calls, shared and in the executable -----------
cat >"$T/mi.expect" <<'EOF'
site_aligned flat 100 100000 100 100000
site_zalloc_aligned flat 200 400000 0 0
site_realloc_aligned flat 200 1010000 100 1000000
site_plain flat 500 200000 300 150000
EOF
cp "$T/mi.expect" "$T/mi_shared.expect"
echo "site_cross flat 500 355200 100 64000" >>"$T/mi_shared.expect"
if cc $CFLAGS -o "$T/mi_shared" "$P/mimalloc_api.c" -lmimalloc 2>"$T/cc.err"; then
    run mi_shared "mimalloc done" "$T/mi_shared"
    says mi_shared "reach: hooked in place: mi_* (libmimalloc.so.2's own allocator API)"
    sites mi_shared "$T/mi_shared.expect"
    totals mi_shared 2065200 1314000
    counted mi_shared 1500 900
else
    fail "cannot link against libmimalloc.so (libmimalloc-dev)"; show "$T/cc.err"
fi
cc $CFLAGS -DMI_OWN -o "$T/mi_own" "$P/mimalloc_api.c"
run mi_own "mimalloc done" "$T/mi_own"
says mi_own "reach: hooked in place: mi_* (its own API)"
sites mi_own "$T/mi.expect"
totals mi_own 1710000 1250000
counted mi_own 1000 500

# --- tikv-jemallocator's _rjem_* with no _rjem_free ---------------------------------------
cat >"$T/rjem.expect" <<'EOF'
site_hold flat 10 10485760 10 10485760
site_freed flat 1000 4096000 0 0
site_grow flat 18 16777152 1 8388608
site_zeroed flat 100 300000 50 150000
EOF
cc $CFLAGS -o "$T/rjem" "$P/rjem_api.c"
nm "$T/rjem" | grep -q ' _rjem_free$' && fail "rjem: the executable defines _rjem_free"
run rjem "rjem done" "$T/rjem"
says rjem "reach: hooked in place: _rjem_* (its own API)"
sites rjem "$T/rjem.expect"
totals rjem 31658912 19024368
counted rjem 1128 1067
HEAPSIFT_HOOKS=off run rjem_off "rjem done" "$T/rjem"
says rjem_off "calls bypass heapsift: _rjem_* (an allocator's own API); the memory they allocate is not in its profiles (HEAPSIFT_HOOKS=off)"
# what cannot be hooked is said: a release path refused leaves the whole API unhooked; a
# function refused after it, that function alone (the program runs unchanged)
cc $CFLAGS -DREFUSED_SDALLOCX -o "$T/rjem_nosd" "$P/rjem_api.c"
run rjem_nosd "rjem done" "$T/rjem_nosd"
says rjem_nosd "calls bypass heapsift: _rjem_* (an allocator's own API; not hooked: _rjem_sdallocx: a relative jump back into the patched bytes"
grep -q 'hooked in place' "$T/rjem_nosd.err" && { fail "rjem_nosd: said hooked"; show "$T/rjem_nosd.err"; }
cc $CFLAGS -DREFUSED_RALLOCX -o "$T/rjem_norealloc" "$P/rjem_api.c"
run rjem_norealloc "rjem done" "$T/rjem_norealloc"
says rjem_norealloc "reach: hooked in place: _rjem_* (its own API); calls bypass heapsift: _rjem_rallocx (an allocator's own API; not hooked: _rjem_rallocx: a relative jump back into the patched bytes"
grep -v site_grow "$T/rjem.expect" >"$T/rjem_norealloc.expect"
sites rjem_norealloc "$T/rjem_norealloc.expect"
# heapsift run says the same, and its profile holds the live site
st=0
"$CLI" run -q --rate 1 -o "$T/rjem_run.pb.gz" -- "$T/rjem" >"$T/rjem_run.out" 2>"$T/rjem_run.err" || st=$?
[ $st -eq 0 ] && grep -q 'hooked in place: _rjem_\* (its own API)' "$T/rjem_run.err" ||
    { fail "heapsift run rjem: status $st"; show "$T/rjem_run.err"; }
gotop "$T/rjem_run.pb.gz" inuse_space | table | grep -q "^site_hold	10485760	" ||
    { fail "heapsift run rjem: site_hold does not hold 10485760 bytes"; gotop "$T/rjem_run.pb.gz" inuse_space | head -20 >&2; }

[ "$FAILS" -eq 0 ] && echo "api_hooks: ok"
exit $((FAILS > 0))

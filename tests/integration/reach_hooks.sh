#!/bin/sh
# reach_hooks: programs that bring their own allocator, profiled through the in-place hooks
# (src/preload/reach/hooks.c, patch.c; issue 26), each against its known allocation sites:
#  - tests/programs/sites.c linked statically against libjemalloc_pic.a and against
#    libtcmalloc_minimal.a, and sites_cc.cc against libtcmalloc_minimal.a: exact at
#    HEAPSIFT_RATE=1 and sampled within the bounds of today's tests, by running
#    sites_exact.sh, sites_sampled.sh and cxx.sh on those builds (HS_SITES_PROG);
#  - own_malloc (its executable defines malloc, free, calloc and realloc; main keeps values
#    in registers across its calls, as GCC's -fipa-ra allows): exact counts;
#  - own_new (its executable defines malloc, free and operator new/delete, new over that
#    malloc or, -DOWN_NEW_DIRECT, not): each block counted once, exact;
#  - prefixed_alloc, which allocates only through jemalloc-style names (je_malloc,
#    je_mallocx, je_calloc, je_realloc, je_sdallocx; its realloc keeps its result in rax
#    across its call of je_free): exact; the same built as a library and loaded with
#    dlopen after start: exact, and a second copy said not hooked;
#  - Rust (tests/programs/rust, built here with rustc, no crates): sites in a library crate
#    under a #[global_allocator] of the program's own (a bump allocator over mmap), whose
#    allocations reach only __rust_alloc: exact; on the default allocator, and under one of
#    its own that forwards to System (malloc, interposed as well): counted once; and Rust
#    cdylibs loaded with dlopen after start (dlopen_call.c): exact with an allocator of their
#    own (two at once: two instances of the hooks), counted once on the default one;
#  - the bad cases: a free whose prologue the patcher refuses (a loop jumps back into its
#    first five bytes: the message names it and why, and nothing of that allocator is
#    hooked), a stripped executable whose allocator has no name (the
#    message says heapsift cannot find it), and HEAPSIFT_HOOKS=off / run --hooks off.
# Every program's output and exit status are unchanged, and go tool pprof reads every
# profile. x86-64 only (exit 77 elsewhere).
# usage: reach_hooks.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" reach_hooks
SRC=$(cd "$2" && pwd)
P=$SRC/tests/programs
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: in-place hooks are x86-64 only"; exit 77; }
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/own_malloc"
CFLAGS="-O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -pthread -I$P -I$SRC/include"

# run NAME CMD...: CMD under heapsift at rate 1 into $T/NAME.pb.gz; stdout to $T/NAME.out;
# verbose, so that its stderr carries the reach line (without, it is only in the profile)
run() {
    name=$1
    shift
    st=0
    HEAPSIFT_VERBOSE=1 HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$name.pb.gz" LD_PRELOAD="$LIB" "$@" >"$T/$name.out" \
        2>"$T/$name.err" || st=$?
    [ "$st" -eq 0 ] || { fail "$name: status $st"; show "$T/$name.err"; }
    gotop "$T/$name.pb.gz" alloc_objects >"$T/$name.go" 2>&1 || { fail "$name: go tool pprof"; show "$T/$name.go"; }
}

# says NAME TEXT: NAME's stderr has one reach line and it says TEXT
says() {
    n=$(grep -c '^heapsift: reach: ' "$T/$1.err" || true)
    [ "$n" -eq 1 ] || { fail "$1: $n reach lines on stderr, want 1"; show "$T/$1.err"; }
    grep -qF "$2" "$T/$1.err" || { fail "$1: the reach line does not say '$2'"; show "$T/$1.err"; }
}

# value NAME SAMPLE_TYPE ROW flat|cum: the value go tool pprof gives the row
value() {
    gotop "$T/$1.pb.gz" "$2" | table | awk -F '\t' -v row="$3" -v col="$4" '
        $1 == row || index($1, row) == 1 { print (col == "flat" ? $2 : $3); exit }'
}

# most NAME SAMPLE_TYPE TEXT: the largest cum among the rows whose name holds TEXT (a
# closure's row is sites::site_rust_keep::{{closure}}, its parent's sites::site_rust_keep)
most() {
    gotop "$T/$1.pb.gz" "$2" | table | awk -F '\t' -v t="$3" '
        index($1, t) && $3 + 0 > m { m = $3 + 0 } END { print m + 0 }'
}

# exactly NAME SAMPLE_TYPE ROW flat|cum WANT
exactly() {
    v=$(value "$1" "$2" "$3" "$4")
    [ "$v" = "$5" ] || { fail "$1: $2 $4 of $3 is '${v:-absent}', want $5"; show "$T/$1.go" 20; }
}

# --- static jemalloc and tcmalloc: the sites tests, run on these builds -------------------
cc -c $CFLAGS -o "$T/sites.o" "$P/sites.c"
cc -o "$T/sites_je" "$T/sites.o" -pthread -Wl,-Bstatic -l:libjemalloc_pic.a -Wl,-Bdynamic -lm -ldl ||
    { fail "cannot link libjemalloc_pic.a (libjemalloc-dev)"; }
c++ -o "$T/sites_tc" "$T/sites.o" -pthread -Wl,-Bstatic -l:libtcmalloc_minimal.a -Wl,-Bdynamic ||
    { fail "cannot link libtcmalloc_minimal.a (libgoogle-perftools-dev)"; }
c++ $CFLAGS -o "$T/sitescc_tc" "$P/sites_cc.cc" -Wl,-Bstatic -l:libtcmalloc_minimal.a -Wl,-Bdynamic ||
    fail "cannot build sites_cc against libtcmalloc_minimal.a"
for exe in sites_je sites_tc; do
    [ -x "$T/$exe" ] || continue
    nm "$T/$exe" | grep -q ' T malloc$' || fail "$exe: malloc is not the executable's own"
    for t in sites_exact sites_sampled; do
        HS_SITES_PROG=$T/$exe sh "$SRC/tests/integration/$t.sh" "$BUILD" "$SRC" >"$T/$t.log" 2>&1 ||
            { fail "$t on $exe"; show "$T/$t.log" 30; }
    done
    run "$exe-reach" "$T/$exe"
    says "$exe-reach" "reach: hooked in place: free, malloc, calloc, realloc"
done
# the accounting finds the static jemalloc (its mallctl, read from the executable's .symtab)
if [ -x "$T/sites_je" ]; then
    go tool pprof -raw "$T/sites_je-reach.pb.gz" 2>/dev/null | grep -q 'allocator: jemalloc allocated=' ||
        fail "sites_je: the profile's accounting does not name jemalloc"
fi
if [ -x "$T/sitescc_tc" ]; then
    HS_SITES_PROG=$T/sitescc_tc sh "$SRC/tests/integration/cxx.sh" "$BUILD" "$SRC" >"$T/cxx.log" 2>&1 ||
        { fail "cxx on sites_cc with static tcmalloc"; show "$T/cxx.log" 30; }
    run sitescc_tc "$T/sitescc_tc"
    says sitescc_tc "operator new/delete (defined by sitescc_tc)"
fi

# --- an executable's own malloc -----------------------------------------------------------
run own "$BUILD/programs/own_malloc" 3000
grep -qx 'done 3000' "$T/own.out" || fail "own_malloc: output changed: $(cat "$T/own.out")"
says own "reach: hooked in place: free, malloc, calloc, realloc (defined by own_malloc)"
exactly own alloc_objects main flat 3000
exactly own inuse_space main flat 3000000

# --- malloc and free in assembly, and a caller that keeps values in every caller-saved
# register across them (-DOWN_ASM_FREE): the code written beside the trampolines
# (hooks_near.c) and the slow thunks keep them, on the fast path (2^40: nothing sampled),
# the slow one (rate 1: every call) and both (4096); each pair counted exactly at rate 1 ---
cc -O2 -g -DOWN_ASM_FREE -o "$T/ownasm" "$P/own_malloc.c"
for r in 1099511627776 4096 1; do
    st=0
    HEAPSIFT_VERBOSE=1 HEAPSIFT_RATE=$r HEAPSIFT_OUT="$T/ownasm$r.pb.gz" LD_PRELOAD="$LIB" "$T/ownasm" 20000 \
        >"$T/ownasm$r.out" 2>"$T/ownasm$r.err" || st=$?
    { [ $st -eq 0 ] && grep -qx 'done 20000' "$T/ownasm$r.out"; } ||
        { fail "ownasm at rate $r: status $st, $(cat "$T/ownasm$r.out")"; show "$T/ownasm$r.err"; }
    grep -qF "reach: hooked in place: free, malloc, calloc, realloc (defined by ownasm)" "$T/ownasm$r.err" ||
        { fail "ownasm at rate $r: not hooked in place"; show "$T/ownasm$r.err"; }
done
gotop "$T/ownasm1.pb.gz" alloc_objects >"$T/ownasm1.go" 2>&1 || fail "ownasm: go tool pprof"
exactly ownasm1 alloc_objects own_check flat 20000
exactly ownasm1 alloc_space own_check flat 1280000
v=$(value ownasm1 inuse_objects own_check flat) # every block freed: no row, or 0
[ "${v:-0}" = 0 ] || fail "ownasm: own_check's blocks in use at exit: $v, want none"

# --- an executable's own malloc and operator new/delete: new over that malloc is counted
# once (judged at its first call, then called inside the guard); new that takes its memory
# itself, as tcmalloc's, runs the fast path -------------------------------------------------
c++ -O2 -g -DOWN_NEW_DIRECT -o "$T/own_new_direct" "$P/own_new.cc"
for w in own_new own_new_direct; do
    exe=$BUILD/programs/own_new
    [ $w = own_new_direct ] && exe=$T/own_new_direct
    run $w "$exe"
    grep -qx 'own_new done' "$T/$w.out" || fail "$w: output changed: $(cat "$T/$w.out")"
    says $w "reach: hooked in place: free, malloc, calloc, realloc, operator new/delete (defined by $(basename "$exe"))"
    exactly $w alloc_objects site_new_plain flat 1000
    exactly $w inuse_objects site_new_plain flat 500
    exactly $w alloc_space site_new_plain flat 2000000
    exactly $w alloc_objects site_new_array flat 700
    exactly $w inuse_space site_new_array flat 700000
    # each block counted once in all: 1000 + 700 news and stdout's buffer, 500 deletes; at
    # rate 1 (every call sampled, the originals called inside the guard) and on the fast
    # paths (nothing sampled), where an original new or delete that comes back through
    # the hooked malloc or free would count its block twice
    HEAPSIFT_RATE=1099511627776 HEAPSIFT_OUT="$T/$w-fast.pb.gz" LD_PRELOAD="$LIB" "$exe" >/dev/null 2>&1 ||
        fail "$w: unsampled run failed"
    for f in "$w" "$w-fast"; do
        go tool pprof -raw "$T/$f.pb.gz" 2>/dev/null | grep -q 'exact: allocs=1701 frees=500 ' ||
            { fail "$f: not every block counted once"; go tool pprof -raw "$T/$f.pb.gz" 2>&1 | grep exact: >&2; }
    done
done

# --- an allocator's own prefixed API (je_malloc, je_mallocx, je_sdallocx, ...) ------------
run prefixed "$BUILD/programs/prefixed_alloc"
grep -qx 'prefixed done' "$T/prefixed.out" || fail "prefixed_alloc: $(cat "$T/prefixed.out")"
says prefixed "reach: hooked in place: je_* (its own API)"
exactly prefixed alloc_objects site_je_malloc flat 1000
exactly prefixed inuse_objects site_je_malloc flat 500
exactly prefixed alloc_space site_je_mallocx flat 512000
exactly prefixed inuse_space site_je_calloc flat 76800
exactly prefixed alloc_objects site_je_realloc flat 400
exactly prefixed inuse_space site_je_realloc flat 60000

# the same as a library loaded later with dlopen: hooked when heapsift next looks; a second
# copy (another object with the same API) is said not hooked, and runs unchanged
cc -O2 -g -shared -fPIC -Dmain=prefixed_main -o "$T/libprefixed.so" "$P/prefixed_alloc.c"
cp "$T/libprefixed.so" "$T/libprefixed2.so"
run dl_prefixed "$BUILD/programs/dlopen_call" "$T/libprefixed.so@prefixed_main"
grep -qx 'prefixed done' "$T/dl_prefixed.out" || fail "dl_prefixed: $(cat "$T/dl_prefixed.out")"
says dl_prefixed "reach: loaded later: hooked in place: je_* (libprefixed.so's own allocator API)"
exactly dl_prefixed alloc_objects site_je_malloc flat 1000
exactly dl_prefixed inuse_objects site_je_malloc flat 500
exactly dl_prefixed alloc_space site_je_mallocx flat 512000
exactly dl_prefixed inuse_space site_je_realloc flat 60000
run dl_prefixed2 "$BUILD/programs/dlopen_call" "$T/libprefixed.so@prefixed_main" \
    "$T/libprefixed2.so@prefixed_main"
[ "$(grep -cx 'prefixed done' "$T/dl_prefixed2.out")" = 2 ] || fail "dl_prefixed2: $(cat "$T/dl_prefixed2.out")"
grep -qF "reach: loaded later: calls bypass heapsift: je_* (libprefixed2.so's own allocator API; not hooked: the je_* API of another object is hooked already" \
    "$T/dl_prefixed2.err" || { fail "dl_prefixed2: the second object is not said not hooked"; show "$T/dl_prefixed2.err"; }
exactly dl_prefixed2 alloc_objects site_je_malloc flat 1000

# an object loaded later whose je_malloc and je_free call malloc and free: not hooked (the
# je_* API of another object is), and said to reach heapsift through what they call, not
# to bypass it: its 7 blocks of 3333 bytes are in the profile under wrap_main
cat >"$T/wrap.c" <<'EOF2'
#include <stdlib.h>
#define API __attribute__((visibility("default"), noinline))
API void *je_malloc(size_t n) { return malloc(n); }
API void je_free(void *p) { free(p); }
static void *wrap_keep[7];
int wrap_main(void)
{
    for (int i = 0; i < 7; i++)
        wrap_keep[i] = je_malloc(3333);
    je_free(je_malloc(100));
    return wrap_keep[6] == NULL;
}
EOF2
cc -O2 -g -shared -fPIC -o "$T/libwrap.so" "$T/wrap.c"
run dl_wrap "$BUILD/programs/dlopen_call" "$T/libprefixed.so@prefixed_main" "$T/libwrap.so@wrap_main"
grep -qF "heapsift: reach: loaded later: je_free of libwrap.so, je_malloc of libwrap.so reach heapsift through the free, malloc they call" \
    "$T/dl_wrap.err" || { fail "dl_wrap: libwrap.so's API is not said to reach heapsift"; show "$T/dl_wrap.err"; }
! grep -q "bypass heapsift: .*libwrap.so" "$T/dl_wrap.err" || fail "dl_wrap: libwrap.so said to bypass heapsift"
v=$(gotop "$T/dl_wrap.pb.gz" inuse_space | table | awk -F '\t' '$1 == "wrap_main" { print $3 }')
[ "$v" = 23331 ] || { fail "dl_wrap: wrap_main holds $v B, want 23331"; show "$T/dl_wrap.go" 20; }

# the look at an object loaded later asks the loader nothing while it holds the other
# threads stopped (one may hold the loader's lock): tests/programs/later_stop.c counts
run later_stop "$BUILD/programs/later_stop" "$T/libprefixed.so@prefixed_main"
grep -qx 'later_stop: 0 loader calls while the other thread was stopped' "$T/later_stop.out" ||
    { fail "later_stop: $(cat "$T/later_stop.out")"; show "$T/later_stop.err"; }
says later_stop "reach: loaded later: hooked in place: je_* (libprefixed.so's own allocator API)"

# --- Rust ----------------------------------------------------------------------------------

# Rust cdylibs loaded with dlopen after start (as Python loads a PyO3 extension): one with
# a #[global_allocator] of its own, hooked when heapsift next looks (its sampled path);
# two of them at once (two instances of the Rust hooks); one on Rust's default allocator,
# counted once (through malloc).
rust_dlopen() {
    for l in own_lib default_lib; do
        "$RUSTC" -O -g -L "$T" --extern bump="$T/libbump.rlib" --extern sites="$T/libsites.rlib" \
            --crate-type=cdylib -o "$T/lib$l.so" "$R/$l.rs" 2>"$T/rustc.err" ||
            { fail "rustc $l.rs"; show "$T/rustc.err"; return; }
    done
    cp "$T/libown_lib.so" "$T/libown_lib2.so"
    for c in "own $T/libown_lib.so" "default $T/libdefault_lib.so" \
        "two $T/libown_lib.so $T/libown_lib2.so"; do
        set -- $c
        name=dl_$1
        shift
        run $name "$BUILD/programs/dlopen_call" "$@"
        [ "$(grep -c ': 1000 vectors$' "$T/$name.out")" = $# ] ||
            { fail "$name: output changed: $(cat "$T/$name.out")"; show "$T/$name.err"; }
        v=$(most $name alloc_objects site_rust_keep)
        [ "$v" = $(($# * 1000)) ] ||
            { fail "$name: site_rust_keep's allocations: $v, want $(($# * 1000))"; show "$T/$name.go" 30; }
        v=$(most $name inuse_space site_rust_keep)
        [ "$v" = $(($# * 1000000)) ] ||
            { fail "$name: site_rust_keep's bytes in use: $v, want $(($# * 1000000))"; show "$T/$name.go" 30; }
    done
    says dl_own "reach: loaded later: hooked in place: __rust_alloc (a Rust #[global_allocator] of libown_lib.so)"
    ! grep -q 'reach:' "$T/dl_default.err" || { fail "dl_default: a reach line"; show "$T/dl_default.err"; }
    for l in libown_lib.so libown_lib2.so; do
        grep -qF "heapsift: reach: loaded later: hooked in place: __rust_alloc (a Rust #[global_allocator] of $l)" \
            "$T/dl_two.err" || { fail "dl_two: $l not said hooked"; show "$T/dl_two.err"; }
    done
    # the profile's comments keep both (go tool pprof -raw prints them)
    go tool pprof -raw "$T/dl_two.pb.gz" 2>/dev/null | grep -q 'loaded later: .*libown_lib.so.*loaded later: .*libown_lib2.so' ||
        fail "dl_two: the profile's reach comment lacks the objects loaded later"
}
RUSTC=$(command -v rustc || true)
if [ -n "$RUSTC" ]; then
    R=$P/rust
    ok=1
    for c in bump sites; do
        "$RUSTC" -O -g --crate-type=rlib --out-dir "$T" "$R/$c.rs" 2>"$T/rustc.err" ||
            { ok=0; fail "rustc $c.rs"; show "$T/rustc.err"; }
    done
    for m in own_main default_main wrap_main; do
        "$RUSTC" -O -g -L "$T" --extern bump="$T/libbump.rlib" --extern sites="$T/libsites.rlib" \
            -o "$T/$m" "$R/$m.rs" 2>"$T/rustc.err" || { ok=0; fail "rustc $m.rs"; show "$T/rustc.err"; }
    done
    if [ $ok = 1 ]; then
        for m in own_main default_main wrap_main; do
            run $m "$T/$m"
            grep -qx '1000 vectors' "$T/$m.out" || fail "$m: output changed: $(cat "$T/$m.out")"
            # the 1000 vectors of 1000 bytes, once each (the closure's frame holds them all)
            v=$(most $m alloc_objects site_rust_keep)
            [ "$v" = 1000 ] || { fail "$m: site_rust_keep's allocations: $v, want 1000"; show "$T/$m.go" 30; }
            v=$(most $m alloc_space site_rust_keep)
            [ "$v" = 1000000 ] || { fail "$m: site_rust_keep's bytes: $v, want 1000000"; show "$T/$m.go" 30; }
        done
        says own_main "reach: hooked in place: __rust_alloc (a Rust #[global_allocator] of the program's own)"
        says wrap_main "reach: hooked in place: __rust_alloc (a Rust #[global_allocator] of the program's own)"
        ! grep -q 'reach:' "$T/default_main.err" || { fail "default_main: a reach line"; show "$T/default_main.err"; }
        rust_dlopen
    fi
else
    fail "no rustc (scripts/setup.sh installs Debian's rustc)"
fi

# --- what cannot be hooked ------------------------------------------------------------------
cc -O2 -DOWN_REFUSED_FREE -o "$T/refused" "$P/own_malloc.c"
run refused "$T/refused" 100
grep -qx 'done 100' "$T/refused.out" || fail "refused free: output changed"
says refused "calls bypass heapsift: free, malloc, calloc, realloc defined by refused (not hooked: free: a relative jump back into the patched bytes"
cc -O2 -DOWN_HIDDEN -o "$T/stripped" "$P/own_malloc.c" && strip "$T/stripped"
run stripped "$T/stripped" 100
grep -qx 'done 100' "$T/stripped.out" || fail "stripped: output changed"
says stripped "calls bypass heapsift: an allocator linked into stripped (it has no symbol table and imports no malloc"

HEAPSIFT_HOOKS=off run off "$BUILD/programs/own_malloc" 100
says off "calls bypass heapsift: free, malloc, calloc, realloc defined by own_malloc; the memory they allocate is not in its profiles (HEAPSIFT_HOOKS=off)"
st=0
"$CLI" run -q --hooks off -o "$T/runoff.pb.gz" -- "$BUILD/programs/own_malloc" 100 >"$T/runoff.out" 2>"$T/runoff.err" || st=$?
[ $st -eq 0 ] && grep -q '(HEAPSIFT_HOOKS=off)' "$T/runoff.err" || { fail "run --hooks off: status $st"; show "$T/runoff.err"; }
st=0
"$CLI" run --hooks sometimes -- true 2>"$T/bad.err" || st=$?
[ $st -eq 1 ] && grep -q 'HEAPSIFT_HOOKS' "$T/bad.err" || { fail "run --hooks sometimes: status $st"; show "$T/bad.err"; }

[ "$FAILS" -eq 0 ] && echo "reach_hooks: ok"
exit $((FAILS > 0))

#!/bin/sh
# reach_true (issue 39, "Quiet" and "True"): what reach says is checked against what the
# profile holds, and a program's stderr stays its own.
#  - gcc -c under LD_PRELOAD (no HEAPSIFT_VERBOSE) prints byte for byte what it prints
#    alone (stdout, stderr, status; a clean source, one with a warning, one with an error),
#    and writes the same object; cc1 defines operator new itself and calls the malloc
#    heapsift interposes: its profile says operator new/delete "reach heapsift through the
#    malloc, free they call" (go tool pprof -comments, heapsift top's header), never that
#    they bypass it, and at rate 1 holds every byte its exact counter saw.
#  - programs built here with known sites, at rate 1, exact in go tool pprof:
#    an operator new of the program's own over malloc: its site's bytes are in the profile,
#    and the line says it reaches heapsift through malloc (hooks on and off);
#    an operator new over a static arena: the line says it bypasses heapsift, and its site is
#    indeed absent, while the program's malloc site is exact;
#    pvalloc defined by a library preloaded ahead of heapsift: over its own arena and called
#    by the program (bypass, its bytes absent), the same not called by anything (not hooked,
#    bound by no call: no "bypass"), and over malloc (reaches heapsift, its bytes present);
#    mi_new (no hook) over the hooked mi_malloc (reaches heapsift; 20,000 B present) or
#    over an arena (bypass; absent);
#    a Rust #[global_allocator] over System with HEAPSIFT_HOOKS=off (reaches heapsift
#    through malloc; hold_site's 1,000,000 B present).
#  - an empty profile says so and why: own_malloc under HEAPSIFT_HOOKS=off, in the
#    profile's comments, heapsift top and stats, and heapsift run's summary (also with -q).
# usage: reach_true.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" reach_true
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/own_malloc"

# comments FILE: the profile's comments as go tool pprof reads them
comments() {
    go tool pprof -comments "$1" 2>/dev/null
}

# has NAME FILE TEXT: the profile's comments have a line with TEXT (fixed string), and so
# has heapsift top's header
has() {
    comments "$2" | grep -qF -- "$3" || { fail "$1: the profile's comments lack '$3'"; comments "$2" >&2; }
    "$CLI" top "$2" 2>&1 | sed '/^ *flat /q' | grep -qF -- "$3" ||
        { fail "$1: heapsift top's header lacks '$3'"; "$CLI" top "$2" 2>&1 | head -12 >&2; }
}

# site NAME FILE ROW BYTES: ROW's flat alloc_space in go tool pprof is BYTES (0: no row)
site() {
    got=$(gotop "$2" alloc_space | table | awk -F '\t' -v r="$3" '$1 == r || index($1, r "(") == 1 { print $2; exit }')
    [ "${got:-0}" = "$4" ] || { fail "$1: $3 holds ${got:-no row} B allocated, want $4"; gotop "$2" alloc_space | head -20 >&2; }
}

# --- gcc: quiet, and cc1's operator new reaches heapsift ------------------------------------
if command -v gcc >/dev/null 2>&1; then
    mkdir -p "$T/gcc"
    printf 'int f(int x) { return x * 2; }\n' >"$T/gcc/clean.c"
    printf 'int f(int x) { int unused; return x * 2; }\n' >"$T/gcc/warn.c"
    printf 'int f(int x) { return x * ; }\n' >"$T/gcc/error.c"
    for src in clean warn error; do
        sa=0 sb=0
        (cd "$T/gcc" && gcc -Wall -c $src.c -o a.o >a.out 2>a.err) || sa=$?
        (cd "$T/gcc" && HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/gcc/$src.%p.pb.gz" LD_PRELOAD="$LIB" \
            gcc -Wall -c $src.c -o b.o >b.out 2>b.err) || sb=$?
        [ $sa = $sb ] || fail "gcc $src.c: status $sb under heapsift, $sa alone"
        cmp -s "$T/gcc/a.out" "$T/gcc/b.out" || fail "gcc $src.c: stdout differs under heapsift"
        cmp -s "$T/gcc/a.err" "$T/gcc/b.err" ||
            { fail "gcc $src.c: stderr differs under heapsift"; diff "$T/gcc/a.err" "$T/gcc/b.err" >&2 || true; }
        [ $sa != 0 ] || cmp -s "$T/gcc/a.o" "$T/gcc/b.o" || fail "gcc $src.c: the object differs under heapsift"
        rm -f "$T/gcc/a.o" "$T/gcc/b.o"
    done
    [ -s "$T/gcc/warn.err" ] || grep -q 'unused' "$T/gcc/b.err" || true
    cc1=
    for f in "$T"/gcc/warn.*.pb.gz; do
        comments "$f" | grep -q '^process: .*cmdline=[^ ]*/cc1 ' && cc1=$f
    done
    if [ -n "$cc1" ]; then
        has cc1 "$cc1" "reach: operator new/delete of cc1 reach heapsift through the malloc, free they call"
        ! comments "$cc1" | grep -q 'bypass' || { fail "cc1: a reach line says calls bypass heapsift"; comments "$cc1" >&2; }
        # rate 1: every byte the hooks counted is in the profile (operator new's included)
        exact=$(comments "$cc1" | sed -n 's/^exact: .* bytes=\([0-9]*\) .*/\1/p')
        total=$(gotop "$cc1" alloc_space | sed -n 's/^Showing nodes accounting for .* of \([0-9]*\)B total$/\1/p')
        [ -n "$exact" ] && [ "$exact" = "$total" ] || fail "cc1: alloc_space total ${total:-?} B, exact counter ${exact:-?} B"
        [ "$exact" -gt 100000 ] 2>/dev/null || fail "cc1: only ${exact:-?} B allocated"
        # operator new is not the site: its frame is dropped as heapsift's own operator new's
        # (before, 102,024 B of a compile sat under it as a leaf)
        "$CLI" traces --no-drop-frames --symbolize=none --sample-type alloc_space "$cc1" >"$T/cc1.traces" 2>&1
        ! grep -Eq '^[ 0-9.kMGB]*operator (new|delete)' "$T/cc1.traces" ||
            { fail "cc1: operator new in its stacks"; grep -E -m3 -B2 '^[ 0-9.kMGB]*operator (new|delete)' "$T/cc1.traces" >&2; }
    else
        fail "gcc warn.c: no profile of cc1"; ls "$T/gcc" >&2
    fi
    # without the decoder (libZydis hidden in a mount namespace of this test's own), heapsift
    # cannot read what cc1's operator new calls: the line says so, not that calls bypass it
    Z=$(readlink -f /usr/lib/x86_64-linux-gnu/libZydis.so.4.0 2>/dev/null || true)
    if [ -n "$Z" ] && [ -f "$Z" ] && unshare -m true 2>/dev/null; then
        unshare -m sh -c "mount --bind /dev/null '$Z' && cd '$T/gcc' && HEAPSIFT_OUT='$T/gcc/blind.%p.pb.gz' LD_PRELOAD='$LIB' gcc -c clean.c -o b.o" \
            >/dev/null 2>"$T/gcc/blind.err" || { fail "gcc without the decoder: status $?"; show "$T/gcc/blind.err"; }
        cat "$T"/gcc/blind.*.pb.gz >/dev/null 2>&1 || fail "gcc without the decoder: no profile"
        for f in "$T"/gcc/blind.*.pb.gz; do comments "$f"; done >"$T/gcc/blind.comments" 2>/dev/null
        grep -qF "calls may bypass heapsift: operator new/delete defined by cc1" "$T/gcc/blind.comments" &&
            grep -qF "whether their code calls what reaches heapsift is not known" "$T/gcc/blind.comments" &&
            ! grep -q 'calls bypass heapsift' "$T/gcc/blind.comments" ||
            { fail "gcc without the decoder: the line does not say it cannot tell"; show "$T/gcc/blind.comments"; }
    else
        echo "reach_true: the no-decoder case skipped (needs unshare -m, root)"
    fi
    # heapsift run over gcc: the library says nothing itself, run's summary says the cc1
    # note once, and gcc's own warning is still there
    "$CLI" run -q -o "$T/gcc/run.%p.pb.gz" -- sh -c "cd '$T/gcc' && gcc -Wall -c warn.c -o b.o" >/dev/null 2>"$T/gcc/run.err" ||
        { fail "heapsift run gcc: status $?"; show "$T/gcc/run.err"; }
    n=$(grep -c 'reach: operator new/delete of cc1 reach heapsift through the malloc, free they call' "$T/gcc/run.err" || true)
    [ "$n" = 1 ] && grep -q '^heapsift: reach: operator new/delete of cc1 .* (/' "$T/gcc/run.err" &&
        grep -q 'unused variable' "$T/gcc/run.err" || { fail "heapsift run gcc: $n cc1 notes, want 1 from the summary"; show "$T/gcc/run.err"; }
else
    fail "no gcc (scripts/setup.sh installs it)"
fi

# --- programs of our own, rate 1 ------------------------------------------------------------
cat >"$T/new.cc" <<'CC'
#include <cstdio>
#include <cstdlib>
#include <new>
#ifdef ARENA
alignas(16) static char arena[1 << 20];
static std::size_t used;
__attribute__((noinline)) void *operator new(std::size_t n)
{
    void *p = arena + used;
    used += (n + 15) & ~static_cast<std::size_t>(15);
    return p;
}
void operator delete(void *) noexcept {}
void operator delete(void *, std::size_t) noexcept {}
#else
__attribute__((noinline)) void *operator new(std::size_t n)
{
    void *p = std::malloc(n ? n : 1);
    if (!p)
        throw std::bad_alloc();
    return p;
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
#endif
struct Big {
    char b[4096];
};
static void *volatile keep[64];
__attribute__((noinline)) void *site_new(void) { return new Big; }
__attribute__((noinline)) void *site_malloc(void) { return std::malloc(1000); }
int main()
{
    for (int i = 0; i < 10; i++)
        keep[i] = site_new();
    for (int i = 0; i < 5; i++)
        keep[10 + i] = site_malloc();
    std::puts("ok");
    return 0;
}
CC
# prog NAME: runs $T/NAME at rate 1 into $T/NAME.pb.gz; it prints ok, nothing on stderr
prog() {
    st=0
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$1.pb.gz" LD_PRELOAD="$LIB" "$T/$1" >"$T/$1.out" 2>"$T/$1.err" || st=$?
    [ $st = 0 ] && [ "$(cat "$T/$1.out")" = ok ] && [ ! -s "$T/$1.err" ] ||
        { fail "$1: status $st, output '$(cat "$T/$1.out")'"; show "$T/$1.err"; }
}
if c++ -O1 -g -rdynamic -o "$T/newmalloc" "$T/new.cc" 2>"$T/cc.err" &&
    c++ -O1 -g -rdynamic -DARENA -o "$T/newarena" "$T/new.cc" 2>>"$T/cc.err"; then
    prog newmalloc
    has newmalloc "$T/newmalloc.pb.gz" "operator new/delete of newmalloc reach heapsift through the malloc, free they call"
    ! comments "$T/newmalloc.pb.gz" | grep -q bypass || fail "newmalloc: a reach line says calls bypass heapsift"
    site newmalloc "$T/newmalloc.pb.gz" site_new 40960
    site newmalloc "$T/newmalloc.pb.gz" site_malloc 5000
    cp "$T/newmalloc" "$T/newmalloc_off"
    HEAPSIFT_HOOKS=off prog newmalloc_off
    has "newmalloc, hooks off" "$T/newmalloc_off.pb.gz" "operator new/delete of newmalloc_off reach heapsift through the malloc, free they call"
    site "newmalloc, hooks off" "$T/newmalloc_off.pb.gz" site_new 40960

    prog newarena
    has newarena "$T/newarena.pb.gz" "calls bypass heapsift: operator new/delete defined by newarena"
    ! comments "$T/newarena.pb.gz" | grep -q 'operator new/delete of newarena reach heapsift' ||
        fail "newarena: the line says its operator new reaches heapsift"
    site newarena "$T/newarena.pb.gz" site_new 0
    site newarena "$T/newarena.pb.gz" site_malloc 5000
else
    fail "c++ failed"; show "$T/cc.err"
fi

# pvalloc from a library preloaded ahead of heapsift
cat >"$T/pv.c" <<'C'
#include <stdlib.h>
#ifdef VIA
void *pvalloc(size_t n) { return malloc(n); }
#else
static char arena[1 << 20] __attribute__((aligned(4096)));
static size_t used;
void *pvalloc(size_t n)
{
    void *p = arena + used;
    used += (n + 4095) & ~(size_t)4095;
    return p;
}
#endif
C
cat >"$T/pvmain.c" <<'C'
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
static void *volatile keep[16];
__attribute__((noinline)) static void site_pv(void) { keep[0] = pvalloc(8192); }
__attribute__((noinline)) static void site_malloc(void) { keep[1] = malloc(3000); }
int main(int argc, char **argv)
{
    if (argc > 1)
        site_pv();
    site_malloc();
    puts("ok");
    return 0;
}
C
# pv NAME LIB ARGS: pvmain (calling pvalloc with an argument) with LIB ahead of heapsift
pv() {
    st=0
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$1.pb.gz" LD_PRELOAD="$2:$LIB" "$T/pvmain" $3 >"$T/$1.out" 2>"$T/$1.err" || st=$?
    [ $st = 0 ] && [ "$(cat "$T/$1.out")" = ok ] && [ ! -s "$T/$1.err" ] ||
        { fail "$1: status $st, output '$(cat "$T/$1.out")'"; show "$T/$1.err"; }
}
if cc -O1 -g -shared -fPIC -o "$T/libpv.so" "$T/pv.c" 2>"$T/cc.err" &&
    cc -O1 -g -shared -fPIC -DVIA -o "$T/libpvvia.so" "$T/pv.c" 2>>"$T/cc.err" &&
    cc -O1 -g -rdynamic -o "$T/pvmain" "$T/pvmain.c" 2>>"$T/cc.err"; then
    pv pv_called "$T/libpv.so" call
    has pv_called "$T/pv_called.pb.gz" "calls bypass heapsift: pvalloc defined by libpv.so"
    site pv_called "$T/pv_called.pb.gz" site_pv 0
    site pv_called "$T/pv_called.pb.gz" site_malloc 3000
    # the same program, the same library: pvmain imports pvalloc whether it calls it or
    # not, so that sentence stays; a program that does not import it is true's other side
    printf '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n' >"$T/nopv.c"
    cc -O1 -o "$T/nopv" "$T/nopv.c"
    st=0
    HEAPSIFT_OUT="$T/pv_uncalled.pb.gz" LD_PRELOAD="$T/libpv.so:$LIB" "$T/nopv" >"$T/nopv.out" 2>"$T/nopv.err" || st=$?
    [ $st = 0 ] && [ ! -s "$T/nopv.err" ] || { fail "nopv: status $st"; show "$T/nopv.err"; }
    has pv_uncalled "$T/pv_uncalled.pb.gz" "not hooked, but bound by no call of any object loaded: pvalloc of libpv.so"
    ! comments "$T/pv_uncalled.pb.gz" | grep -q bypass || fail "pv_uncalled: a reach line says calls bypass heapsift"
    pv pv_via "$T/libpvvia.so" call
    has pv_via "$T/pv_via.pb.gz" "pvalloc of libpvvia.so reach heapsift through the malloc they call"
    ! comments "$T/pv_via.pb.gz" | grep -q bypass || fail "pv_via: a reach line says calls bypass heapsift"
    site pv_via "$T/pv_via.pb.gz" site_pv 8192
    site pv_via "$T/pv_via.pb.gz" site_malloc 3000
else
    fail "cc failed"; show "$T/cc.err"
fi

# an allocator API function heapsift has no hook for (mimalloc's mi_new, in the
# executable), over the hooked mi_malloc (reaches heapsift) or over an arena (bypasses it)
cat >"$T/mi.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
__attribute__((noinline)) void *mi_malloc(size_t n) { return malloc(n); }
__attribute__((noinline)) void mi_free(void *p) { free(p); }
#ifdef ARENA
static char arena[1 << 16] __attribute__((aligned(16)));
static size_t used;
__attribute__((noinline)) void *mi_new(size_t n)
{
    void *p = arena + used;
    used += (n + 15) & ~(size_t)15;
    return p;
}
#else
__attribute__((noinline)) void *mi_new(size_t n)
{
    void *p = mi_malloc(n);
    if (!p)
        abort();
    return p;
}
#endif
static void *volatile keep[8];
__attribute__((noinline)) static void site_new(void)
{
    for (int i = 0; i < 4; i++)
        keep[i] = mi_new(5000);
}
__attribute__((noinline)) static void site_malloc(void) { keep[4] = mi_malloc(3000); }
int main(void)
{
    site_new();
    site_malloc();
    puts("ok");
    return 0;
}
C
if cc -O1 -g -o "$T/mivia" "$T/mi.c" 2>"$T/cc.err" && cc -O1 -g -DARENA -o "$T/miarena" "$T/mi.c" 2>>"$T/cc.err"; then
    prog mivia
    has mivia "$T/mivia.pb.gz" "mi_new of mivia reach heapsift through the function hooked in place they call"
    ! comments "$T/mivia.pb.gz" | grep -q bypass || fail "mivia: a reach line says calls bypass heapsift"
    site mivia "$T/mivia.pb.gz" site_new 20000
    site mivia "$T/mivia.pb.gz" site_malloc 3000
    prog miarena
    has miarena "$T/miarena.pb.gz" "calls bypass heapsift: mi_new (defined by miarena; heapsift has no hook for them)"
    site miarena "$T/miarena.pb.gz" site_new 0
    site miarena "$T/miarena.pb.gz" site_malloc 3000
else
    fail "cc failed"; show "$T/cc.err"
fi

# a Rust #[global_allocator] over System, hooks off: not hooked, yet its calls reach the
# malloc heapsift interposes (before: "calls bypass heapsift ... not in its profiles")
RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] || [ ! -x "$HOME/.cargo/bin/rustc" ] || RUSTC=$HOME/.cargo/bin/rustc
if [ -n "$RUSTC" ]; then
    cat >"$T/rsys.rs" <<'RS'
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
struct Counting;
static N: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 { N.fetch_add(1, Ordering::Relaxed); System.alloc(l) }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) { System.dealloc(p, l) }
}
#[global_allocator]
static A: Counting = Counting;
#[inline(never)]
fn hold_site() -> Vec<Vec<u8>> { (0..10).map(|i| vec![i as u8; 100000]).collect() }
fn main() {
    let v = hold_site();
    println!("{}", v.len());
}
RS
    if "$RUSTC" -O -g -o "$T/rsys" "$T/rsys.rs" 2>"$T/rs.err"; then
        st=0
        HEAPSIFT_HOOKS=off HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/rsys.pb.gz" LD_PRELOAD="$LIB" "$T/rsys" >"$T/rsys.out" 2>"$T/rsys.err" || st=$?
        [ $st = 0 ] && [ "$(cat "$T/rsys.out")" = 10 ] && [ ! -s "$T/rsys.err" ] || { fail "rsys: status $st"; show "$T/rsys.err"; }
        has rsys "$T/rsys.pb.gz" "reach: __rust_alloc (a Rust #[global_allocator] of the program's own) reach heapsift through the malloc they call"
        ! comments "$T/rsys.pb.gz" | grep -q bypass || fail "rsys: a reach line says calls bypass heapsift"
        got=$(gotop "$T/rsys.pb.gz" alloc_space | table | awk -F '\t' 'index($1, "rsys::hold_site") == 1 && $3 + 0 > m { m = $3 + 0 } END { print m + 0 }')
        [ "$got" = 1000000 ] || { fail "rsys: hold_site holds $got B allocated, want 1000000"; gotop "$T/rsys.pb.gz" alloc_space | head -15 >&2; }
    else
        fail "rustc failed"; show "$T/rs.err"
    fi
else
    fail "no rustc (scripts/setup.sh installs Debian's rustc when none is on PATH)"
fi

# --- an empty profile says so ---------------------------------------------------------------
st=0
HEAPSIFT_HOOKS=off HEAPSIFT_OUT="$T/empty.pb.gz" LD_PRELOAD="$LIB" "$BUILD/programs/own_malloc" 100 >"$T/empty.out" 2>"$T/empty.err" || st=$?
[ $st = 0 ] && [ ! -s "$T/empty.err" ] || { fail "empty: status $st or stderr"; show "$T/empty.err"; }
want="reach: empty profile: no allocation call reached heapsift in this process (the reach line says what bypasses it)"
has empty "$T/empty.pb.gz" "$want"
"$CLI" stats "$T/empty.pb.gz" 2>&1 | grep -qF "$want" || { fail "empty: not in heapsift stats"; "$CLI" stats "$T/empty.pb.gz" >&2; }
for q in "" -q; do
    st=0
    "$CLI" run $q --hooks off -o "$T/runempty.pb.gz" -- "$BUILD/programs/own_malloc" 100 >/dev/null 2>"$T/run.err" || st=$?
    [ $st = 0 ] && grep -qF "heapsift: $want ($T/runempty.pb.gz)" "$T/run.err" &&
        grep -qF "heapsift: reach: calls bypass heapsift: free, malloc, calloc, realloc defined by own_malloc" "$T/run.err" ||
        { fail "heapsift run $q: status $st, its summary does not say the profile is empty and why"; show "$T/run.err"; }
done

[ "$FAILS" -eq 0 ] && echo "reach_true: ok"
exit $((FAILS > 0))

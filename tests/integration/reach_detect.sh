#!/bin/sh
# reach_detect: a program whose allocation calls bypass heapsift's interposition says so in its
# profile's comments and in `heapsift top` and `stats` (reach.c), and on stderr only when
# HEAPSIFT_VERBOSE=1: without it, the program's stderr is its own; one whose calls all pass
# through heapsift says nothing. Each case runs twice: with HEAPSIFT_HOOKS=off the line says
# what bypasses heapsift; by default it says what was hooked in place (reach_hooks.sh checks
# the counts through the hooks). The cases:
#  - an executable defining malloc/free itself (tests/programs/own_malloc.c);
#  - a C program linked statically against Debian's libjemalloc_pic.a, and a C++ one
#    against libtcmalloc_minimal.a;
#  - a Rust program with a #[global_allocator] of its own (built here with rustc);
#  - no message, verbose or not: tests/programs/sites, python3, and jemalloc preloaded
#    after heapsift.
# Each program's output and exit status are unchanged.
# usage: reach_detect.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" reach_detect
hs_need_go
hs_need_built "$BUILD/programs/own_malloc"

# line NAME PREFIX WANT CMD...: CMD under heapsift says PREFIX ... WANT in the profile, in
# top and in stats, and nothing on stderr (with LOUD=1: HEAPSIFT_VERBOSE=1, and the line
# once on stderr)
line() {
    name=$1 prefix=$2 want=$3
    shift 3
    rm -f "$T/p.pb.gz"
    st=0
    HEAPSIFT_VERBOSE=${LOUD:-0} HEAPSIFT_OUT="$T/p.pb.gz" LD_PRELOAD="$LIB" "$@" >"$T/out" 2>"$T/err" || st=$?
    [ "$st" -eq 0 ] || { fail "$name: status $st"; show "$T/err"; }
    n=$(grep -c "^heapsift: reach: $prefix" "$T/err" || true)
    if [ "${LOUD:-0}" = 1 ]; then
        [ "$n" -eq 1 ] || { fail "$name: $n '$prefix' lines on stderr, want 1"; show "$T/err"; }
        grep -q "$want" "$T/err" || { fail "$name: the line does not say '$want'"; show "$T/err"; }
    else
        ! grep -q 'heapsift' "$T/err" || { fail "$name: heapsift wrote on stderr unasked"; show "$T/err"; }
    fi
    go tool pprof -comments "$T/p.pb.gz" 2>/dev/null | grep -q "^reach: $prefix.*$want" ||
        { fail "$name: not in the profile's comments (go tool pprof -comments)"; go tool pprof -comments "$T/p.pb.gz" >&2; }
    "$CLI" top "$T/p.pb.gz" >"$T/top" 2>&1 || fail "$name: heapsift top failed"
    grep -q "^reach: $prefix.*$want" "$T/top" || { fail "$name: not in top's header"; show "$T/top" 8; }
    "$CLI" stats "$T/p.pb.gz" >"$T/stats" 2>&1 || fail "$name: heapsift stats failed"
    grep -q "^reach: $prefix.*$want" "$T/stats" || { fail "$name: not in stats"; show "$T/stats"; }
}

# bypassed NAME WANT HOOKED CMD...: with HEAPSIFT_HOOKS=off the line says WANT bypasses
# heapsift; by default, that HOOKED was hooked in place
bypassed() {
    name=$1 want=$2 hooked=$3
    shift 3
    HEAPSIFT_HOOKS=off line "$name" "calls bypass heapsift" "$want.*(HEAPSIFT_HOOKS=off)" "$@"
    out=$(cat "$T/out")
    line "$name (hooked)" "hooked in place" "$hooked" "$@"
    [ "$(cat "$T/out")" = "$out" ] || fail "$name: the output differs with hooks"
}

bypassed own_malloc "free, malloc, calloc, realloc defined by own_malloc" \
    "free, malloc, calloc, realloc (defined by own_malloc)" "$BUILD/programs/own_malloc" 1000
grep -qx 'done 1000' "$T/out" || fail "own_malloc: output changed: $(cat "$T/out")"
LOUD=1 line "own_malloc (verbose)" "hooked in place" "free, malloc, calloc, realloc (defined by own_malloc)" \
    "$BUILD/programs/own_malloc" 1000

printf '#include <stdlib.h>\nint main(void) { void *p = malloc(100); free(p); return 0; }\n' >"$T/s.c"
if cc -o "$T/sje" "$T/s.c" -Wl,-Bstatic -l:libjemalloc_pic.a -Wl,-Bdynamic -lpthread -lm -ldl 2>"$T/cc.err"; then
    bypassed "static jemalloc" "defined by sje" "(defined by sje)" "$T/sje"
else
    fail "cannot link libjemalloc_pic.a (libjemalloc-dev)"; show "$T/cc.err"
fi
if c++ -x c++ -o "$T/stc" "$T/s.c" -Wl,-Bstatic -l:libtcmalloc_minimal.a -Wl,-Bdynamic -lpthread 2>"$T/cc.err"; then
    bypassed "static tcmalloc" "defined by stc" "operator new/delete (defined by stc)" "$T/stc"
else
    fail "cannot link libtcmalloc_minimal.a (libgoogle-perftools-dev)"; show "$T/cc.err"
fi

RUSTC=$(command -v rustc || true)
[ -n "$RUSTC" ] || [ ! -x "$HOME/.cargo/bin/rustc" ] || RUSTC=$HOME/.cargo/bin/rustc
if [ -n "$RUSTC" ]; then
    cat >"$T/ga.rs" <<'RS'
use std::alloc::{GlobalAlloc, Layout};
use std::sync::atomic::{AtomicUsize, Ordering};
struct Bump;
static mut ARENA: [u8; 1 << 24] = [0; 1 << 24];
static NEXT: AtomicUsize = AtomicUsize::new(0);
unsafe impl GlobalAlloc for Bump {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let start = (NEXT.fetch_add(l.size() + l.align(), Ordering::Relaxed) + l.align() - 1) & !(l.align() - 1);
        if start + l.size() > 1 << 24 { return std::ptr::null_mut(); }
        std::ptr::addr_of_mut!(ARENA).cast::<u8>().add(start)
    }
    unsafe fn dealloc(&self, _p: *mut u8, _l: Layout) {}
}
#[global_allocator]
static A: Bump = Bump;
fn main() {
    let v: Vec<Vec<u8>> = (0..100).map(|i| vec![i as u8; 1000]).collect();
    println!("{}", v.len());
}
RS
    if "$RUSTC" -O -o "$T/ga" "$T/ga.rs" 2>"$T/rs.err"; then
        bypassed "Rust global allocator" "__rust_alloc (a Rust #\[global_allocator\] of the program's own)" \
            "__rust_alloc (a Rust #\[global_allocator\] of the program's own)" "$T/ga"
        grep -qx 100 "$T/out" || fail "Rust program: output changed"
    else
        fail "rustc failed"; show "$T/rs.err"
    fi
else
    fail "no rustc (scripts/setup.sh installs Debian's rustc when none is on PATH)"
fi

# silent ones
# (/usr/bin/python3 is not a PIE and takes malloc's address: dlsym finds its PLT slot,
# which is not a definition)
for c in "$BUILD/programs/sites" "python3 -c pass" "/usr/bin/python3 -c pass" "env LD_PRELOAD=$LIB:/usr/lib/x86_64-linux-gnu/libjemalloc.so.2 true"; do
    # shellcheck disable=SC2086
    HEAPSIFT_VERBOSE=1 HEAPSIFT_OUT="$T/q.pb.gz" LD_PRELOAD="$LIB" $c >/dev/null 2>"$T/err" || true
    ! grep -q 'reach:' "$T/err" || { fail "'$c': a reach line where nothing bypasses"; show "$T/err"; }
done

[ "$FAILS" -eq 0 ] && echo "reach_detect: ok"
exit $((FAILS > 0))

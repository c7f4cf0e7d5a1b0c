#!/bin/sh
# rust_rustc: the Rust compiler itself, the largest Rust program at hand, profiled as a
# user would profile a Rust service: under `heapsift run`, and with `heapsift attach` while
# it compiles (issue 38). rustup's rustc links jemalloc unprefixed into its executable
# (malloc, free, calloc, realloc are its own: hooked in place), and LLVM's operator new
# reaches that malloc. rustc compiles tests/programs/rust/cargo/rustc_hold/user.rs, whose
# first item is a proc macro (hold_macro.rs) that, when HS_RUSTC_HOLD is set, says rustc's
# pid and blocks on a FIFO: the attach happens there, deterministically, the FIFO is then
# opened and closed, and rustc goes on (type checking, MIR, LLVM at -O, linking) with
# heapsift attached; its exit profile is written at its exit. Both profiles are sampled
# (every sample, at any rate, must satisfy what is checked):
#  - no row of go tool pprof -top (-symbolize=none: the profile's own names) or heapsift
#    top holds a mangled Rust or C++ name, and rustc's own functions are there by their
#    Rust paths (rustc_*::...);
#  - no allocator frame (operator new, malloc & co, __rust_alloc & co, alloc::alloc,
#    alloc::raw_vec, std::__new_allocator, ...) is a flat leaf, in either reader, nor the
#    leaf of any sample (-traces);
#  - the compiler's output works, unchanged.
# x86-64 only (exit 77 elsewhere). usage: rust_rustc.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" rust_rustc
SRC=$(cd "$2" && pwd)
H=$SRC/tests/programs/rust/cargo/rustc_hold
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: in-place hooks are x86-64 only"; exit 77; }
hs_need_go
hs_need_built "$LIB" "$CLI"
[ -x "${HOME:-/root}/.cargo/bin/rustc" ] && PATH=${HOME:-/root}/.cargo/bin:$PATH
command -v rustc >/dev/null 2>&1 ||
    { echo "FAIL: no rustc; run 'make setup' (sh scripts/setup.sh installs Debian's rustc)" >&2; exit 1; }
# the compiler itself, not rustup's proxy in front of it
RUSTC=$(rustc --print sysroot)/bin/rustc
[ -x "$RUSTC" ] || { echo "FAIL: $RUSTC: no such compiler" >&2; exit 1; }
RATE=65536

. "$(dirname "$0")/../lib/allocrx.sh"
MANGLED_RX='^(_ZN?[0-9]|_ZN|_R[NCMXYI])'

"$RUSTC" --edition 2018 --crate-type proc-macro -o "$T/libhold_macro.so" "$H/hold_macro.rs" 2>"$T/macro.err" ||
    { echo "FAIL: rustc hold_macro.rs" >&2; show "$T/macro.err"; exit 1; }
# compile ARGS...: rustc -O on user.rs, the executable at $T/user
compile() {
    "$@" "$RUSTC" --edition 2018 -O --extern hold_macro="$T/libhold_macro.so" -o "$T/user" "$H/user.rs"
}
"$RUSTC" --edition 2018 -O --extern hold_macro="$T/libhold_macro.so" -o "$T/user.ref" "$H/user.rs" 2>"$T/ref.err" ||
    { echo "FAIL: rustc user.rs" >&2; show "$T/ref.err"; exit 1; }
"$T/user.ref" >"$T/ref.out"

# check LABEL PROFILE: names and leaves of a rustc profile, and the executable it built
check() {
    l=$1 f=$2
    "$T/user" | cmp -s - "$T/ref.out" || fail "$l: the compiled program's output differs"
    for st in inuse_space alloc_space; do
        gotop "$f" $st >"$T/go" 2>&1 || { fail "$l: go tool pprof $st"; show "$T/go"; continue; }
        table <"$T/go" >"$T/$l.go.$st"
        hstop "$f" $st >"$T/hs" 2>&1 || { fail "$l: heapsift top $st"; show "$T/hs"; continue; }
        table <"$T/hs" >"$T/$l.hs.$st"
        for r in go hs; do
            tab=$T/$l.$r.$st
            # what is live at rustc's exit may be too little to hold a sample at this rate;
            # what it allocated (a gigabyte and more) is not
            [ -s "$tab" ] || [ $st = inuse_space ] || fail "$l: empty $st table ($r)"
            [ -s "$tab" ] || continue
            awk -F '\t' -v rx="$ALLOC_RX" '$1 != "<dropped>" && $2 + 0 != 0 && $1 ~ rx' "$tab" >"$T/leaves"
            [ ! -s "$T/leaves" ] || { fail "$l: allocator frames as flat leaves ($r, $st)"; show "$T/leaves" 8; }
            cut -f1 "$tab" | grep -E "$MANGLED_RX" >"$T/mangled" &&
                { fail "$l: $(wc -l <"$T/mangled") mangled names in the $st table ($r)"; show "$T/mangled" 5; }
            cut -f1 "$tab" | grep -Eq '^<?rustc_[a-z_]+::' ||
                { fail "$l: no rustc_*:: function in the $st table ($r)"; show "$tab" 10; }
        done
    done
    traces "$f" >"$T/$l.traces" 2>/dev/null || fail "$l: go tool pprof -traces"
    awk -F ';' -v rx="$ALLOC_RX" '$1 ~ rx { print; n++ } END { exit n > 0 }' "$T/$l.traces" >"$T/bad" ||
        { fail "$l: $(wc -l <"$T/bad") samples whose leaf is an allocator frame"; show "$T/bad" 5; }
}

# --- heapsift run ---------------------------------------------------------------------------
st=0
compile "$CLI" run --no-children --rate $RATE -o "$T/run.pb.gz" -- >"$T/run.out" 2>"$T/run.err" || st=$?
[ $st = 0 ] || { fail "rustc under heapsift run: status $st"; show "$T/run.err"; }
grep -q '^heapsift: reach: hooked in place: .*(defined by rustc)' "$T/run.err" ||
    { fail "run: the reach line does not say rustc's own malloc is hooked"; show "$T/run.err"; }
[ $st = 0 ] && check run "$T/run.pb.gz"

# --- heapsift attach, while hold!() holds rustc ---------------------------------------------
rm -f "$T/user"
mkdir -p "$T/h"
mkfifo "$T/h/fifo"
(
    set +e
    HS_RUSTC_HOLD=$T/h compile >"$T/att.out" 2>"$T/att.rustc.err"
    echo $? >"$T/h/status"
) &
if hs_until 120 "rustc reaching hold!()" "[ -s '$T/h/ready' ]"; then
    PID=$(cat "$T/h/ready")
    trap 'kill -9 "$PID" 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
    st=0
    "$CLI" attach --rate $RATE -o "$T/att.pb.gz" "$PID" 2>"$T/att.err" || st=$?
    [ $st = 0 ] || { fail "attach to rustc: status $st"; show "$T/att.err"; }
    grep -q "attached to process $PID" "$T/att.err" || { fail "attach said nothing"; show "$T/att.err"; }
    grep -q 'reach: .*hooked in place: .*(defined by rustc)' "$T/att.err" ||
        { fail "attach: the reach line does not say rustc's own malloc is hooked"; show "$T/att.err"; }
    # opens the FIFO (hold!() reads to its end) and closes it; a rustc gone meanwhile
    # leaves no reader, hence the timeout
    timeout 60 sh -c ": >\"$T/h/fifo\"" || fail "attach: rustc never read the FIFO"
    hs_until 600 "rustc's exit" "[ -s '$T/h/status' ]" || kill -9 "$PID" 2>/dev/null || true
    [ "$(cat "$T/h/status" 2>/dev/null)" = 0 ] || { fail "attached rustc: status $(cat "$T/h/status" 2>/dev/null)"; show "$T/att.rustc.err"; }
    [ -s "$T/att.pb.gz" ] || fail "attach: no exit profile at $T/att.pb.gz"
    if [ -s "$T/att.pb.gz" ]; then
        "$CLI" top "$T/att.pb.gz" | sed '/^Type:/q' | grep -q '^attach: attached at' ||
            fail "attach: heapsift top's header has no 'attach: attached at' line"
        check attach "$T/att.pb.gz"
    fi
else
    show "$T/att.rustc.err"
fi

[ "$FAILS" -eq 0 ] && echo "rust_rustc: ok"
exit $((FAILS > 0))

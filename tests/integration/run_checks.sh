#!/bin/sh
# run_checks: `heapsift run` checks what it can before it starts the program, which then
# never starts (a marker file it would create stays absent):
#  - a bad value (--rate abc, --depth 0, --unwind bogus): exit 1, one line on stderr
#    naming the variable (the library's own reading of it, through HEAPSIFT_PROBE);
#  - an output directory that does not exist or is not writable (-o, --http-portfile):
#    exit 3 and one line naming it;
#  - a heapsift copied away from its library: exit 3 and one line saying --lib;
#  - a fully static program, static PIE too (LD_PRELOAD cannot enter it): exit 3, one line;
#  - and a good command line still runs the program and writes its profile.
# usage: run_checks.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" run_checks
mkdir -p "$T/ro"
chmod 0555 "$T/ro"

# refused WANT LABEL ARGS...: heapsift ARGS sh -c 'touch marker' exits WANT, prints one
# stderr line, and the program did not run
refused() {
    want=$1 label=$2
    shift 2
    rm -f "$T/marker"
    st=0
    "$@" -- sh -c "touch '$T/marker'" >"$T/out" 2>"$T/err" || st=$?
    [ "$st" -eq "$want" ] || fail "$label: status $st, want $want"
    [ ! -e "$T/marker" ] || fail "$label: the program was started"
    n=$(grep -vc '^ERROR: ld.so' "$T/err" || true)
    [ "$n" -eq 1 ] || { fail "$label: $n lines on stderr, want 1"; show "$T/err"; }
}

refused 1 "--rate abc" "$CLI" run --rate abc
grep -q 'HEAPSIFT_RATE=abc' "$T/err" || fail "--rate abc: the line does not name HEAPSIFT_RATE"
refused 1 "--depth 0" "$CLI" run --depth 0
refused 1 "--unwind bogus" "$CLI" run --unwind bogus
refused 3 "-o in a missing directory" "$CLI" run -o /nonexistent/dir/x.pb.gz
grep -q '/nonexistent/dir' "$T/err" || fail "-o: the line does not name the directory"
if [ "$(id -u)" -ne 0 ]; then
    refused 3 "-o in a read-only directory" "$CLI" run -o "$T/ro/x.pb.gz"
fi
refused 3 "--http-portfile in a missing directory" "$CLI" run --http-portfile /nonexistent/p
cp "$CLI" "$T/moved-heapsift"
refused 3 "a moved heapsift" "$T/moved-heapsift" run
grep -q -- '--lib' "$T/err" || fail "moved heapsift: the line does not say --lib"

printf 'int main(void) { return 0; }\n' >"$T/st.c"
for kind in -static -static-pie; do
    if cc $kind -o "$T/st" "$T/st.c" 2>"$T/cc.err"; then
        st=0
        "$CLI" run -- "$T/st" >"$T/out" 2>"$T/err" || st=$?
        [ "$st" -eq 3 ] && grep -q 'statically linked' "$T/err" ||
            { fail "$kind program: status $st"; show "$T/err"; }
    else
        fail "cc $kind failed (libc6-dev's static libc is needed)"; show "$T/cc.err"
    fi
done

rm -f "$T/marker"
"$CLI" run -q -o "$T/ok.pb.gz" -- sh -c "touch '$T/marker'" || fail "a good run failed"
[ -e "$T/marker" ] || fail "a good run: the program did not run"
"$CLI" run -q -o "$T/ok.pb.gz" -- true || fail "a good run of true failed"
[ -s "$T/ok.pb.gz" ] || fail "a good run: no profile"
"$T/moved-heapsift" run -q --lib "$LIB" -o "$T/lib.pb.gz" -- true || fail "--lib given: failed"

[ "$FAILS" -eq 0 ] && echo "run_checks: ok"
exit $((FAILS > 0))

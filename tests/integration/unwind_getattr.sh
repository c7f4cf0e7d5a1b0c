#!/bin/sh
# unwind_getattr: a thread whose first sampled allocation is the calloc inside
# pthread_getattr_np (which holds the thread's lock), as in every thread Rust's std starts.
# The unwinder found a thread's stack bounds with pthread_getattr_np: called again under
# that lock, it waited forever, and the program hung at HEAPSIFT_RATE=1 every time.
# tests/programs/getattr_thread runs 8 such threads under `heapsift run --rate 1`: it must
# end (within 60 s) with its output, and each thread's 4000-byte block kept must be in the
# profile under getattr_site, through go tool pprof and heapsift top, with its caller.
# usage: unwind_getattr.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" unwind_getattr
hs_need_go
PROG=$BUILD/programs/getattr_thread
hs_need_built "$PROG" "$CLI"
rc=0
timeout 60 "$CLI" run --rate 1 -o "$T/p.pb.gz" -- "$PROG" >"$T/out" 2>"$T/err" || rc=$?
[ "$rc" != 124 ] || fail "the program hung (killed after 60 s)"
[ "$rc" = 0 ] || { fail "status $rc"; show "$T/err"; }
grep -qx 'getattr_thread: done' "$T/out" || { fail "its output changed"; show "$T/out"; }
if [ "$rc" = 0 ]; then
    gotop "$T/p.pb.gz" inuse_space | table >"$T/go.tab"
    hstop "$T/p.pb.gz" inuse_space | table >"$T/hs.tab"
    for tab in go hs; do
        v=$(awk -F'\t' '$1 ~ /^getattr_site/ { print $3 }' "$T/$tab.tab")
        [ "$v" = 32000 ] || { fail "$tab: getattr_site holds '$v' bytes, want 32000"; show "$T/$tab.tab"; }
        v=$(awk -F'\t' '$1 ~ /^getattr_run/ { print $3 }' "$T/$tab.tab")
        [ -n "$v" ] && [ "$v" -ge 32000 ] ||
            { fail "$tab: getattr_run's cum is '$v', want at least 32000 (the stack above the site)"; show "$T/$tab.tab"; }
    done
fi
[ "$FAILS" -eq 0 ] && echo "unwind_getattr: 8 threads sampled inside pthread_getattr_np, none hung"
exit $((FAILS > 0))

#!/bin/sh
# attach_cxx: `heapsift attach --rate 1` into a running C++ program (tests/programs/
# attach_cxx.cc), whose operator new and delete are libstdc++'s: they call malloc and free,
# which the attach hooks, so every block is counted once. Once with the entry points
# patched in place (--hooks auto), once through the import slots (--hooks got): each site's
# alloc and inuse figures equal the program's own (go tool pprof and heapsift top), the
# reach line says operator new/delete reach heapsift through the malloc and free they call
# (read from their code: reach_via.c; not that they bypass it), and the program's output and exit status are unchanged.
# usage: attach_cxx.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_cxx
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
PROG=$BUILD/programs/attach_cxx
hs_need_built "$LIB" "$CLI" "$PROG"
"$PROG" "$T" --expect >"$T/expect"

for mode in auto got; do
    rm -rf "$T/d" "$T/out" "$T/status"
    mkdir -p "$T/d"
    ( set +e; "$PROG" "$T/d" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
    hs_until 30 "$mode: attach_cxx ready" "grep -q '^ready\$' '$T/out' 2>/dev/null" || { show "$T/err"; break; }
    TPID=$(pgrep -f "attach_cxx $T/d" | head -1)
    trap 'kill -9 "$TPID" 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
    "$CLI" attach --hooks $mode --rate 1 -o "$T/$mode.pb.gz" "$TPID" 2>"$T/a.err" ||
        { fail "$mode: attach: status $?"; show "$T/a.err"; }
    grep -q 'operator new/delete of libstdc++\.so\.6 reach heapsift through the malloc, free[a-z_, ]* they call' "$T/a.err" ||
        { fail "$mode: the reach line does not say libstdc++'s operator new reaches heapsift"; show "$T/a.err"; }
    grep -q 'bypass heapsift' "$T/a.err" && { fail "$mode: the reach line says something bypasses heapsift"; show "$T/a.err"; }
    : >"$T/d/go"
    hs_until 30 "$mode: the round's end" "grep -q '^done\$' '$T/out'" || true
    "$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || { fail "$mode: detach: status $?"; show "$T/d.err"; }
    : >"$T/d/end"
    hs_until 30 "$mode: attach_cxx's exit" '[ -s "$T/status" ]' || true
    [ "$(cat "$T/status")" = 0 ] || fail "$mode: the program's exit status changed: $(cat "$T/status")"
    printf 'ready\ndone\nbye\n' | cmp -s - "$T/out" || { fail "$mode: the program's output changed"; show "$T/out"; }
    [ -s "$T/$mode.pb.gz" ] && at_check_profile "$T/$mode.pb.gz" "$mode"
done
[ "$FAILS" -eq 0 ] && echo "attach_cxx: ok"
exit $((FAILS > 0))

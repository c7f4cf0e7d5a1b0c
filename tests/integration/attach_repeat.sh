#!/bin/sh
# attach_repeat: attach and detach 20 times to the same process: every attach succeeds and
# every detach writes its profile; the library is loaded once (the libheapsift mappings of
# /proc/PID/maps do not change after the first attach); a second attach without a detach
# is refused (status 2) and changes nothing; the program's output and status are unchanged.
# usage: attach_repeat.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_repeat
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

at_start
n0=
for k in $(seq 1 20); do
    "$CLI" attach --rate 4096 -o "$T/p$k.pb.gz" "$TPID" 2>"$T/a.err" || { fail "attach $k: status $?"; show "$T/a.err"; break; }
    n=$(at_libs "$TPID")
    [ -n "$n0" ] || n0=$n
    [ "$n" = "$n0" ] || fail "attach $k: $n libheapsift mappings, $n0 after the first"
    if [ "$k" = 1 ]; then
        rc=0; "$CLI" attach -o "$T/x.pb.gz" "$TPID" 2>"$T/x.err" || rc=$?
        [ "$rc" = 2 ] || fail "a second attach without detach: status $rc, not 2"
        grep -q 'attached already' "$T/x.err" || { fail "a second attach: no message"; show "$T/x.err"; }
    fi
    at_round "$k"
    "$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || { fail "detach $k: status $?"; show "$T/d.err"; break; }
    go tool pprof -symbolize=none -top "$T/p$k.pb.gz" >/dev/null 2>&1 || fail "profile $k: go tool pprof cannot read it"
done
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"
[ "$(grep -c '^round .* done$' "$T/out")" = 20 ] || { fail "the target's output changed"; show "$T/out"; }
tail -1 "$T/out" | grep -q '^bye$' || fail "the target did not say bye"
[ "$FAILS" -eq 0 ] && echo "attach_repeat: ok"
exit $((FAILS > 0))

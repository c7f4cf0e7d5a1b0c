#!/bin/sh
# attach_repeat: attach and detach 20 times to the same process: every attach succeeds and
# every detach writes its profile; the library is loaded once (the libheapsift mappings of
# /proc/PID/maps do not change after the first attach); a second attach without a detach
# is refused (status 2) and changes nothing; the program's output and status are unchanged.
# Another library: a process attached with a copy of the library (--lib, another file
# with the same bytes, as a second heapsift install would be) is refused by an attach with
# ours (status 2, naming the copy; a second library would hook over the first), and again
# once the copy's file is removed (as an upgrade replaces it); the detach still finds the
# library it loaded (through /proc/PID/map_files) and writes its profile.
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

# another library: attached with a copy, then refused with ours, before and after the
# copy's file is removed
mkdir -p "$T/other" && cp "$LIB" "$T/other/libheapsift.so.0"
at_start
"$CLI" attach --lib "$T/other/libheapsift.so.0" --rate 4096 -o "$T/o.pb.gz" "$TPID" 2>"$T/a.err" ||
    { fail "another library: attach with the copy: status $?"; show "$T/a.err"; }
n0=$(at_libs "$TPID")
for state in mapped removed; do
    rc=0; "$CLI" attach -o "$T/x.pb.gz" "$TPID" 2>"$T/x.err" || rc=$?
    [ "$rc" = 2 ] || fail "another library ($state): attach with ours: status $rc, not 2"
    grep -q "has another heapsift library loaded, $T/other/libheapsift.so.0.*not $LIB" "$T/x.err" ||
        { fail "another library ($state): no message naming both files"; show "$T/x.err"; }
    [ "$(at_libs "$TPID")" = "$n0" ] || fail "another library ($state): a second library was loaded"
    rm -f "$T/other/libheapsift.so.0"
done
grep -q "(its file since removed or replaced)" "$T/x.err" || { fail "another library: the removal is not said"; show "$T/x.err"; }
at_round 1
"$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || { fail "another library: detach: status $?"; show "$T/d.err"; }
go tool pprof -symbolize=none -top "$T/o.pb.gz" >/dev/null 2>&1 || fail "another library: go tool pprof cannot read its profile"
at_end
[ "$TSTATUS" = 0 ] || fail "another library: the target's exit status changed: $TSTATUS"
[ "$(grep -c '^round .* done$' "$T/out")" = 1 ] || { fail "another library: the target's output changed"; show "$T/out"; }
[ "$FAILS" -eq 0 ] && echo "attach_repeat: ok"
exit $((FAILS > 0))

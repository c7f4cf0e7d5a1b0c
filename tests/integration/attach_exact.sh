#!/bin/sh
# attach_exact: `heapsift attach --rate 1` into a running 5-thread program, for one round of
# known allocations, then `heapsift detach`: the window's alloc and inuse figures of each
# site match the program's own counts exactly (go tool pprof and heapsift top), blocks
# allocated before the attach are absent (their frees pass unnoticed), the header says
# where heapsift's knowledge starts. A second attach reuses the library and sees only its
# own round; a third with --seconds (600, ended by SIGTERM once its round is done, as
# Ctrl-C ends the wait: a short window could close before the round on a loaded machine)
# writes, detaches and sees its round; a fourth with --seconds 1 and no round writes and
# detaches by itself when the time is up. The program's output and exit status are
# unchanged throughout.
# usage: attach_exact.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_exact
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"
"$BUILD/programs/attach_target" "$T" --expect >"$T/expect"

at_start
"$CLI" attach --rate 1 -o "$T/p1.pb.gz" "$TPID" 2>"$T/a1.err" || { fail "attach: status $?"; show "$T/a1.err"; }
grep -q "attached to process $TPID" "$T/a1.err" || { fail "attach said nothing"; show "$T/a1.err"; }
[ "$(at_libs "$TPID")" -gt 0 ] || fail "no libheapsift mapping after attach"
at_round 1
"$CLI" detach "$TPID" >"$T/d1.out" 2>"$T/d1.err" || { fail "detach: status $?"; show "$T/d1.err"; }
grep -q "^heapsift: wrote $T/p1.pb.gz\$" "$T/d1.out" || { fail "detach did not say where the profile went"; show "$T/d1.out"; }
[ -s "$T/p1.pb.gz" ] && at_check_profile "$T/p1.pb.gz" first
n1=$(at_libs "$TPID")

# Re-attach: the loaded library is reused; only the new round is seen.
"$CLI" attach --rate 1 -o "$T/p2.pb.gz" "$TPID" 2>"$T/a2.err" || { fail "re-attach: status $?"; show "$T/a2.err"; }
grep -q 're-attached' "$T/a2.err" || { fail "re-attach did not say it reused the library"; show "$T/a2.err"; }
[ "$(at_libs "$TPID")" = "$n1" ] || fail "re-attach changed the libheapsift mappings ($n1 -> $(at_libs "$TPID"))"
at_round 2
"$CLI" detach "$TPID" >/dev/null 2>"$T/d2.err" || { fail "second detach: status $?"; show "$T/d2.err"; }
[ -s "$T/p2.pb.gz" ] && at_check_profile "$T/p2.pb.gz" second

# --seconds: the round falls inside the window whatever the machine's load, because the
# window ends (SIGTERM: the wait ends, the profile is written) only once the round is done.
"$CLI" attach --rate 1 --seconds 600 -o "$T/p3.pb.gz" "$TPID" >"$T/a3.out" 2>"$T/a3.err" &
CLIPID=$!
hs_until 30 "attach --seconds: attached" "grep -q 'attached to process' '$T/a3.err' 2>/dev/null" || true
at_round 3
kill -TERM $CLIPID
wait $CLIPID || fail "attach --seconds: status $?"
grep -q "^heapsift: wrote $T/p3.pb.gz\$" "$T/a3.out" || { fail "attach --seconds: no profile said"; show "$T/a3.err"; }
[ -s "$T/p3.pb.gz" ] && at_check_profile "$T/p3.pb.gz" seconds
# --seconds 1, no round: when the time is up it writes and detaches by itself; the profile
# has none of the rounds' allocations.
rc=0; timeout 120 "$CLI" attach --rate 1 --seconds 1 -o "$T/p4.pb.gz" "$TPID" >"$T/a4.out" 2>"$T/a4.err" || rc=$?
[ "$rc" = 0 ] || { fail "attach --seconds 1: status $rc"; show "$T/a4.err"; }
grep -q "^heapsift: wrote $T/p4.pb.gz\$" "$T/a4.out" || { fail "attach --seconds 1: no profile said"; show "$T/a4.err"; }
gotop "$T/p4.pb.gz" alloc_objects >"$T/go4" 2>&1 || { fail "attach --seconds 1: go tool pprof"; show "$T/go4"; }
! grep -Eq 'site_(keep|churn)' "$T/go4" || { fail "attach --seconds 1: a round's sites in a window without a round"; show "$T/go4"; }

"$CLI" detach "$TPID" 2>"$T/d4.err" && fail "detach of a detached process: status 0"
grep -q 'not attached' "$T/d4.err" || { fail "detach of a detached process: no message"; show "$T/d4.err"; }

at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"
printf 'ready\nround 1 done\nround 2 done\nround 3 done\nbye\n' | cmp -s - "$T/out" || { fail "the target's output changed"; show "$T/out"; }
[ "$FAILS" -eq 0 ] && echo "attach_exact: ok"
exit $((FAILS > 0))

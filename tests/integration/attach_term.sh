#!/bin/sh
# attach_term: SIGTERM after heapsift detach, and after a second attach. Detached, heapsift
# is inert: it catches none of SIGHUP, SIGINT and SIGTERM it did not before the attach, dies of the signal as it
# would without heapsift (status 143), and writes nothing (a SIGTERM after a detach once wrote an empty exit profile over the
# attach's). Attached again, a SIGTERM writes the exit profile to the second attach's -o,
# marked "attach 2", and the process still dies of the signal.
# usage: attach_term.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_term
. "$(dirname "$0")/../lib/attach.sh"
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

# term: SIGTERM to the target, then its exit status (30 s at most)
term() {
    kill -TERM "$TPID"
    hs_until 30 "the target's end" '[ -s "$T/status" ]' || true
    cat "$T/status" 2>/dev/null || echo none
}

# caught: which of SIGHUP, SIGINT and SIGTERM the process catches (SigCgt of its status)
caught() {
    echo $((0x$(awk '/^SigCgt:/ { print $2 }' "/proc/$TPID/status") & 0x4003))
}

# Detached, then SIGTERM.
at_start
c0=$(caught)
"$CLI" attach --rate 1 -o "$T/p1.pb.gz" "$TPID" 2>"$T/a.err" || { fail "attach: status $?"; show "$T/a.err"; }
at_round 1
"$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || { fail "detach: status $?"; show "$T/d.err"; }
[ "$(caught)" = "$c0" ] || fail "detached: the process catches terminating signals (mask $(caught)), not $c0 as before the attach"
cp "$T/p1.pb.gz" "$T/p1.kept"
before=$(ls "$T" | grep -v "^status\$")
st=$(term)
[ "$st" = 143 ] || fail "detached: the target's status is $st, not 143 (SIGTERM)"
cmp -s "$T/p1.pb.gz" "$T/p1.kept" || fail "detached: a SIGTERM rewrote the detach's profile"
after=$(ls "$T" | grep -v "^status\$")
[ "$before" = "$after" ] || fail "detached: a SIGTERM wrote files: $(echo $after) where there were $(echo $before)"
"$CLI" top --comments "$T/p1.pb.gz" 2>/dev/null | grep -q 'attach 1)' || fail "the detach's profile lost its attach comment"

# Attached a second time, then SIGTERM: the exit profile of that attach.
at_start
"$CLI" attach --rate 1 -o "$T/q1.pb.gz" "$TPID" 2>"$T/a.err" || { fail "attach 1: status $?"; show "$T/a.err"; }
"$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || { fail "detach 1: status $?"; show "$T/d.err"; }
"$CLI" attach --rate 1 -o "$T/q2.pb.gz" "$TPID" 2>"$T/a.err" || { fail "attach 2: status $?"; show "$T/a.err"; }
at_round 1
st=$(term)
[ "$st" = 143 ] || fail "attached again: the target's status is $st, not 143 (SIGTERM)"
[ -s "$T/q2.pb.gz" ] || fail "attached again: no exit profile at SIGTERM"
"$CLI" top --comments "$T/q2.pb.gz" 2>/dev/null | grep -q 'attach 2)' || fail "attached again: the exit profile is not the second attach's"
go tool pprof -symbolize=none -top "$T/q2.pb.gz" >/dev/null 2>&1 || fail "go tool pprof cannot read the exit profile"
[ "$FAILS" -eq 0 ] && echo "attach_term: ok"
exit $((FAILS > 0))

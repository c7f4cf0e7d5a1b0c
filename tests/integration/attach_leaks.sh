#!/bin/sh
# attach_leaks: --leaks on attach. The leak report covers only the blocks allocated since
# the attach, and says so under its header. At detach the command prints it (the report
# of the detach profile, after a reachability scan): at HEAPSIFT_RATE=1, exactly the
# round's site_keep (4 threads x 250 blocks of 100 bytes) and the workers' own calloc
# (4 x 2,000 bytes), "still allocated at detach", and none of site_pre's blocks, made
# before the attach and still live. After a re-attach (the first attach's --leaks still
# applies) the program exits while attached: its exit report on its stderr covers round 2
# only, and its exit status is unchanged (--leaks 1, not error).
# usage: attach_leaks.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_leaks
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

check_report() { # FILE WHEN LABEL
    grep -q "leak report for .*attach_target (pid $TPID): memory still allocated at $2" "$1" ||
        { fail "$3: no report header"; show "$1"; }
    grep -q "note: attach: attached at .*, so this report covers only the blocks allocated since then" "$1" ||
        { fail "$3: the report does not say it covers only blocks since the attach"; show "$1"; }
    grep -q '^heapsift: 100000 bytes in 1000 objects allocated from:' "$1" ||
        { fail "$3: site_keep's 100000 bytes in 1000 objects not reported"; show "$1"; }
    grep -A1 '^heapsift: 100000 bytes in 1000 objects' "$1" | grep -q 'in site_keep ' ||
        { fail "$3: the 1000 objects are not site_keep's"; show "$1"; }
    grep -q "108000 bytes in 1004 objects still allocated at $2 from 2 sites (exact" "$1" ||
        { fail "$3: not 108000 bytes in 1004 objects from 2 sites"; show "$1"; }
    ! grep -q site_pre "$1" || { fail "$3: site_pre (before the attach) is in the report"; show "$1"; }
}

at_start
"$CLI" attach --leaks 1 --rate 1 -o "$T/p1.pb.gz" "$TPID" 2>"$T/a.err" || { fail "attach: status $?"; show "$T/a.err"; }
at_round 1
"$CLI" detach "$TPID" >"$T/d.out" 2>"$T/d.err" || { fail "detach: status $?"; show "$T/d.err"; }
check_report "$T/d.err" detach detach
grep -q 'reachability scan:' "$T/d.err" || { fail "detach: no reachability scan"; show "$T/d.err"; }
! grep -q 'leak report' "$T/err" || { fail "detach: a leak report on the target's stderr"; show "$T/err"; }

"$CLI" attach --rate 1 -o "$T/p2.pb.gz" "$TPID" 2>"$T/a.err" || { fail "re-attach: status $?"; show "$T/a.err"; }
at_round 2
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"
check_report "$T/err" exit exit
[ "$FAILS" -eq 0 ] && echo "attach_leaks: ok"
exit $((FAILS > 0))

#!/bin/sh
# attach_threads: heapsift detach leaves no thread of heapsift's running. An attach with
# an interval and a peak trigger starts the trigger thread (a task named "heapsift" in
# /proc/PID/task, within 10 s: it names itself when it first runs); after detach the
# process has the threads it had before the attach and none named heapsift; a re-attach
# starts the thread again (its triggers are the first attach's) and the next detach ends
# it again. The program's output and exit status are unchanged.
# usage: attach_threads.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_threads
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

tasks() { ls "/proc/$TPID/task" | wc -l; }
named() { cat "/proc/$TPID/task/"*/comm 2>/dev/null | grep -c "^$1\$" || true; }
# started: how many threads are named heapsift once one is, within 10 s. The trigger
# thread names itself when it first runs, which can be after attach has returned.
started() {
    _i=0
    while [ "$(named heapsift)" = 0 ] && [ $_i -lt 1000 ]; do
        sleep 0.01
        _i=$((_i + 1))
    done
    named heapsift
}

at_start
n0=$(tasks)
[ "$(named heapsift)" = 0 ] || fail "a heapsift thread before any attach"
for k in 1 2; do
    "$CLI" attach --interval-seconds 1 --peak -o "$T/p$k.pb.gz" "$TPID" 2>"$T/a.err" ||
        { fail "attach $k: status $?"; show "$T/a.err"; }
    n=$(started)
    [ "$n" = 1 ] || { fail "attach $k: $n threads named heapsift, not 1"; cat "/proc/$TPID/task/"*/comm >&2; }
    at_round "$k"
    "$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || { fail "detach $k: status $?"; show "$T/d.err"; }
    [ "$(named heapsift)" = 0 ] || fail "detach $k: a thread named heapsift is left"
    [ "$(tasks)" = "$n0" ] || { fail "detach $k: $(tasks) threads, $n0 before the attach"; cat "/proc/$TPID/task/"*/comm >&2; }
done
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"
[ "$(grep -c '^round .* done$' "$T/out")" = 2 ] || { fail "the target's output changed"; show "$T/out"; }
[ "$FAILS" -eq 0 ] && echo "attach_threads: ok"
exit $((FAILS > 0))

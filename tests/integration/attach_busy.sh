#!/bin/sh
# attach_busy: attach must never hurt a target that is inside malloc nearly all the time
# (issue 44). For 1, 4 and 16 allocating threads: 8 attaches at moments spread over
# 10-200 ms (--seconds 0.1, then a detach at its end), and 8 attaches whose command is
# killed 1 to 200 ms in (SIGKILL, SIGINT, SIGTERM in turn), each followed by a detach
# (status 0, or 2 when the kill came before the library was loaded). Each must end within
# 60 s; the target then ends by itself with its output, status and stderr unchanged.
# The moments vary; what is checked holds at every one of them.
# usage: attach_busy.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_busy
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_busy"
AT_PROG=$BUILD/programs/attach_busy

# ms K: the K-th moment, 1 to 200 ms, spread without a random source
ms() { echo $(( (($1 * 37) % 200) + 1 )); }
pause() { sleep "$(printf '0.%03d' "$1")"; }

for threads in 1 4 16; do
    at_start "$threads"
    for k in 1 2 3 4 5 6 7 8; do
        pause "$(ms $((k + threads)))"
        rc=0; timeout 60 "$CLI" attach --seconds 0.1 -o "$T/p.pb.gz" "$TPID" >"$T/a.out" 2>"$T/a.err" || rc=$?
        [ "$rc" = 0 ] || { fail "$threads threads, attach $k: status $rc"; show "$T/a.err"; }
        kill -0 "$TPID" 2>/dev/null || { fail "$threads threads: the target died at attach $k"; break; }
    done
    for k in 1 2 3 4 5 6 7 8; do
        case $((k % 3)) in 0) sig=KILL ;; 1) sig=INT ;; *) sig=TERM ;; esac
        # as from a terminal: a background job of sh starts with SIGINT ignored
        env --default-signal=INT "$CLI" attach -o "$T/q.pb.gz" "$TPID" >/dev/null 2>"$T/k.err" &
        apid=$!
        pause "$(ms $((k * 5 + threads)))"
        kill -s "$sig" "$apid" 2>/dev/null || true
        i=0
        while kill -0 "$apid" 2>/dev/null; do
            i=$((i + 1)); [ $i -lt 100 ] || { fail "$threads threads: attach ignored SIG$sig for 1 s"; kill -9 "$apid"; break; }
            sleep 0.01
        done
        wait "$apid" 2>/dev/null || true
        rc=0; timeout 60 "$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 2 ] || { fail "$threads threads, SIG$sig $k: detach status $rc"; show "$T/d.err"; }
        kill -0 "$TPID" 2>/dev/null || { fail "$threads threads: the target died after SIG$sig $k"; break; }
    done
    at_end
    [ "$TSTATUS" = 0 ] || fail "$threads threads: the target's status is $TSTATUS"
    printf 'ready\nattach_busy: done\n' | cmp -s - "$T/out" || { fail "$threads threads: its output changed"; show "$T/out"; }
    [ ! -s "$T/err" ] || { fail "$threads threads: its stderr is not empty"; show "$T/err"; }
done
[ "$FAILS" -eq 0 ] && echo "attach_busy: ok"
exit $((FAILS > 0))

#!/bin/sh
# attach_seccomp: a target under a seccomp filter that forbids open and openat
# (tests/programs/seccomp_target): heapsift attach fails with status 3 and one line that
# names the filter as the cause, and the target runs on and exits 0. Twice: a filter that
# returns EPERM, and one that traps (SECCOMP_RET_TRAP: the SIGSYS is the attach's, and
# must not reach the program, whose default action would kill it).
# usage: attach_seccomp.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_seccomp
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/seccomp_target"

for mode in errno trap; do
    rm -rf "$T/d" "$T/out" "$T/status"
    mkdir -p "$T/d"
    arg=; [ "$mode" = trap ] && arg=--trap
    ( "$BUILD/programs/seccomp_target" "$T/d" $arg >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
    # ready, or ended (a filter that cannot be installed): 30 s at most
    end=$(($(date +%s) + 31))
    until grep -q '^ready$' "$T/out" 2>/dev/null; do
        [ "$(date +%s)" -lt "$end" ] || break
        [ ! -s "$T/status" ] || break
        sleep 0.01
    done
    if ! grep -q '^ready$' "$T/out"; then
        if grep -q 'cannot install the filter' "$T/err"; then
            echo "SKIP: seccomp filters cannot be installed here: $(cat "$T/err")"
            exit 77
        fi
        fail "$mode: seccomp_target not ready within 30 s"; show "$T/err"; break
    fi
    TPID=$(pgrep -f "seccomp_target $T/d" | head -1)
    grep -q '^Seccomp:[[:space:]]*2' "/proc/$TPID/status" || fail "$mode: no filter in /proc/$TPID/status"
    at_expect 3 "process $TPID runs under a seccomp filter, which refused a system call" \
        "$mode" -- attach -o "$T/p.pb.gz" "$TPID"
    kill -0 "$TPID" 2>/dev/null || fail "$mode: the target died"
    : >"$T/d/end"
    hs_until 30 "$mode: the target's exit" '[ -s "$T/status" ]' || kill -9 "$TPID" 2>/dev/null || true
    [ "$(cat "$T/status")" = 0 ] || { fail "$mode: the target's exit status is $(cat "$T/status"), not 0"; show "$T/err"; }
    printf 'ready\nbye\n' | cmp -s - "$T/out" || { fail "$mode: the target's output changed"; show "$T/out"; }
done
[ "$FAILS" -eq 0 ] && echo "attach_seccomp: ok"
exit $((FAILS > 0))

#!/bin/sh
# attach_refuse: the targets heapsift attach refuses get one message and a documented
# status, and are left running: a statically linked program (2), a process id that does
# not exist (2), a process already traced by another tracer (3, strace -p), a process
# that loaded libheapsift.so itself (2, heapsift run); detach of a process never attached
# (2); a bad option value (1).
# usage: attach_refuse.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_refuse
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

expect() { # STATUS PATTERN LABEL -- ARGS...
    want=$1 pat=$2 label=$3
    shift 4
    rc=0; "$CLI" "$@" >"$T/o" 2>"$T/e" || rc=$?
    [ "$rc" = "$want" ] || { fail "$label: status $rc, not $want"; show "$T/e"; }
    grep -q "$pat" "$T/e" || { fail "$label: no '$pat' message"; show "$T/e"; }
    [ "$(wc -l <"$T/e")" = 1 ] || { fail "$label: not one line on stderr"; show "$T/e"; }
}

# statically linked
if printf '#include <unistd.h>\nint main(void){for(;;)pause();}\n' >"$T/s.c" &&
    cc -static -o "$T/static" "$T/s.c" 2>/dev/null; then
    "$T/static" & SPID=$!
    sleep 0.1
    expect 2 'statically linked' static -- attach "$SPID"
    kill -0 "$SPID" 2>/dev/null || fail "static: the target died"
    kill "$SPID"
else
    echo "note: no static libc: the static case is skipped"
fi

expect 2 'no process 999999' 'no such pid' -- attach 999999
expect 1 'not a process id' 'bad pid' -- attach 12x
expect 1 'HEAPSIFT_RATE' 'bad rate' -- attach --rate lots "$$"

at_start
if command -v strace >/dev/null 2>&1; then
    strace -p "$TPID" -o /dev/null 2>/dev/null & STPID=$!
    i=0
    until grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$TPID/status"; do
        i=$((i + 1)); [ $i -lt 500 ] || break
        sleep 0.01
    done
    expect 3 'ptrace refused' traced -- attach "$TPID"
    kill "$STPID"; wait "$STPID" 2>/dev/null || true
    i=0
    until grep -q "^TracerPid:[[:space:]]*0" "/proc/$TPID/status"; do
        i=$((i + 1)); [ $i -lt 500 ] || break
        sleep 0.01
    done
else
    echo "note: no strace: the traced case is skipped"
fi
grep -q "^State:.*[RS]" "/proc/$TPID/status" || { fail "the target is not running"; show "/proc/$TPID/status"; }
expect 2 'not attached' 'detach unattached' -- detach "$TPID"
at_round 1
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"

# a process that preloads the library itself
rm -rf "$T/d" "$T/out" "$T/status"
mkdir -p "$T/d"
( LD_PRELOAD="$LIB" HEAPSIFT_OUT=/dev/null "$BUILD/programs/attach_target" "$T/d" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
i=0
until grep -q '^ready$' "$T/out" 2>/dev/null; do i=$((i + 1)); [ $i -lt 500 ] || break; sleep 0.01; done
TPID=$(pgrep -f "attach_target $T/d" | head -1)
expect 2 'profiled already' preloaded -- attach "$TPID"
at_round 1
at_end
[ "$TSTATUS" = 0 ] || fail "preloaded: the target's exit status changed: $TSTATUS"
[ "$FAILS" -eq 0 ] && echo "attach_refuse: ok"
exit $((FAILS > 0))

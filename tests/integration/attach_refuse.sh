#!/bin/sh
# attach_refuse: the targets heapsift attach refuses get one message and a documented
# status, and are left running: a statically linked program (2), a process id that does
# not exist (2), a zombie (2), a process already traced by another tracer (3, strace -p:
# the tracer named), another user's process (3, heapsift run as nobody through setpriv),
# a process that loaded libheapsift.so itself (2, heapsift run), a main thread that
# called pthread_exit while another runs (2); detach of a process
# never attached (2); a bad option value (1); a process in seccomp strict mode (2, and it
# reads, writes and exits as before). Yama's ptrace_scope is told only when the
# machine has Yama at 1 or more (a note says so otherwise). Seccomp: attach_seccomp.sh;
# a target that dies during the attach: attach_dies.sh.
# usage: attach_refuse.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_refuse
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

# statically linked
if printf '#include <unistd.h>\nint main(void){for(;;)pause();}\n' >"$T/s.c" &&
    cc -static -o "$T/static" "$T/s.c" 2>/dev/null; then
    "$T/static" & SPID=$!
    # attached only once the shell's child has exec'd it (before, it is a copy of sh)
    if hs_until 30 "static: the exec of $T/static" '[ "/proc/$SPID/exe" -ef "$T/static" ]'; then
        at_expect 2 'statically linked' static -- attach "$SPID"
        kill -0 "$SPID" 2>/dev/null || fail "static: the target died"
    fi
    kill "$SPID"
else
    echo "note: no static libc: the static case is skipped"
fi

at_expect 2 'no process 999999' 'no such pid' -- attach 999999
at_expect 1 'not a process id' 'bad pid' -- attach 12x
at_expect 1 'HEAPSIFT_RATE' 'bad rate' -- attach --rate lots "$$"

at_start
if command -v strace >/dev/null 2>&1; then
    strace -p "$TPID" -o /dev/null 2>/dev/null & STPID=$!
    hs_until 30 "traced: strace's attach" 'grep -q "^TracerPid:[[:space:]]*$STPID\$" "/proc/$TPID/status"'
    at_expect 3 "traced already by process $STPID \\(strace\\)" traced -- attach "$TPID"
    at_expect 3 "traced already by process $STPID" 'detach traced' -- detach "$TPID"
    kill "$STPID"; wait "$STPID" 2>/dev/null || true
    hs_until 30 "traced: strace's detach" 'grep -q "^TracerPid:[[:space:]]*0\$" "/proc/$TPID/status"'
else
    echo "note: no strace: the traced case is skipped"
fi
# another user: this command as nobody, the target as whoever runs the test
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
    rc=0
    timeout 120 setpriv --reuid=65534 --regid=65534 --clear-groups "$CLI" attach "$TPID" >"$T/o" 2>"$T/e" || rc=$?
    [ "$rc" = 3 ] || { fail "another user: status $rc, not 3"; show "$T/e"; }
    grep -q "process $TPID belongs to another user (uid 0; this command runs as uid 65534)" "$T/e" ||
        { fail "another user: no message"; show "$T/e"; }
    [ "$(wc -l <"$T/e")" = 1 ] || { fail "another user: not one line on stderr"; show "$T/e"; }
else
    echo "note: not root or no setpriv: the other-user case is skipped (it runs heapsift as nobody)"
fi
# seccomp strict mode: it blocks in read(2) on a fifo until the test writes a byte, then
# leaves with exit(2) (exit_group would kill it)
cat >"$T/strict.c" <<'C'
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void)
{
    char c;
    if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT) != 0)
        return 2;
    if (read(0, &c, 1) == 1 && write(1, "done\n", 5) == 5)
        syscall(SYS_exit, 0);
    syscall(SYS_exit, 3);
}
C
cc -O2 -o "$T/strict" "$T/strict.c"
mkfifo "$T/strict.in"
"$T/strict" <"$T/strict.in" >"$T/strict.out" 2>"$T/strict.err" & SPID=$!
exec 3>"$T/strict.in"
hs_until 30 "strict: seccomp strict mode" "grep -q '^Seccomp:[[:space:]]*1\$' /proc/$SPID/status 2>/dev/null" || true
at_expect 2 'runs in seccomp strict mode' strict -- attach "$SPID"
kill -0 "$SPID" 2>/dev/null || fail "strict: the target died"
echo x >&3
exec 3>&-
st=0; wait "$SPID" || st=$?
[ "$st" = 0 ] && [ "$(cat "$T/strict.out")" = done ] ||
    { fail "strict: status $st, output '$(cat "$T/strict.out")', not 0 and 'done'"; }
# Yama
scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo none)
case $scope in
3) at_expect 3 "ptrace_scope is 3" yama -- attach "$TPID" ;;
1 | 2)
    if [ "$(id -u)" != 0 ]; then
        at_expect 3 "ptrace_scope is $scope" yama -- attach "$TPID"
    else
        echo "note: Yama's ptrace_scope is $scope but root may trace: the Yama case is skipped"
    fi ;;
*) echo "note: Yama's ptrace_scope is $scope here: the Yama case is skipped" ;;
esac
grep -q "^State:.*[RS]" "/proc/$TPID/status" || { fail "the target is not running"; show "/proc/$TPID/status"; }
at_expect 2 'not attached' 'detach unattached' -- detach "$TPID"
at_round 1
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"

# a zombie: sh exec's into sleep, which never reaps the child it inherited
sh -c 'true & exec sleep 60' & ZPARENT=$!
if hs_until 30 "zombie: a zombie child of $ZPARENT" \
    'ZPID=$(pgrep -P "$ZPARENT" 2>/dev/null) && grep -q "^State:[[:space:]]*Z" "/proc/$ZPID/status" 2>/dev/null'; then
    at_expect 2 "process $ZPID has exited \\(a zombie" zombie -- attach "$ZPID"
fi
kill "$ZPARENT" 2>/dev/null || true

# a main thread that called pthread_exit while another thread runs
printf '%s\n' '#include <pthread.h>' '#include <unistd.h>' \
    'static void *w(void *a) { (void)a; sleep(60); return NULL; }' \
    'int main(void) { pthread_t t; pthread_create(&t, NULL, w, NULL); pthread_exit(NULL); }' >"$T/pex.c"
if cc -pthread -o "$T/pex" "$T/pex.c" 2>/dev/null; then
    "$T/pex" & XPID=$!
    hs_until 30 "pthread_exit: the main thread's end" "grep -q '^State:[[:space:]]*Z' /proc/$XPID/status 2>/dev/null" || true
    at_expect 2 "process $XPID's main thread has ended \\(pthread_exit\\) while its other threads run" \
        pthread_exit -- attach "$XPID"
    kill "$XPID" 2>/dev/null || true
    wait "$XPID" 2>/dev/null || true
else
    echo "note: cannot build a threaded program with cc: the pthread_exit case is skipped"
fi

# a process that preloads the library itself
rm -rf "$T/d" "$T/out" "$T/status"
mkdir -p "$T/d"
( LD_PRELOAD="$LIB" HEAPSIFT_OUT=/dev/null "$BUILD/programs/attach_target" "$T/d" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
hs_until 30 "preloaded: attach_target ready" "grep -q '^ready\$' '$T/out' 2>/dev/null" || { show "$T/err"; exit 1; }
TPID=$(pgrep -f "attach_target $T/d" | head -1)
at_expect 2 'profiled already' preloaded -- attach "$TPID"
at_round 1
at_end
[ "$TSTATUS" = 0 ] || fail "preloaded: the target's exit status changed: $TSTATUS"
[ "$FAILS" -eq 0 ] && echo "attach_refuse: ok"
exit $((FAILS > 0))

#!/bin/sh
# attach_moved: attach's search for a thread at a safe point stops a refused thread again
# only once it has moved (src/cli/inject/inject_moved.h), staged with a thread held inside
# the loader by a dlopen'd constructor (tests/programs/lib/ctor_wait.c, in
# tests/programs/attach_loader.c):
#   frozen: the constructor blocks in open(2) on a fifo, a call the kernel restarts after
#     each ptrace stop, so the thread never moves; as a starved thread, which does not run
#     between two stops. attach gives up (3) in 10 s having stopped it once, and the
#     target, let go, ends as before. (Stopping it again and again proved nothing and
#     used up the search's 400 stops on a loaded machine: 6,655 stops in 10 s.) When the
#     search's first stop finds it still on its way back from the box's mmap (in the
#     syscall stub's last instructions: seen on a loaded machine), that stop lets it run
#     on into its open, where it is refused: still one stop.
#   moved: the constructor returns after the search's first stop of it (its epoll_wait
#     ends with EINTR at each stop) and the thread blocks in the program's read(2), a
#     safe point, having run only microseconds since its refusal: its CPU time alone does
#     not tell it moved, its syscall line does. attach succeeds within 3 stops (the
#     search's first may find it between two epoll_waits), and its output, status and
#     stderr are unchanged.
#   stays: attached while the thread reads (a safe point), then held in the loader by a
#     second dlopen (LATE_LIB): the detach finds no safe point, exits 3 and says the
#     process stays attached; once the constructor returns, a second detach writes the
#     profile, and the target's output and status are unchanged.
#   zombie: as moved, beside a thread that has ended but stays in /proc/PID/task, traced
#     by another process that never waits for it: seizing it fails with EPERM, as seizing
#     a thread in the middle of its exit does. attach and detach pass it by and succeed.
# usage: attach_moved.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_moved
. "$(dirname "$0")/../lib/attach.sh"
PROG=$BUILD/programs/attach_loader
hs_need_built "$LIB" "$CLI" "$PROG"
cc -O2 -shared -fPIC -o "$T/ctor.so" "$2/tests/programs/lib/ctor_wait.c" 2>"$T/cc.err" ||
    { echo "FAIL: ctor_wait.c does not build" >&2; show "$T/cc.err"; exit 1; }
mkfifo "$T/fifo" "$T/in"
trap 'kill -9 ${PID:-} 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM

# start ENV...: attach_loader with ctor.so under env ENV, stdin the fifo $T/in (held open
# on fd 3), stdout $T/out, stderr $T/err, status later in $T/status; sets PID.
start() {
    rm -f "$T/status"
    ( set +e; env "$@" "$PROG" "$T/ctor.so" <"$T/in" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
    exec 3>"$T/in"
    hs_until 30 "attach_loader ready" "grep -q '^ready\$' '$T/out'" || { show "$T/err"; exit 1; }
    PID=$(pgrep -f "attach_loader $T/ctor.so" | head -n 1)
}

# finish LABEL: ends the target (stdin closed) and checks its status, output and stderr.
finish() {
    exec 3>&-
    hs_until 30 "$1: the target's end" '[ -s "$T/status" ]' || return 0
    [ "$(cat "$T/status")" = 0 ] || fail "$1: the target's status is $(cat "$T/status")"
    printf 'ready\nloaded\ndone\n' | cmp -s - "$T/out" || { fail "$1: its output changed"; show "$T/out"; }
    [ ! -s "$T/err" ] || { fail "$1: its stderr is not empty"; show "$T/err"; }
}

# frozen: blocked in openat (257) inside the constructor for the whole search
start CTOR_FIFO="$T/fifo"
hs_until 30 "frozen: the constructor's open" "[ \"\$(cut -d' ' -f1 /proc/$PID/syscall 2>/dev/null)\" = 257 ]"
at_expect 3 "no thread of process $PID was outside the allocator and the loader in [0-9.]+ s \\(1 stop; [1-9][0-9]* times a refused thread that had not moved since was left alone; the last: a frame in its code \\([^)]*ld-linux" \
    frozen -- attach "$PID"
echo "frozen: $(sed -n 's/.* in \([0-9.]* s (1 stop; [0-9]*\) times.*/\1 skips/p' "$T/e")"
kill -0 "$PID" 2>/dev/null || fail "frozen: the target died"
echo x >"$T/fifo"
hs_until 30 "frozen: the dlopen's end" "grep -q '^loaded\$' '$T/out'"
finish frozen

# moved: the constructor returns at the search's first stop (the box's mmap stopped it
# once before), and the thread then blocks in read (0)
start CTOR_EINTR=2
hs_until 30 "moved: the constructor's epoll_wait" "[ \"\$(cut -d' ' -f1 /proc/$PID/syscall 2>/dev/null)\" = 232 ]"
rc=0; timeout 120 "$CLI" attach -o "$T/p.pb.gz" "$PID" >/dev/null 2>"$T/a.err" || rc=$?
[ "$rc" = 0 ] || { fail "moved: attach status $rc, not 0"; show "$T/a.err"; }
stops=$(sed -n 's/.*; \([0-9]*\) stopped to find one.*/\1/p' "$T/a.err")
echo "moved: ${stops:-?} stops"
case $stops in [123]) ;; *) fail "moved: ${stops:-no} stops, not 1 to 3"; show "$T/a.err" ;; esac
grep -q '^loaded$' "$T/out" || fail "moved: the attach succeeded before the constructor returned"
rc=0; timeout 60 "$CLI" detach "$PID" >/dev/null 2>"$T/d.err" || rc=$?
[ "$rc" = 0 ] || { fail "moved: detach status $rc"; show "$T/d.err"; }
finish moved

# stays: a detach that finds no safe point leaves the library in, and says so
cp "$T/ctor.so" "$T/ctor2.so"
mkfifo "$T/fifo2"
start LATE_LIB="$T/ctor2.so" LATE_FIFO="$T/fifo2"
hs_until 30 "stays: the first dlopen's end" "grep -q '^loaded\$' '$T/out'"
rc=0; timeout 120 "$CLI" attach -o "$T/s.pb.gz" "$PID" >/dev/null 2>"$T/a.err" || rc=$?
[ "$rc" = 0 ] || { fail "stays: attach status $rc, not 0"; show "$T/a.err"; }
echo L >&3
hs_until 30 "stays: the late constructor's open" "[ \"\$(cut -d' ' -f1 /proc/$PID/syscall 2>/dev/null)\" = 257 ]"
at_expect 3 "no thread of process $PID was outside the allocator and the loader in [0-9.]+ s .*: nothing was changed; the process stays attached \\(heapsift detach tries again\\)" \
    stays -- detach "$PID"
echo x >"$T/fifo2"
hs_until 30 "stays: the late constructor's end" "[ \"\$(cut -d' ' -f1 /proc/$PID/syscall 2>/dev/null)\" = 0 ]"
rc=0; timeout 60 "$CLI" detach "$PID" >/dev/null 2>"$T/d.err" || rc=$?
[ "$rc" = 0 ] || { fail "stays: the second detach's status $rc"; show "$T/d.err"; }
[ -s "$T/s.pb.gz" ] || fail "stays: no profile after the second detach"
finish stays

# zombie: as moved, with a thread of the target's ended but kept as a zombie by a tracer
# that never waits (ZOMBIE_TID, tests/programs/attach_loader.c): its PTRACE_SEIZE fails
# with EPERM, as an exiting thread's does. The search passes it by, as a thread gone.
start CTOR_EINTR=2 ZOMBIE_TID="$T/ztid"
Z=$(cat "$T/ztid")
hs_until 30 "zombie: thread $Z a zombie" "[ \"\$(sed 's/.*) //' /proc/$PID/task/$Z/stat 2>/dev/null | cut -c1)\" = Z ]"
hs_until 30 "zombie: the constructor's epoll_wait" "[ \"\$(cut -d' ' -f1 /proc/$PID/syscall 2>/dev/null)\" = 232 ]"
rc=0; timeout 120 "$CLI" attach -o "$T/z.pb.gz" "$PID" >/dev/null 2>"$T/a.err" || rc=$?
[ "$rc" = 0 ] || { fail "zombie: attach status $rc, not 0"; show "$T/a.err"; }
rc=0; timeout 60 "$CLI" detach "$PID" >/dev/null 2>"$T/d.err" || rc=$?
[ "$rc" = 0 ] || { fail "zombie: detach status $rc"; show "$T/d.err"; }
finish zombie

[ "$FAILS" -eq 0 ] && echo "attach_moved: ok"
exit $((FAILS > 0))

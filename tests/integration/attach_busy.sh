#!/bin/sh
# attach_busy: attach must never hurt a target that is inside malloc nearly all the time
# (issue 44). One configuration per test (tests/CMakeLists.txt registers each): ALLOC-THREADS,
# ALLOC one of glibc, jemalloc or tcmalloc (preloaded), static (tcmalloc_minimal linked
# in), THREADS 1, 4 or 16 allocating threads: 50 attaches at moments spread over 1-200 ms
# (--seconds 0.1, then a detach at its end), and 50 attaches whose command is killed 1 to
# 200 ms in (SIGKILL, SIGINT, SIGTERM in turn), each followed by a detach (status 0, or 2
# when the kill came before the library was loaded). Each must end within 120 s; a killed
# command must end within 10 s of its signal (the ones that took over 1 s are counted and
# printed: bench/attach_safety.sh measures them); the target then ends by itself with
# its output, status and stderr unchanged. The moments vary; what is checked holds at
# every one of them. Configuration "reader": a thread inside a system call; "spin": a
# thread inside the allocator but for its system calls (both below).
# usage: attach_busy.sh BUILD_DIR SOURCE_DIR CONFIG [COUNT]   (COUNT: 50)
set -eu
. "$(dirname "$0")/../lib/common.sh"
CONFIG=${3:?usage: attach_busy.sh BUILD_DIR SOURCE_DIR CONFIG [COUNT]}
COUNT=${4:-50}
hs_setup "$1" "attach_busy_$CONFIG"
SRC=$(cd "$2" && pwd)
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_busy"

# ms K: the K-th moment, 1 to 200 ms, spread without a random source
ms() { echo $(( (($1 * 37) % 200) + 1 )); }
pause() { sleep "$(printf '0.%03d' "$1")"; }

# busy ALLOC THREADS N: a target on ALLOC (glibc; jemalloc or tcmalloc preloaded; static:
# tcmalloc_minimal linked in), N attaches and N killed attaches, its end checked.
busy() {
    label="$1, $2 threads"
    AT_PROG=$BUILD/programs/attach_busy
    case $1 in
    jemalloc) export LD_PRELOAD=$JEMALLOC ;;
    tcmalloc) export LD_PRELOAD=$TCMALLOC ;;
    static) AT_PROG=$T/busy_static ;;
    esac
    at_start "$2"
    unset LD_PRELOAD
    k=1
    while [ $k -le "$3" ]; do
        pause "$(ms $((k + $2)))"
        rc=0; timeout 120 "$CLI" attach --seconds 0.1 -o "$T/p.pb.gz" "$TPID" >"$T/a.out" 2>"$T/a.err" || rc=$?
        [ "$rc" = 0 ] || { fail "$label, attach $k: status $rc"; show "$T/a.err"; }
        kill -0 "$TPID" 2>/dev/null || { fail "$label: the target died at attach $k"; break; }
        k=$((k + 1))
    done
    k=1
    while [ $k -le "$3" ]; do
        case $((k % 3)) in 0) sig=KILL ;; 1) sig=INT ;; *) sig=TERM ;; esac
        # as from a terminal: a background job of sh starts with SIGINT ignored
        env --default-signal=INT "$CLI" attach -o "$T/q.pb.gz" "$TPID" >/dev/null 2>"$T/k.err" &
        apid=$!
        pause "$(ms $((k * 5 + $2)))"
        kill -s "$sig" "$apid" 2>/dev/null || true
        i=0
        while kill -0 "$apid" 2>/dev/null; do
            i=$((i + 1)); [ $i -lt 1000 ] || { fail "$label: attach ignored SIG$sig for 10 s"; kill -9 "$apid"; break; }
            sleep 0.01
        done
        [ $i -le 100 ] || SLOW=$((SLOW + 1))
        wait "$apid" 2>/dev/null || true
        rc=0; timeout 60 "$CLI" detach "$TPID" >/dev/null 2>"$T/d.err" || rc=$?
        [ "$rc" = 0 ] || [ "$rc" = 2 ] || { fail "$label, SIG$sig $k: detach status $rc"; show "$T/d.err"; }
        kill -0 "$TPID" 2>/dev/null || { fail "$label: the target died after SIG$sig $k"; break; }
        k=$((k + 1))
    done
    busy_end "$label"
}

# busy_end LABEL: ends the target; its status, output and stderr must be unchanged.
busy_end() {
    at_end
    [ "$TSTATUS" = 0 ] || fail "$1: the target's status is $TSTATUS"
    printf 'ready\nattach_busy: done\n' | cmp -s - "$T/out" || { fail "$1: its output changed"; show "$T/out"; }
    [ ! -s "$T/err" ] || { fail "$1: its stderr is not empty"; show "$T/err"; }
}

SLOW=0
JEMALLOC=$(ls /usr/lib/*/libjemalloc.so.2 2>/dev/null | head -n 1 || true)
TCMALLOC=$(ls /usr/lib/*/libtcmalloc_minimal.so.4 2>/dev/null | head -n 1 || true)
case $CONFIG in
reader | spin) ;;
glibc-*) busy glibc "${CONFIG#*-}" "$COUNT" ;;
jemalloc-*)
    [ -n "$JEMALLOC" ] || { echo "FAIL: no libjemalloc.so.2 (make setup installs it)" >&2; exit 1; }
    busy jemalloc "${CONFIG#*-}" "$COUNT" ;;
tcmalloc-*)
    [ -n "$TCMALLOC" ] || { echo "FAIL: no libtcmalloc_minimal.so.4 (make setup installs it)" >&2; exit 1; }
    busy tcmalloc "${CONFIG#*-}" "$COUNT" ;;
static-*)
    cc -O2 -pthread -o "$T/busy_static" "$SRC/tests/programs/attach_busy.c" -Wl,-Bstatic \
        -l:libtcmalloc_minimal.a -Wl,-Bdynamic -lstdc++ -lm 2>"$T/cc.err" ||
        { echo "FAIL: attach_busy cannot be linked with libtcmalloc_minimal.a" >&2; show "$T/cc.err"; exit 1; }
    busy static "${CONFIG#*-}" "$COUNT" ;;
*) echo "attach_busy: unknown configuration $CONFIG" >&2; exit 2 ;;
esac
if [ "$CONFIG" = spin ]; then
    # A thread that a stop finds in the allocator (mi_spin) all but a few microseconds in
    # a thousand: each search stops it once, refuses it, and lets it run on to its next
    # system call's entry (access, from main), a safe point. Stopping it at random instead
    # would take hundreds of stops. Each attach and each finish must take that one stop.
    AT_PROG=$BUILD/programs/attach_busy
    at_start 1 spin
    k=1
    while [ $k -le "$COUNT" ]; do
        rc=0; timeout 120 "$CLI" attach --seconds 0.1 -o "$T/p.pb.gz" "$TPID" >/dev/null 2>"$T/a.err" || rc=$?
        [ "$rc" = 0 ] || { fail "spin, attach $k: status $rc"; show "$T/a.err"; }
        grep -q "; 1 stopped to find one outside the allocator" "$T/a.err" ||
            { fail "spin, attach $k: not found at a safe point in one stop"; show "$T/a.err"; }
        k=$((k + 1))
    done
    busy_end spin
    echo "attach_busy spin: $COUNT attaches, each in one stop"
    [ "$FAILS" -eq 0 ] && echo "attach_busy: ok"
    exit $((FAILS > 0))
fi
if [ "$CONFIG" != reader ]; then
    echo "attach_busy $CONFIG: $COUNT attaches, $COUNT killed attaches; $SLOW killed commands took over 1 s to end"
    [ "$FAILS" -eq 0 ] && echo "attach_busy: ok"
    exit $((FAILS > 0))
fi
# A thread inside a system call: the program's one thread blocks in read(2) on a fifo, so
# attach can only take that thread, at its call's entry (however many tries that takes);
# the stub gives it back to the same call, which must then see the bytes written ("read
# 6"; a call not made afresh would return its own number, 0).
mkfifo "$T/in"
rm -rf "$T/d" && mkdir -p "$T/d"
( set +e; "$BUILD/programs/attach_busy" "$T/d" 1 reader <"$T/in" >"$T/rout" 2>"$T/rerr"; echo $? >"$T/rstatus" ) &
exec 3>"$T/in"
hs_until 30 "the reader's ready" 'grep -q "^ready\$" "$T/rout"'
RPID=$(pgrep -f "attach_busy $T/d 1 reader" | head -n 1)
hs_until 30 "the reader blocked in read" '[ "$(cut -d" " -f1 /proc/$RPID/syscall 2>/dev/null)" = 0 ]'
rc=0; timeout 60 "$CLI" attach -o "$T/r.pb.gz" "$RPID" >/dev/null 2>"$T/ra.err" || rc=$?
[ "$rc" = 0 ] || { fail "reader: attach status $rc"; show "$T/ra.err"; }
printf 'hello\n' >&3
hs_until 30 "the reader's read after the attach" 'grep -q "^read" "$T/rout"'
rc=0; timeout 60 "$CLI" detach "$RPID" >/dev/null 2>"$T/rd.err" || rc=$?
[ "$rc" = 0 ] || { fail "reader: detach status $rc"; show "$T/rd.err"; }
printf 'quit\n' >&3
hs_until 30 "the reader's end" '[ -s "$T/rstatus" ]'
exec 3>&-
[ "$(cat "$T/rstatus")" = 0 ] || fail "reader: its status is $(cat "$T/rstatus")"
printf 'ready\nread 6\nread 5\nattach_busy: done\n' | cmp -s - "$T/rout" || { fail "reader: its output changed"; show "$T/rout"; }
[ ! -s "$T/rerr" ] || { fail "reader: its stderr is not empty"; show "$T/rerr"; }
[ "$FAILS" -eq 0 ] && echo "attach_busy: ok"
exit $((FAILS > 0))

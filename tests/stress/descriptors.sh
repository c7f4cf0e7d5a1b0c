#!/bin/sh
# descriptors: the profiler keeps its hands off the application's file descriptors. The
# program (tests/programs/stress_signals.c fdclose) does what daemons do at start: it
# closes every descriptor above 2, the profiler's included, opens four files (they take
# the lowest numbers, which the profiler used), writes a line to each, then allocates at
# HEAPSIFT_RATE=1. Each file must still be open, hold its line only, at an unmoved offset:
#  - with each unwinder (dwarf, libgcc, fp);
#  - with the dump signal (HEAPSIFT_SIGNAL=USR2) sent five times, when the library has the
#    signal trigger (left out otherwise): the wake-ups must not land in the files.
# Then, with heapsift's threads holding descriptors while the program closes them
# (tests/programs/stress_fds.c; each case fails with the library before their descriptor
# tables were made their own):
#  - closeloop: 20,000 rounds of close 3..63, write a file, read it back, beside interval
#    dumps every millisecond: no line lost or corrupted, and no dump finds its file's
#    descriptor closed under it ("cannot write profile": every run before the change);
#  - steal: with the HTTP endpoint, close 3..1023 and read a 32-byte file of its own after
#    50 ms: all 32 bytes (the server's wake-ups read nothing of it);
#  - fork: with the endpoint up, close 3..1023, open a log, fork; child and parent each
#    write a line: the log holds exactly "child" and "parent" (nothing of the server's
#    is written into it, and the child's descriptor is not closed), and the run ends
#    within 10 s (the exit does not wait on a lost wake-up);
#  - watch: for 2 s a thread of the program calls heapsift_dump in a loop, beside interval
#    dumps every millisecond (HEAPSIFT_LEAKS=1 too), while the main thread lists its own
#    descriptor table over and over: no descriptor in it may ever be one of heapsift's
#    files (a profile, a /proc file, a binary libdw reads). The library before the I/O
#    thread showed some 2,000 of them there in 2 s: every one a number the program could
#    have closed and reused for its own file while heapsift still wrote or closed it;
#  - the same under tests/programs/nounshare.c, where unshare fails (a container's seccomp
#    filter) and heapsift's threads share the program's table: their file operations run
#    in heapsift's I/O thread (src/preload/runtime/iothread.c), dumps still work, and the HTTP
#    endpoint stays off with one line saying why (its sockets could not be told from the
#    program's files): the program's files stay intact and the program exits 0 (also with
#    a ?seconds=2 request attempted while the program closes every descriptor).
# usage: descriptors.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" descriptors stress_signals stress_fds nounshare
PROG=$BUILD/programs/stress_signals

# one LABEL ARGS...: stress_signals fdclose under heapsift with the environment ARGS
one() {
    label=$1
    shift
    mkdir -p "$T/$label"
    if bounded 30 "$label" env "$@" HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$label/prof.pb.gz" \
        LD_PRELOAD="$LIB" "$PROG" fdclose "$T/$label/data" $USR2 >"$T/$label.out" 2>"$T/$label.err"; then
        echo "$label: intact"
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] &&
            fail "$label: the application's files were touched after it closed every" \
                "descriptor and reopened files: $(tr '\n' ';' <"$T/$label.out")"
        show "$T/$label.err" 5
    fi
}

USR2=""
for unwind in dwarf libgcc fp; do
    one "$unwind" HEAPSIFT_UNWIND=$unwind
done

rc=0
HEAPSIFT_SIGNAL=USR2 LD_PRELOAD="$LIB" "$PROG" probe USR2 >"$T/probe.out" 2>"$T/probe.err" || rc=$?
if [ $rc -eq 0 ] && [ "$(cat "$T/probe.out")" = handled ] &&
    ! grep -q HEAPSIFT_SIGNAL "$T/probe.err"; then
    USR2=usr2
    for unwind in libgcc dwarf; do
        one "signal-$unwind" HEAPSIFT_UNWIND=$unwind HEAPSIFT_SIGNAL=USR2
    done
else
    fail "no signal trigger (HEAPSIFT_SIGNAL=USR2 installs no handler, status $rc): the signal part cannot run"
    show "$T/probe.err" 5
fi

FDS=$BUILD/programs/stress_fds
# fd_cases MODE [LAUNCHER]: the cases; LAUNCHER runs first (the library must not be in
# nounshare itself, whose endpoint would serve before its filter is set); MODE "own" (heapsift's threads have tables of
# their own) or "shared" (LAUNCHER makes unshare fail, as a container's seccomp filter may:
# the threads share the program's table and must notice that their descriptors were
# closed; a dump may then fail, the program's files must not).
fd_cases() {
    mode=$1
    shift
    mkdir -p "$T/$mode-watch"
    if bounded 60 "$mode watch" "$@" env HEAPSIFT_RATE=4096 HEAPSIFT_INTERVAL_SECONDS=0.001 \
        HEAPSIFT_LEAKS=1 HEAPSIFT_OUT="$T/$mode-watch/p.%n.pb.gz" HEAPSIFT_KEEP=2 LD_PRELOAD="$LIB" \
        "$FDS" watch 2000 "$T/$mode-watch" >"$T/$mode-watch.out" 2>"$T/$mode-watch.err"; then
        grep -q 'dumps=api' "$T/$mode-watch.out" || fail "$mode watch: heapsift_dump was not there"
        valid "$T/$mode-watch/api.pb.gz" "$mode watch: the API's profile" || true
        echo "$mode watch: $(head -n 1 "$T/$mode-watch.out")"
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] &&
            fail "$mode watch: heapsift's files in the program's table: $(tr '\n' ';' <"$T/$mode-watch.out")"
        show "$T/$mode-watch.err" 5
    fi

    mkdir -p "$T/$mode-loop"
    if bounded 120 "$mode closeloop" "$@" env HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_SECONDS=0.001 \
        HEAPSIFT_OUT="$T/$mode-loop/p.%n.pb.gz" HEAPSIFT_KEEP=2 LD_PRELOAD="$LIB" \
        "$FDS" closeloop 20000 "$T/$mode-loop.data" >"$T/$mode-loop.out" 2>"$T/$mode-loop.err"; then
        if [ "$mode" = own ] && grep -q "cannot write profile" "$T/$mode-loop.err"; then
            fail "$mode closeloop: a dump's descriptor was closed under it: $(head -n 1 "$T/$mode-loop.err")"
        else
            echo "$mode closeloop: intact ($(ls "$T/$mode-loop" | wc -l) profiles kept)"
        fi
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] &&
            fail "$mode closeloop: the program's file was touched: $(cat "$T/$mode-loop.out")"
        show "$T/$mode-loop.err" 5
    fi

    printf '0123456789abcdef0123456789abcdef' >"$T/steal.in"
    for i in 1 2 3 4 5; do
        if bounded 30 "$mode steal $i" "$@" env HEAPSIFT_HTTP=127.0.0.1:0 LD_PRELOAD="$LIB" \
            HEAPSIFT_OUT="$T/steal.pb.gz" "$FDS" steal "$T/steal.in" >"$T/steal.out" 2>"$T/steal.err"; then
            :
        else
            [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] &&
                fail "$mode steal $i: the program's file was read by someone else: $(cat "$T/steal.out")"
            show "$T/steal.err" 5
        fi
    done
    echo "$mode steal: 5 runs checked"
    if [ "$mode" = shared ]; then
        grep -q "HEAPSIFT_HTTP: the endpoint is off" "$T/steal.err" ||
            fail "shared steal: no line saying the endpoint is off: $(head -n 2 "$T/steal.err")"
    fi

    for i in 1 2 3; do
        rm -f "$T/port" "$T/fork.log"
        # shared: the endpoint stays off, so the program waits for a file that is there
        wait_for=$T/port portfile=$T/port
        [ "$mode" = shared ] && { wait_for=$T/noport portfile=$T/sport.%p; : >"$wait_for"; }
        if bounded 10 "$mode fork $i" "$@" env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$portfile" \
            LD_PRELOAD="$LIB" HEAPSIFT_OUT="$T/fork.%p.pb.gz" "$FDS" fork "$T/fork.log" "$wait_for" \
            >"$T/fork.out" 2>"$T/fork.err"; then
            [ "$mode" = shared ] && ls "$T"/sport.* >/dev/null 2>&1 &&
                fail "shared fork $i: the endpoint served ($(ls "$T"/sport.*))"
            [ "$(cat "$T/fork.log")" = "$(printf 'child\nparent')" ] ||
                fail "$mode fork $i: the log holds $(od -c "$T/fork.log" | head -n 3 | tr '\n' ' ')"
        else
            [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "$mode fork $i: $(cat "$T/fork.out")"
            show "$T/fork.err" 5
        fi
    done
    echo "$mode fork: 3 runs checked"

    # a ?seconds=2 request open while the program closes every descriptor: libmicrohttpd
    # fails to close a socket the program closed and aborts the process unless heapsift
    # stops it first (shared table: the previous library's status was 134)
    command -v curl >/dev/null 2>&1 || { fail "no curl (scripts/setup.sh installs it): the open-request case cannot run"; return 0; }
    rm -f "$T/port" "$T/go"
    "$@" env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port" LD_PRELOAD="$LIB" \
        HEAPSIFT_OUT="$T/ca.%p.pb.gz" "$FDS" closeall "$T/go" >"$T/ca.out" 2>"$T/ca.err" &
    ca=$!
    [ "$mode" = shared ] || for i in $(seq 200); do [ -s "$T/port" ] && break; sleep 0.05; done
    curl -s -m 5 -o /dev/null "http://127.0.0.1:$(cat "$T/port" 2>/dev/null)/debug/pprof/heap?seconds=2" &
    cu=$!
    # own table: act once the endpoint reports the request's window open (its stats);
    # shared: no endpoint, nothing to wait for
    i=0
    while [ "$mode" = own ] && [ "$(curl -s -m 5 "http://127.0.0.1:$(cat "$T/port")/debug/heapsift/stats" |
        sed -n 's/.*"delta_windows_open":\([0-9]*\).*/\1/p')" != 1 ]; do
        i=$((i + 1))
        [ $i -le 300 ] || { fail "own open request: the ?seconds=2 window never opened"; break; }
        sleep 0.05
    done
    : >"$T/go"
    st=0
    wait "$ca" || st=$?
    wait "$cu" || true
    [ "$st" -eq 0 ] || { fail "$mode open request: the program's status is $st, want 0"; show "$T/ca.err" 5; }
    echo "$mode open request: status $st"
}
fd_cases own
if "$BUILD/programs/nounshare" true 2>/dev/null; then
    fd_cases shared "$BUILD/programs/nounshare"
else
    [ "$FAILS" -ne 0 ] || { echo "SKIP: no seccomp filter could be installed here: the shared-table cases cannot run"; exit 77; }
fi
finish

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
#    within 10 s (the exit does not wait on a lost wake-up).
# usage: descriptors.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" descriptors stress_signals stress_fds
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
    echo "note: no signal trigger (HEAPSIFT_SIGNAL=USR2 installs no handler): signal part left out"
fi

FDS=$BUILD/programs/stress_fds
mkdir -p "$T/loop"
if bounded 120 closeloop env HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_SECONDS=0.001 \
    HEAPSIFT_OUT="$T/loop/p.%n.pb.gz" HEAPSIFT_KEEP=2 LD_PRELOAD="$LIB" \
    "$FDS" closeloop 20000 "$T/loop.data" >"$T/loop.out" 2>"$T/loop.err"; then
    if grep -q "cannot write profile" "$T/loop.err"; then
        fail "closeloop: a dump's descriptor was closed under it: $(head -n 1 "$T/loop.err")"
    else
        echo "closeloop: intact ($(ls "$T/loop" | wc -l) profiles kept)"
    fi
else
    [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] &&
        fail "closeloop: the program's file was touched: $(cat "$T/loop.out")"
    show "$T/loop.err" 5
fi

printf '0123456789abcdef0123456789abcdef' >"$T/steal.in"
for i in 1 2 3 4 5; do
    if bounded 30 "steal $i" env HEAPSIFT_HTTP=127.0.0.1:0 LD_PRELOAD="$LIB" \
        HEAPSIFT_OUT="$T/steal.pb.gz" "$FDS" steal "$T/steal.in" >"$T/steal.out" 2>"$T/steal.err"; then
        :
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] &&
            fail "steal $i: the program's file was read by someone else: $(cat "$T/steal.out")"
        show "$T/steal.err" 5
    fi
done
echo "steal: 5 runs checked"

for i in 1 2 3; do
    rm -f "$T/port" "$T/fork.log"
    if bounded 10 "fork $i" env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port" \
        LD_PRELOAD="$LIB" HEAPSIFT_OUT="$T/fork.%p.pb.gz" "$FDS" fork "$T/fork.log" "$T/port" \
        >"$T/fork.out" 2>"$T/fork.err"; then
        [ "$(cat "$T/fork.log")" = "$(printf 'child\nparent')" ] ||
            fail "fork $i: the log holds $(od -c "$T/fork.log" | head -n 3 | tr '\n' ' ')"
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "fork $i: $(cat "$T/fork.out")"
        show "$T/fork.err" 5
    fi
done
echo "fork: 3 runs checked"
finish

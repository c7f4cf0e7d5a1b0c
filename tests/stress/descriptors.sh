#!/bin/sh
# descriptors: the profiler keeps its hands off the application's file descriptors. The
# program (tests/programs/stress_signals.c fdclose) does what daemons do at start: it
# closes every descriptor above 2, the profiler's included, opens four files (they take
# the lowest numbers, which the profiler used), writes a line to each, then allocates at
# HEAPSIFT_RATE=1. Each file must still be open, hold its line only, at an unmoved offset:
#  - with each unwinder (dwarf, libgcc, fp);
#  - with the dump signal (HEAPSIFT_SIGNAL=USR2) sent five times, when the library has the
#    signal trigger (left out otherwise): the wake-ups must not land in the files.
# usage: descriptors.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" descriptors stress_signals
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
finish

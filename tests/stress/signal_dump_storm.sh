#!/bin/sh
# signal_dump_storm: a storm of the dump signal (HEAPSIFT_SIGNAL=USR2): a thread sends
# SIGUSR2 to the process at about 1 kHz for 3 s while 4 threads allocate at
# HEAPSIFT_RATE=1 and at the default rate (tests/programs/stress_signals.c usr2). No hang,
# no crash (an unhandled SIGUSR2 would kill it), no corrupted block; the storm coalesces
# into dumps, at least one, every one of them valid, and the exit profile too.
# Skips (77) while the library has no signal trigger: HEAPSIFT_SIGNAL rejected on stderr,
# or no SIGUSR2 handler installed.
# usage: signal_dump_storm.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" signal-dump-storm stress_signals
PROG=$BUILD/programs/stress_signals

rc=0
HEAPSIFT_SIGNAL=USR2 LD_PRELOAD="$LIB" "$PROG" probe USR2 >"$T/probe.out" 2>"$T/probe.err" || rc=$?
if grep -q 'HEAPSIFT_SIGNAL' "$T/probe.err"; then
    echo "SKIP: the library does not take HEAPSIFT_SIGNAL=USR2: $(head -n 1 "$T/probe.err")"
    exit 77
fi
[ $rc -eq 0 ] || { fail "probe: stress_signals probe exited $rc"; show "$T/probe.err"; finish; }
if [ "$(cat "$T/probe.out")" != handled ]; then
    echo "SKIP: HEAPSIFT_SIGNAL=USR2 installs no SIGUSR2 handler (no signal trigger yet)"
    exit 77
fi

# one LABEL RATE
one() {
    label=$1 dir=$T/$1
    mkdir -p "$dir"
    bounded 60 "$label" env HEAPSIFT_SIGNAL=USR2 HEAPSIFT_RATE="$2" \
        HEAPSIFT_OUT="$dir/prof.%p.%n.pb.gz" LD_PRELOAD="$LIB" "$PROG" usr2 1000 3 4 \
        >"$T/$label.out" 2>"$T/$label.err" || {
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "$label: stress_signals exited $RC"
        show "$T/$label.err" 10
        return 0
    }
    n=0
    for f in "$dir"/*; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        valid "$f" "$label: $(basename "$f")" || break
    done
    echo "$label: $(cat "$T/$label.out"), $n profile(s)"
    [ $n -ge 2 ] || fail "$label: $n profile(s) written, want the exit profile and at least one signal dump"
}

one rate1 1
one default 524288
finish

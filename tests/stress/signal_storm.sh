#!/bin/sh
# signal_storm: allocation at HEAPSIFT_RATE=1 (and once at the default rate) under a storm
# of SIGPROF (tests/programs/stress_signals.c): setitimer(ITIMER_PROF) plus a thread that
# sends SIGPROF to each allocating thread in turn at 1 kHz and at 10 kHz (the sleep's
# granularity makes that about 5 kHz); the handler only bumps a counter. No hang, no crash,
# no corrupted block, signals delivered, and at rate 1 the profile taken at the end holds
# exactly the bytes the program says are live; the exit profile is valid too.
# (The dump-signal storm, HEAPSIFT_SIGNAL, is signal_dump_storm.sh.)
# usage: signal_storm.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" signal-storm stress_signals
PROG=$BUILD/programs/stress_signals

# one LABEL RATE HZ UNWIND
one() {
    label=$1 dir=$T/$1
    mkdir -p "$dir"
    bounded 60 "$label" env HEAPSIFT_RATE="$2" HEAPSIFT_UNWIND="$4" \
        HEAPSIFT_OUT="$dir/exit.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" prof "$3" 3 3 \
        "$dir/end.pb.gz" >"$T/$label.out" 2>"$T/$label.err" || {
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "$label: stress_signals exited $RC"
        show "$T/$label.err" 10
        return 0
    }
    echo "$label: $(cat "$T/$label.out")"
    sigs=$(sed -n 's/^signals=\([0-9]*\) .*/\1/p' "$T/$label.out")
    [ "${sigs:-0}" -ge 100 ] || fail "$label: only ${sigs:-no} SIGPROF handled"
    valid "$dir/end.pb.gz" "$label: end.pb.gz" || return 0
    set -- "$dir"/exit.*.pb.gz
    [ -e "$1" ] && valid "$1" "$label: exit profile" || fail "$label: no exit profile"
    case $label in rate1*) ;; *) return 0 ;; esac
    live=$(sed -n 's/^.* live_bytes=\([0-9]*\)$/\1/p' "$T/$label.out")
    got=$(inuse_of "$dir/end.pb.gz" site_sig site_sig_realloc)
    [ "$got" = "$live" ] ||
        fail "$label: end.pb.gz: inuse_space of site_sig* = ${got:-unreadable}, want $live"
}

one rate1-1khz 1 1000 dwarf
one rate1-10khz 1 10000 dwarf
one rate1-10khz-libgcc 1 10000 libgcc
one default-10khz 524288 10000 dwarf
finish

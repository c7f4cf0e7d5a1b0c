#!/bin/sh
# fork_stdio: children forked while other threads are inside dprintf (glibc links a FILE
# on the printing thread's stack into its stdio list) call heapsift_dump and exit; no
# child may die of a signal. A thread heapsift starts in the child on a stack from glibc's
# cache (the vanished parent threads' stacks) overwrote that FILE, and the child's exit
# aborted: 6 and 8 of 50 children in two runs of a library whose threads took their
# stacks from that cache (tests/programs/fork_stdio.c; scripts/mutate.sh keeps it). With
# HEAPSIFT_INTERVAL_SECONDS the trigger thread starts again in every child at the fork
# (its interval, an hour, never comes): without it, the dump's threads no longer started
# on such a stack, and the bug went unseen (2026-11-27: 2 runs of 2 aborted with the bug
# put back, 0 of 5 without).
# usage: fork_stdio.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" fork-stdio fork_stdio
mkdir -p "$T/d"
if bounded 120 "fork_stdio" env HEAPSIFT_INTERVAL_SECONDS=3600 HEAPSIFT_RATE=4096 HEAPSIFT_OUT="$T/d/prof.%p.pb.gz" \
    LD_PRELOAD="$LIB" "$BUILD/programs/fork_stdio" 50 "$T/d" >"$T/out" 2>"$T/err"; then
    echo "fork_stdio: $(cat "$T/out")"
else
    [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "children died of a signal: $(cat "$T/out")"
    show "$T/err" 5
fi
n=$(ls "$T/d"/child.*.pb.gz 2>/dev/null | wc -l)
[ "$n" -eq 50 ] || fail "$n children wrote their dump, want 50"
finish

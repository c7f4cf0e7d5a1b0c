#!/bin/sh
# triggers_signal_storm: 2000 SIGUSR2 sent back to back at a program whose 4 threads churn
# allocations (tests/programs/trig_prog.c storm) under HEAPSIFT_SIGNAL=USR2. The handler
# only sets a bit and writes to an eventfd, so the storm coalesces: the program finishes
# normally (no deadlock, no crash, bounded by a 60 s timeout; it runs on past its 3 s
# until a dump was written, so a slow trigger thread cannot miss them all), writes between 1 and 2000
# signal profiles (in practice a handful, one per dump time), each readable by go tool
# pprof and holding site_keep's 1 MiB.
# usage: triggers_signal_storm.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" triggers-storm
PROG=$BUILD/programs/trig_prog
command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (go tool pprof is the reader)"; exit 77; }

mkdir "$T/s"
HEAPSIFT_RATE=4096 HEAPSIFT_SIGNAL=USR2 HEAPSIFT_OUT="$T/s/t.pb.gz" LD_PRELOAD="$LIB" \
    timeout 60 "$PROG" storm 3000 "$T/s" >"$T/out" 2>"$T/err" &
pid=$!
i=0
while [ ! -e "$T/s/ready" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$T/s/ready" ] || fail "the program never became ready"
prog=$(pgrep -P $pid trig_prog || echo $pid)
k=0
while [ $k -lt 2000 ] && kill -USR2 "$prog" 2>/dev/null; do k=$((k + 1)); done
rc=0
wait $pid || rc=$?
[ $rc -eq 0 ] || { fail "the program exited with status $rc (124: hung)"; show "$T/err"; }
n=$(ls "$T/s" | grep -c '^t\.signal\.[0-9]*\.pb\.gz$' || true)
[ "$n" -ge 1 ] && [ "$n" -le "$k" ] || fail "$n signal profiles for $k signals"
for f in "$T"/s/t.signal.*.pb.gz; do
    [ -e "$f" ] || continue
    keep=$(gotop "$f" inuse_space 2>/dev/null | table | awk -F '\t' '$1 ~ /^site_keep/ { print $2 }')
    [ -n "$keep" ] || fail "$f: unreadable or without site_keep"
done
[ $FAILS -eq 0 ] && echo "triggers_signal_storm: ok ($k signals, $n profiles)"
exit $((FAILS > 0))

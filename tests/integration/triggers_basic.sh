#!/bin/sh
# triggers_basic: the bytes, interval, signal and keep triggers (tests/programs/trig_prog.c).
#  - HEAPSIFT_INTERVAL_BYTES=32M over 100 MiB (the program waits for each profile before
#    going on, so slow dumps cannot merge boundaries): exactly 3 "bytes" profiles;
#  - HEAPSIFT_INTERVAL_SECONDS=0.5 over at least 2.75 s, the program running on until 2
#    dumps were written (however slow the machine): 2 "interval" profiles or more, and no
#    more than the ticks of the run's measured length (5 when it took under 3 s); with
#    HEAPSIFT_KEEP=2 only the newest 2 remain;
#  - HEAPSIFT_SIGNAL=USR2, three signals, each once the previous profile is written, the
#    program running until the third is: exactly 3 "signal" profiles;
# every profile reads with `go tool pprof -raw` and `heapsift top`, and holds site_keep's
# 1 MiB (rate 1: exact).
# usage: triggers_basic.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" triggers-basic
PROG=$BUILD/programs/trig_prog
command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (go tool pprof is the reader)"; exit 77; }

# check FILE: valid for both readers, site_keep holds 1 MiB in use
check() {
    go tool pprof -raw "$1" >/dev/null 2>&1 || { fail "$1: go tool pprof -raw cannot read it"; return; }
    hstop "$1" inuse_space >"$T/top" 2>&1 || { fail "$1: heapsift top failed"; show "$T/top"; return; }
    keep=$(gotop "$1" inuse_space 2>/dev/null | table | awk -F '\t' '$1 ~ /^site_keep/ { print $2 }')
    [ "$keep" = 1048576 ] || { fail "$1: site_keep holds '$keep' bytes, want 1048576"; show "$T/top"; }
}

count() { # DIR GLOB
    ls "$1" | grep -c "$2" || true
}

# bytes
mkdir "$T/b"
HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_BYTES=32M HEAPSIFT_OUT="$T/b/t.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" bytes 100 32 "$T/b" >"$T/b.out" 2>"$T/b.err" || fail "bytes: status $?"
n=$(count "$T/b" '^t\.bytes\.[0-9]*\.pb\.gz$')
[ "$n" -eq 3 ] || { fail "bytes: $n profiles, want 3"; ls "$T/b" >&2; show "$T/b.err"; }
for f in "$T"/b/*.pb.gz; do check "$f"; done

# interval, and keep
mkdir "$T/i" "$T/k"
t0=$(date +%s%N)
HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_SECONDS=0.5 HEAPSIFT_OUT="$T/i/t.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" until 2750 0 2 >"$T/i.out" 2>"$T/i.err" || { fail "interval: status $?"; show "$T/i.err"; }
# The ticks fall 0.5 s apart from the library's start, inside the run: no more of them than
# the run's measured length holds (ticks are skipped when dumps are slower than a tick).
ticks=$((($(date +%s%N) - t0) / 500000000))
n=$(count "$T/i" '^t\.interval\.[0-9]*\.pb\.gz$')
[ "$n" -ge 2 ] && [ "$n" -le "$ticks" ] || { fail "interval: $n profiles, want 2 to $ticks"; ls "$T/i" >&2; }
for f in "$T"/i/*.pb.gz; do check "$f"; done
HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_SECONDS=500ms HEAPSIFT_KEEP=2 HEAPSIFT_OUT="$T/k/%k.%n.pb.gz" \
    LD_PRELOAD="$LIB" "$PROG" sleep 2750 >"$T/k.out" 2>"$T/k.err" || fail "keep: status $?"
n=$(count "$T/k" '^interval\.[0-9]*\.pb\.gz$')
h=$(ls "$T/k" | sed -n 's/^heap\.\([0-9]*\)\.pb\.gz$/\1/p')
first=$(ls "$T/k" | sed -n 's/^interval\.\([0-9]*\)\.pb\.gz$/\1/p' | sort -n | head -1)
# h interval profiles were written (numbers 0..h-1) before the exit one (number h)
want=$((${h:-0} < 2 ? ${h:-0} : 2))
[ -n "$h" ] && [ "$n" -eq $want ] && [ "${first:-$h}" -eq $((h - want)) ] ||
    { fail "keep: $n interval profiles from ${first:-none}, exit profile ${h:-missing}; want the newest $want"; ls "$T/k" >&2; }
[ "${h:-0}" -ge 3 ] || echo "note: only ${h:-0} interval profiles in 2.75 s (slow dumps); keep checked on them"

# signal
mkdir "$T/s"
HEAPSIFT_RATE=1 HEAPSIFT_SIGNAL=USR2 HEAPSIFT_OUT="$T/s/t.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" until 0 0 3 "$T/s" >"$T/s.out" 2>"$T/s.err" &
pid=$!
i=0
while [ ! -e "$T/s/ready" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
[ -e "$T/s/ready" ] || fail "signal: the program was not running after 30 s"
for k in 1 2 3; do # each signal once the previous one's profile is there
    kill -USR2 $pid
    i=0
    while [ "$(count "$T/s" '^t\.signal\.')" -lt $k ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i + 1)); done
done
wait $pid || { fail "signal: status $?"; show "$T/s.err"; }
n=$(count "$T/s" '^t\.signal\.[0-9]*\.pb\.gz$')
[ "$n" -eq 3 ] || { fail "signal: $n profiles, want 3"; ls "$T/s" >&2; show "$T/s.err"; }
for f in "$T"/s/*.pb.gz; do check "$f"; done

[ $FAILS -eq 0 ] && echo "triggers_basic: ok"
exit $((FAILS > 0))

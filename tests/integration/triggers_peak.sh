#!/bin/sh
# triggers_peak: HEAPSIFT_PEAK=1 keeps the live set at the highest live heap even when the
# peak is long gone by exit (tests/programs/trig_prog.c peak: site_peak holds 64 MiB for
# 300 ms and until heapsift_stats shows the kept peak holding it, then only site_after's
# 4 MiB is live):
#  - the exit heap profile: site_after 4 MiB, no site_peak;
#  - the exit peak profile (kind "peak"): site_peak 64 MiB within 2% (rate 64 KiB: 1 MiB
#    objects are sampled with probability 1 - exp(-16), so the estimate is all but exact);
# and HEAPSIFT_PEAK_GROWTH=50% with HEAPSIFT_PEAK_MIN_SECONDS=0 on a heap growing to
# 64 MiB (each MiB once the kept peak holds the previous one, so a slow trigger thread
# cannot merge the steps): at least 3 and at most 12 peak files (log1.5(64) ~ 10, and the
# one at exit),
# each holding no less site_peak than the previous one. Every file reads with go tool pprof and heapsift top.
# usage: triggers_peak.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" triggers-peak
PROG=$BUILD/programs/trig_prog
command -v go >/dev/null 2>&1 || { echo "SKIP: go not found (go tool pprof is the reader)"; exit 77; }

site() { # FILE SITE -> inuse bytes (empty when absent)
    gotop "$1" inuse_space 2>/dev/null | table | awk -F '\t' -v s="$2" '$1 ~ "^" s { print $2 }'
}

near() { # GOT WANT TOL
    awk -v g="${1:-0}" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t * w) }'
}

HEAPSIFT_RATE=64K HEAPSIFT_PEAK=1 HEAPSIFT_OUT="$T/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" peak \
    >"$T/p.out" 2>"$T/p.err" || fail "peak: status $?"
[ -s "$T/p.pb.gz" ] && [ -s "$T/p.peak.pb.gz" ] || { fail "peak: missing profiles"; ls "$T" >&2; }
a=$(site "$T/p.pb.gz" site_after)
b=$(site "$T/p.pb.gz" site_peak)
near "$a" 4194304 0.02 || fail "exit profile: site_after holds '$a', want 4194304"
[ -z "$b" ] || fail "exit profile: site_peak holds '$b', want nothing"
b=$(site "$T/p.peak.pb.gz" site_peak)
a=$(site "$T/p.peak.pb.gz" site_after)
near "$b" 67108864 0.02 || { fail "peak profile: site_peak holds '$b', want 67108864"; gotop "$T/p.peak.pb.gz" inuse_space >"$T/top" 2>&1; show "$T/top"; }
[ -z "$a" ] || fail "peak profile: site_after holds '$a', want nothing"
hstop "$T/p.peak.pb.gz" inuse_space >/dev/null 2>&1 || fail "heapsift top cannot read the peak profile"
go tool pprof -raw "$T/p.peak.pb.gz" 2>/dev/null | grep -q 'kind=peak' || fail "peak profile: no kind=peak comment"

mkdir "$T/g"
HEAPSIFT_RATE=64K HEAPSIFT_PEAK_GROWTH=50% HEAPSIFT_PEAK_MIN_SECONDS=0 \
    HEAPSIFT_OUT="$T/g/%k.%n.pb.gz" LD_PRELOAD="$LIB" "$PROG" grow >"$T/g.out" 2>"$T/g.err" ||
    fail "grow: status $?"
prev=0 n=0
for f in $(ls "$T/g" | grep '^peak\.' | sort -t. -k2 -n); do
    n=$((n + 1))
    v=$(site "$T/g/$f" site_peak)
    [ -n "$v" ] || v=0
    awk -v a="$v" -v b="$prev" 'BEGIN { exit !(a >= b) }' ||
        fail "grow: $f holds $v, less than the previous peak dump ($prev)"
    prev=$v
done
[ $n -ge 3 ] && [ $n -le 12 ] || { fail "grow: $n peak profiles, want 3 to 12"; ls "$T/g" >&2; }
near "$prev" 67108864 0.1 || fail "grow: the last peak dump holds $prev, want about 64 MiB"

[ $FAILS -eq 0 ] && echo "triggers_peak: ok ($n growth dumps)"
exit $((FAILS > 0))

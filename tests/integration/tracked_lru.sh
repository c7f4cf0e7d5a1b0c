#!/bin/sh
# tracked_lru: the example cache (examples/tracked_lru.c) evicts when the tracker on its
# lru_put says it holds more than its quota; it prints, as it runs, the tracked figure
# against the bytes it really holds ("step N tracked T true B ci95 C ..."). Checked:
#  - without the library: no tracker (-ENOSYS), it evicts on the truth and stays within
#    its quota;
#  - HEAPSIFT_RATE=1: the tracked figure equals the truth at every step;
#  - HEAPSIFT_RATE=4096: at every step the tracked figure is within the quota and within
#    4 sigma of the truth, sigma bounded by sqrt(rate * true) (docs/labels.md), and its
#    ci95 (the upper side of the exact Poisson interval of its n samples) the normal
#    half-width 1.96 R sqrt(n) times x / (2 sinh(x/2)) .. 1, x = s/R at the largest entry
#    value (8192 bytes: 0.851), plus at most 1.5 / sqrt(n) of it (about one sample), and
#    within 0.5..1.05 of 1.96 sqrt(rate * true), the most the sampling variance can be
#    (sizes of 64..8192 bytes put it near 0.7, with 1,000+ samples a step); the exit profile read by go tool pprof -focus=lru_put and by
#    heapsift top --focus holds the final tracked figure (the same samples: equal up to
#    one byte of rounding per sample).
# usage: tracked_lru.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" tracked-lru
PROG=$BUILD/tracked_lru
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"
queries=50000 quota=2097152

"$PROG" $queries $quota >"$T/none" 2>&1 || fail "without the library: status $?"
grep -q '^no tracker (-38' "$T/none" || { fail "without the library: a tracker?"; show "$T/none"; }
awk -v q=$quota '$1 == "step" { n++; if ($6 > q) bad++ } END { exit !(n >= 10 && !bad) }' "$T/none" ||
    { fail "without the library: over the quota, or too few steps"; show "$T/none"; }

HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/exact.pb.gz" LD_PRELOAD="$LIB" "$PROG" $queries $quota >"$T/exact" 2>"$T/err" ||
    { fail "rate 1: status $?"; show "$T/err"; }
awk '$1 == "step" { n++; if ($4 != $6) { print "step " $2 ": tracked " $4 ", true " $6; bad++ } }
     END { exit !(n >= 10 && !bad) }' "$T/exact" >&2 || fail "rate 1: the tracked figure is not the truth"

rate=4096
HEAPSIFT_RATE=$rate HEAPSIFT_SEED=5 HEAPSIFT_OUT="$T/sampled.pb.gz" LD_PRELOAD="$LIB" "$PROG" $queries $quota >"$T/sampled" 2>"$T/err" ||
    { fail "rate $rate: status $?"; show "$T/err"; }
awk -v r=$rate -v q=$quota '$1 == "step" {
        n++; d = $4 - $6; if (d < 0) d = -d
        x = 8192 / r; lo = 1.96 * r * sqrt($10) * x / (exp(x / 2) - exp(-x / 2)) * 0.999
        hi = 1.96 * r * sqrt($10) * (1.001 + 1.5 / sqrt($10)); tr = 1.96 * sqrt(r * $6)
        if ($4 > q || d > 4 * sqrt(r * $6) || !($8 >= lo && $8 <= hi) || !($8 >= 0.5 * tr && $8 <= 1.05 * tr)) {
            printf "step %s: tracked %s, true %s, ci95 %s (quota %s, 4 sigma %.0f; ci95 %.0f..%.0f for %s samples, %.0f..%.0f from the truth)\n",
                   $2, $4, $6, $8, q, 4 * sqrt(r * $6), lo, hi, $10, 0.5 * tr, 1.05 * tr; bad++ }
    } END { exit !(n >= 10 && !bad) }' "$T/sampled" >&2 || fail "rate $rate: tracked figure off"
final=$(awk '$1 == "final" { print $4 }' "$T/sampled")
samples=$(awk '$1 == "final" { print $10 }' "$T/sampled")
theirs=$(go tool pprof -symbolize=none -top -unit=B -nodecount=0 -nodefraction=0 -focus='^lru_put$' \
    -sample_index=inuse_space "$T/sampled.pb.gz" | sed -n 's/^Showing nodes accounting for \([0-9.]*\)B*,.*/\1/p')
ours=$("$CLI" top --unit B --focus '^lru_put$' "$T/sampled.pb.gz" |
    sed -n 's/^Showing nodes accounting for \([0-9.]*\)B*,.*/\1/p')
for v in "go:$theirs" "heapsift:$ours"; do
    awk -v a="$final" -v b="${v#*:}" -v n="$samples" 'BEGIN { d = a - b; if (d < 0) d = -d
        exit !(b > 0 && d <= n) }' || fail "rate $rate: tracked $final, ${v%%:*} -focus=lru_put ${v#*:}"
done

[ $FAILS -eq 0 ] && echo "tracked_lru: ok"
exit $((FAILS > 0))

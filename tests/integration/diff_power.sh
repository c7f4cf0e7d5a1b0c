#!/bin/sh
# diff_power: heapsift diff must see a change of about 3 standard deviations. At
# HEAPSIFT_RATE=4096, tests/programs/grow's site_grow holds N objects of 4096 B, whose
# estimate has Var = N 4096^2 / (e - 1); 4000 -> 4207 objects is a change of
# 207 * 4096 B = 3.0 sqrt(Var_4000 + Var_4207). With the 1.96 threshold it is judged "grew"
# with probability P(Z > 1.96 - 3) = 85%; required: at least 12 of 20 seed pairs (chance
# of a false failure 0.1%). site_steady, unchanged, must not be judged "grew" in more than
# 3 pairs (5% expected false alarms, half of them "shrank").
# usage: diff_power.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" diff-power
PROG=$BUILD/programs/grow
hs_need_built "$LIB" "$CLI" "$PROG"
PAIRS=20

grew=0 steady=0 i=1
while [ $i -le $PAIRS ]; do
    rc=0
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$((2 * i)) HEAPSIFT_OUT="$T/a.pb.gz" LD_PRELOAD="$LIB" \
        "$PROG" 4000 >/dev/null 2>"$T/err" || rc=$?
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$((2 * i + 1)) HEAPSIFT_OUT="$T/b.pb.gz" LD_PRELOAD="$LIB" \
        "$PROG" 4207 >/dev/null 2>>"$T/err" || rc=$?
    if [ $rc -ne 0 ] || [ ! -s "$T/a.pb.gz" ] || [ ! -s "$T/b.pb.gz" ]; then
        fail "pair $i: grow failed (status $rc)"; show "$T/err"; i=$((i + 1)); continue
    fi
    "$CLI" diff "$T/a.pb.gz" "$T/b.pb.gz" >"$T/diff" 2>&1 || { fail "pair $i: heapsift diff"; show "$T/diff"; }
    grep -Eq ' grew +site_grow$' "$T/diff" && grew=$((grew + 1))
    grep -Eq ' grew +site_steady$' "$T/diff" && steady=$((steady + 1))
    rm -f "$T/a.pb.gz" "$T/b.pb.gz"
    i=$((i + 1))
done
echo "diff_power: a 3-sigma growth judged grown in $grew of $PAIRS pairs; unchanged site in $steady"
[ $grew -ge 12 ] || fail "a 3-sigma growth judged grown in only $grew of $PAIRS pairs (want >= 12)"
[ $steady -le 3 ] || fail "an unchanged site judged grown in $steady of $PAIRS pairs (want <= 3)"
[ $FAILS -eq 0 ] || exit 1
echo "diff_power: ok"

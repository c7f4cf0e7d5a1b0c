#!/bin/sh
# triggers_bad: bad trigger values and failing dumps never stop the program.
#  - each bad HEAPSIFT_SIGNAL / _INTERVAL_BYTES / _INTERVAL_SECONDS / _PEAK / _PEAK_GROWTH /
#    _PEAK_MIN_SECONDS / _OOM_FRACTION / _KEEP value: exactly one stderr line naming the
#    variable, the program's output and status unchanged, no profile written;
#  - HEAPSIFT_INTERVAL_SECONDS=0.3 into a directory that the program creates only once
#    heapsift_stats counts two failed dumps, then runs on until a dump is written: one
#    "cannot write profile" line (not one per trigger), then one "written again" line,
#    and interval profiles in the directory after it appeared.
# usage: triggers_bad.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" triggers-bad
PROG=$BUILD/programs/trig_prog

"$PROG" sleep 10 >"$T/want.out"
for kv in HEAPSIFT_SIGNAL=KILL HEAPSIFT_SIGNAL=SEGV HEAPSIFT_SIGNAL=NOPE HEAPSIFT_SIGNAL=99 \
    HEAPSIFT_INTERVAL_BYTES=12Q HEAPSIFT_INTERVAL_BYTES=-1 HEAPSIFT_INTERVAL_SECONDS=soon \
    HEAPSIFT_INTERVAL_SECONDS=1h HEAPSIFT_PEAK=maybe HEAPSIFT_PEAK_GROWTH=ten \
    HEAPSIFT_PEAK_MIN_SECONDS=-3 HEAPSIFT_OOM_FRACTION=1.5 HEAPSIFT_OOM_FRACTION=90 \
    HEAPSIFT_KEEP=lots; do
    var=${kv%%=*}
    rm -f "$T"/*.pb.gz
    rc=0
    env "$kv" HEAPSIFT_OUT="$T/x.pb.gz" LD_PRELOAD="$LIB" "$PROG" sleep 10 >"$T/out" 2>"$T/err" || rc=$?
    [ $rc -eq 0 ] || fail "$kv: status $rc"
    cmp -s "$T/out" "$T/want.out" || fail "$kv: output changed"
    [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "$var" "$T/err" ||
        { fail "$kv: want one stderr line naming $var"; show "$T/err"; }
    ! ls "$T"/*.pb.gz >/dev/null 2>&1 || fail "$kv: a profile was written"
done

mkdir "$T/d"
rc=0
HEAPSIFT_INTERVAL_SECONDS=0.3 HEAPSIFT_OUT="$T/d/made/t.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" until 0 2 1 "$T/d" >"$T/out" 2>"$T/err" || rc=$?
[ $rc -eq 0 ] || fail "failing dumps: status $rc"
c=$(grep -c 'cannot write profile' "$T/err" || true)
a=$(grep -c 'written again' "$T/err" || true)
n=$(ls "$T/d/made" 2>/dev/null | grep -c '^t\.interval\.' || true)
[ "$c" -eq 1 ] && [ "$a" -eq 1 ] && [ "$n" -ge 1 ] ||
    { fail "failing dumps: $c failure lines, $a recovery lines, $n profiles (want 1, 1, >= 1)"; show "$T/err"; }
[ $FAILS -eq 0 ] && echo "triggers_bad: ok"
exit $((FAILS > 0))

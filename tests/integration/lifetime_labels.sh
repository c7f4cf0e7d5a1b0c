#!/bin/sh
# lifetime_labels: the lifetime split of the profile on tests/programs/lifetimes.c, whose sites'
# lifetimes are known (site_short: freed at once; site_hold: freed after >= 200 ms;
# site_never: live at exit), at HEAPSIFT_RATE=1:
# - every total is unchanged: all four sample types per function exactly as the program
#   says, through go tool pprof and heapsift top;
# - objects freed carry a numeric label lifetime (nanoseconds, the bucket's upper bound):
#   with go tool pprof -tagfocus, site_short is all under 100 ms (and at least 90% under
#   1 ms), site_hold all in 1s:10s (200 ms..10 s), site_never has none; -tagignore keeps
#   only the live part; no sample with a lifetime label has inuse values;
# - heapsift top --tagfocus gives go tool pprof's figures, and heapsift traces shows the
#   label like pprof.
# Bounds are generous (the machine may be loaded): only the 200 ms sleep is a hard floor.
# usage: lifetime_labels.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" lifetime-labels
PROG=$BUILD/programs/lifetimes
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"
P=$T/lt.pb.gz
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$P" LD_PRELOAD="$LIB" "$PROG" >"$T/expect" 2>"$T/err" ||
    { cat "$T/err" >&2; echo "FAIL: lifetimes exited with status $?" >&2; exit 1; }

col=3
for st in alloc_objects alloc_space inuse_objects inuse_space; do
    gotop "$P" $st | table >"$T/go.$st"
    compare "go pprof $st" "$T/expect" "$T/go.$st" $col 0 || fail "go tool pprof $st: totals changed"
    hstop "$P" $st | table >"$T/hs.$st"
    compare "heapsift top $st" "$T/expect" "$T/hs.$st" $col 0 || fail "heapsift top $st: totals changed"
    col=$((col + 1))
done

# flat alloc_space of FUNC with a pprof filter: gofilt FILTER FUNC
gofilt() {
    go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 \
        -sample_index=alloc_space "$1" "$P" 2>/dev/null | table | awk -F '\t' -v f="$2" '$1 == f { v = $2 } END { print v + 0 }'
}
hsfilt() {
    "$CLI" top --sample-type alloc_space --unit B $1 "$P" | table | awk -F '\t' -v f="$2" '$1 == f { v = $2 } END { print v + 0 }'
}
check() { # check FILTER FUNC WANT
    g=$(gofilt "-$1" "$2")
    [ "$g" = "$3" ] || fail "go tool pprof -$1: $2 alloc_space $g, want $3"
    h=$(hsfilt "--$(echo "$1" | sed 's/=/ /')" "$2")
    [ "$h" = "$g" ] || fail "heapsift top --$1: $2 alloc_space $h, go tool pprof says $g"
}
check "tagfocus=lifetime=:100ms" site_short 100000
check "tagfocus=lifetime=:100ms" site_hold 0
check "tagfocus=lifetime=1s:10s" site_hold 20000
check "tagfocus=lifetime=1s:10s" site_short 0
check "tagfocus=lifetime=1ns:" site_never 0
check "tagignore=lifetime=1ns:" site_never 5000
check "tagignore=lifetime=1ns:" site_short 0
check "tagignore=lifetime=1ns:" site_hold 0
fast=$(gofilt "-tagfocus=lifetime=:1ms" site_short)
[ "$fast" -ge 90000 ] || fail "site_short: only $fast of 100000 bytes freed under 1 ms"

# Labelled samples never carry inuse values, and the bounds are the documented ones.
go tool pprof -raw "$P" 2>/dev/null | awk '
    /^Samples/ { on = 1; next } /^Locations/ { on = 0 }
    on && /:/ && $1 ~ /^[0-9]+$/ { io = $3 + 0; is = $4; sub(/:.*/, "", is); is += 0; next }
    on && /lifetime:/ {
        n = $0; sub(/.*lifetime:\[/, "", n); sub(/ nanoseconds\].*/, "", n)
        if (io != 0 || is != 0) { print "labelled sample with inuse " io " " is; bad++ }
        if (n !~ /^(1000|10000|100000|1000000|10000000|100000000|1000000000|10000000000|100000000000|9223372036854775807)$/) {
            print "lifetime " n " is no bucket bound"; bad++ }
        seen++
    }
    END { if (!seen) { print "no lifetime label"; bad++ } exit bad > 0 }' >"$T/raw.bad" ||
    { fail "lifetime labels"; show "$T/raw.bad"; }

# Our traces view shows the label like pprof -traces.
"$CLI" traces "$P" >"$T/traces"
awk '/lifetime:/ { l = $0 } / site_hold$/ && l ~ /lifetime: +1s$/ { ok = 1 } END { exit !ok }' "$T/traces" ||
    { fail "heapsift traces: no 'lifetime: 1s' sample of site_hold"; show "$T/traces" 40; }

[ "$FAILS" -eq 0 ] && echo "lifetime_labels: ok (site_short $fast/100000 B under 1 ms)"
exit $((FAILS > 0))

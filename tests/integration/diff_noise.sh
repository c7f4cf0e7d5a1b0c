#!/bin/sh
# heapsift diff's noise verdict on real sampled profiles. Same program, different
# HEAPSIFT_SEED, several seed pairs of tests/programs/sites and grow: the verdict is a 95%
# test, so about 5% of the rows that changed by chance are false alarms. Rows with a flat
# change are the independent ones; a caller row (judged on cum) repeats its callee's
# verdict, so one false alarm at a site shows on every caller above it. Required: 95% of
# the flat rows judged noise with a margin for chance (>= 90%), and >= 85% of all rows. A variant of grow that allocates 50% more at site_grow
# must have site_grow judged "grew" in every pair, and site_steady not. Profiles recorded
# at rate 1 are exact: the same program twice shows no change at all.
# Usage: diff_noise.sh BUILD_DIR SOURCE_DIR.
set -eu
build=$1
hs=$build/heapsift
lib=$build/libheapsift.so
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

prof() { # OUT SEED RATE PROGRAM ARGS...
    out=$1 seed=$2 rate=$3
    shift 3
    HEAPSIFT_RATE=$rate HEAPSIFT_SEED=$seed HEAPSIFT_OUT=$out LD_PRELOAD=$lib "$@" >/dev/null
}

verdicts() { # BASE NEW [diff options]: "flat|cum VERDICT" per row with a change
    b=$1 n=$2
    shift 2
    "$hs" diff "$@" "$b" "$n" | sed -n '/^ *flat /,$p' | tail -n +2 |
        awk '{print ($1 == "0" ? "cum" : "flat"), $6}' | grep -v ' same$' || true
}

fails=0
rows=0
noise=0
frows=0
fnoise=0
for prog in sites grow; do
    for pair in "1 2" "3 4" "5 6" "7 8" "9 10"; do
        set -- $pair
        prof "$tmp/a.pb.gz" "$1" 4096 "$build/programs/$prog"
        prof "$tmp/b.pb.gz" "$2" 4096 "$build/programs/$prog"
        for st in inuse_space alloc_objects; do
            v=$(verdicts "$tmp/a.pb.gz" "$tmp/b.pb.gz" --sample-type $st)
            rows=$((rows + $(printf '%s\n' "$v" | grep -c .)))
            noise=$((noise + $(printf '%s\n' "$v" | grep -c ' noise$')))
            frows=$((frows + $(printf '%s\n' "$v" | grep -c '^flat')))
            fnoise=$((fnoise + $(printf '%s\n' "$v" | grep -c '^flat noise$')))
        done
    done
done
echo "same program, different seeds: flat rows $fnoise of $frows judged noise" \
    "($((fnoise * 100 / (frows ? frows : 1)))%), all rows $noise of $rows" \
    "($((noise * 100 / (rows ? rows : 1)))%)"
[ $frows -gt 0 ] && [ $((fnoise * 100)) -ge $((frows * 90)) ] ||
    { echo "FAIL: under 90% of flat rows judged noise"; fails=$((fails + 1)); }
[ $((noise * 100)) -ge $((rows * 85)) ] ||
    { echo "FAIL: under 85% of all rows judged noise"; fails=$((fails + 1)); }

grew=0
for pair in "1 2" "3 4" "5 6" "7 8" "9 10"; do
    set -- $pair
    prof "$tmp/a.pb.gz" "$1" 4096 "$build/programs/grow" 4000
    prof "$tmp/b.pb.gz" "$2" 4096 "$build/programs/grow" 6000
    out=$("$hs" diff "$tmp/a.pb.gz" "$tmp/b.pb.gz")
    if printf '%s\n' "$out" | grep -Eq ' grew  site_grow$'; then
        grew=$((grew + 1))
    else
        echo "FAIL: site_grow not judged grown (seeds $1 $2)"
        printf '%s\n' "$out"
        fails=$((fails + 1))
    fi
    if printf '%s\n' "$out" | grep -Eq ' (grew|shrank)  site_steady$'; then
        echo "note: site_steady judged changed (seeds $1 $2): a 5% false alarm"
    fi
done
echo "grow 4000 -> 6000 objects: site_grow judged grown in $grew of 5 pairs"

prof "$tmp/a.pb.gz" 1 1 "$build/programs/grow"
prof "$tmp/b.pb.gz" 2 1 "$build/programs/grow"
v=$(verdicts "$tmp/a.pb.gz" "$tmp/b.pb.gz")
[ -z "$v" ] || { echo "FAIL: rate 1, same program: changes $v"; fails=$((fails + 1)); }
prof "$tmp/b.pb.gz" 2 1 "$build/programs/grow" 4001
"$hs" diff "$tmp/a.pb.gz" "$tmp/b.pb.gz" | grep -Eq ' grew  site_grow$' ||
    { echo "FAIL: rate 1: one more object is not judged growth"; fails=$((fails + 1)); }

echo "diff_noise: $fails failures"
[ $fails -eq 0 ]

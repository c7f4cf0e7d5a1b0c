#!/bin/sh
# heapsift lifetimes against known truth:
#  - generated profiles in the lifetimes format (tests/lib/gen_lifetimes.c: five sites with
#    random amounts per bucket, bounds in nanoseconds or in milliseconds): every row's
#    total, freed within 1 ms, freed after 1 s, live, equal the generator's truth exactly,
#    and equal what `go tool pprof` says with -tagfocus/-tagignore on the lifetime label
#    (an independent reader); churn and hold sites classified so;
#  - a real run of tests/programs/lifeprog under the library (a profile without lifetime
#    labels fails): site_short churns (>= 90% freed within 1 ms, median under 1 ms), site_medium's
#    memory is freed between 1 ms and 1 s (>= 90%, kind medium, median 10 ms..1 s), site_live
#    stays live (100%, median "live");
#  - bad input: an inuse sample type, a bad duration, a missing file, a non-profile.
# Usage: lifetimes.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" lifetimes
src=$2
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipping"; exit 77; }
hs_need_go
"${CC:-cc}" -std=gnu11 -O1 -I"$src/src/common" "$src/tests/lib/gen_lifetimes.c" \
    "$src/src/common/model/profile.c" "$src/src/common/model/pprof.c" "$src/src/common/base/gzip.c" \
    "$src/src/common/base/fileio.c" "$src/src/common/base/fdio.c" "$src/src/common/base/pb.c" \
    "$src/src/common/base/buf.c" "$src/src/common/base/utf8.c" -lz -o "$T/gen"

# rows JSON: "SITE TOTAL SHORT MID LONG LIVE KIND" per row (leaf = the site)
rows() {
    python3 -c '
import json, sys
for r in json.load(open(sys.argv[1]))["rows"]:
    mid = r["total"] - r["short"] - r["long"] - r["live"]
    print(r["frames"][0], r["total"], r["short"], mid, r["long"], r["live"], r["kind"])
' "$1"
}

# pprof_flat FILE SITE ARGS...: the flat alloc_space of SITE in bytes per go tool pprof
pprof_flat() {
    f=$1 site=$2
    shift 2
    go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -sample_index=alloc_space "$@" "$f" \
        2>/dev/null | awk -v s="$site" '$6 == s { v = $1; sub(/B$/, "", v); print v; found = 1 }
                                        END { if (!found) print 0 }'
}

checked=0
for unit in ns ms; do
    for seed in 1 2 3 4 5; do
        f=$T/g.$unit.$seed.pb.gz
        "$T/gen" "$f" $seed $unit >"$T/truth"
        "$CLI" lifetimes --json "$f" >"$T/j" || { fail "$unit $seed: lifetimes failed"; continue; }
        rows "$T/j" >"$T/rows"
        while read -r site total short mid long live; do
            got=$(awk -v s="$site" '$1 == s { print $2, $3, $4, $5, $6 }' "$T/rows")
            [ "$got" = "$total $short $mid $long $live" ] ||
                fail "$unit seed $seed $site: got '$got', truth '$total $short $mid $long $live'"
            checked=$((checked + 1))
            a=$(pprof_flat "$f" "$site" -tagfocus=lifetime=:1ms)
            b=$(pprof_flat "$f" "$site" -tagfocus=lifetime=10s:)
            c=$(pprof_flat "$f" "$site" -tagignore=lifetime=0ns:)
            [ "$a $b $c" = "$short $long $live" ] ||
                fail "$unit seed $seed $site: go tool pprof says short/long/live '$a $b $c', truth '$short $long $live'"
        done <"$T/truth"
        for want in "site_churn churn" "site_hold holds" "site_live holds"; do
            set -- $want
            [ "$(awk -v s="$1" '$1 == s { print $7 }' "$T/rows")" = "$2" ] ||
                fail "$unit seed $seed: $1 not classified $2"
        done
    done
done
echo "generated profiles: $checked rows equal to the truth"

# The table and its options on one of them.
"$T/gen" "$T/g.pb.gz" 7 ns >/dev/null
"$CLI" lifetimes -n 2 --sort short "$T/g.pb.gz" >"$T/t" || fail "table failed"
grep -q '^Lifetimes of alloc_space in .*freed within 1ms' "$T/t" && [ "$(wc -l <"$T/t")" -eq 4 ] &&
    sed -n 3p "$T/t" | grep -q 'site_churn < main$' || { fail "table (--sort short, -n 2)"; show "$T/t"; }
"$CLI" lifetimes --leaf --short 10us --long 100ms --sample-type alloc_objects "$T/g.pb.gz" >"$T/t" &&
    grep -q '<10us 10us-100ms    >=100ms' "$T/t" && grep -q ' site_live$' "$T/t" ||
    { fail "table (--leaf --short --long --sample-type)"; show "$T/t"; }
"$CLI" lifetimes --leaf --short=10us --long=100ms --sort=alloc --sample-type alloc_objects \
    "$T/g.pb.gz" >"$T/t2" && cmp -s "$T/t" "$T/t2" ||
    { fail "--short=D --long=D --sort=K differ from the spaced forms"; show "$T/t2"; }

# A filter that keeps no freed part leaves the profile's lifetimes: no "no lifetime labels" note.
"$CLI" lifetimes --tagignore lifetime=0ns: "$T/g.pb.gz" >"$T/t" 2>"$T/err" && [ ! -s "$T/err" ] &&
    grep -q ' 0.0% freed within 1ms, .* 100.0% still live' "$T/t" ||
    { fail "--tagignore lifetime=0ns: (live part only)"; show "$T/err"; show "$T/t"; }

# A real run: lifetimes as the recorder writes them.
HEAPSIFT_RATE=8192 HEAPSIFT_SEED=1 HEAPSIFT_OUT="$T/real.pb.gz" LD_PRELOAD="$LIB" \
    "$BUILD/programs/lifeprog" 30
"$CLI" lifetimes --json "$T/real.pb.gz" >"$T/j" 2>"$T/err" || fail "real run: lifetimes failed"
if grep -q "no lifetime labels" "$T/err"; then
    fail "real run: the recorder wrote no lifetime labels"
    show "$T/err"
else
    python3 -c '
import json, sys
rows, kinds, medians = {}, {}, {}
for r in json.load(open(sys.argv[1]))["rows"]:
    for f in r["frames"]:
        if f.startswith("site_"):
            a = rows.setdefault(f, [0, 0, 0, 0])
            a[0] += r["total"]; a[1] += r["short"]; a[2] += r["long"]; a[3] += r["live"]
            kinds[f] = r["kind"]; medians[f] = r["median_ns"]
            break
bad = 0
for site, kind, lo, hi in (("site_short", "churn", 0, 1e6), ("site_medium", "medium", 1e7, 1e9),
                           ("site_live", "holds", None, None)):
    m = medians.get(site)
    ok = kinds.get(site) == kind and (m is None if lo is None else m is not None and lo <= m <= hi)
    print("real run: %s kind %s, median %s ns" % (site, kinds.get(site), m))
    if not ok:
        print("FAIL: want %s, median in [%s, %s]" % (kind, lo, hi)); bad += 1
def share(site, i):
    t, v = rows[site][0], rows[site][i]
    return v / t if t else 0
for site, i, lo, what in (("site_short", 1, 0.9, "freed within 1ms"),
                          ("site_medium", 0, 0.9, "freed between 1ms and 1s"),
                          ("site_live", 3, 1.0, "live")):
    if site not in rows:
        print("missing", site); bad += 1; continue
    t = rows[site]
    s = (t[0] - t[1] - t[2] - t[3]) / t[0] if i == 0 else share(site, i)
    print("real run: %s %.1f%% %s" % (site, 100 * s, what))
    if s < lo:
        print("FAIL: want >= %.0f%%" % (100 * lo)); bad += 1
sys.exit(bad > 0)' "$T/j" || fail "real run: lifetimes not as the program made them"
fi

# Bad input: one line on stderr, the documented status, nothing on stdout.
cli_refuses lifetimes 1 "must be alloc_space or alloc_objects" --sample-type inuse_space "$T/g.pb.gz"
cli_refuses lifetimes 1 "bad duration '5parsecs'" --short 5parsecs "$T/g.pb.gz"
cli_refuses lifetimes 1 "unknown sort key" --sort size "$T/g.pb.gz"
cli_refuses lifetimes 1 "--short 2s is longer than --long 1s" --short 2s "$T/g.pb.gz"
cli_refuses lifetimes 1 "--short 10ms is longer than --long 5ms" --long=5ms --short 10ms "$T/g.pb.gz"
cli_refuses lifetimes 1 "missing value for '--long'" "$T/g.pb.gz" --long
cli_refuses lifetimes 1 "use heapsift top --tags" --tags "$T/g.pb.gz"
cli_refuses lifetimes 3 "missing.pb.gz" "$T/missing.pb.gz"
printf 'junk\n' >"$T/junk"
cli_refuses lifetimes 2 "junk" "$T/junk"

[ $FAILS -eq 0 ] || { echo "lifetimes: $FAILS failure(s)"; exit 1; }
echo "lifetimes: ok"

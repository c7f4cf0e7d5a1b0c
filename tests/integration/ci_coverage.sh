#!/bin/sh
# ci_coverage: the 95% intervals heapsift prints, end to end, on tests/programs/grow at
# HEAPSIFT_RATE=4096, whose live bytes are known exactly (site_grow and site_steady 4000
# objects of 4096 B, site_small 100000 of 64 B, nothing freed).
#  1. Formula: for one seed, `heapsift top --ci`'s flat half-width of each site equals
#     1.96 sqrt(N s^2 (1-p)/p) (docs/sampling.md) computed here from the N and B that
#     `go tool pprof` reads from the same profile, and the dump's "estimate: ...
#     ci95_bytes" (what heapsift_stats and the HTTP stats report) the same sum over all
#     live stacks.
#  2. Coverage: over HS_CI_SEEDS seeds (default 30), each site's interval covers its true
#     bytes, and the dump's live_bytes +- ci95_bytes covers the exact live bytes, about 95%
#     of the time: at least 80% of the 120 intervals are required (chance of a false
#     failure under 0.1%); an interval ten times too narrow covers about 15%.
# usage: ci_coverage.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" ci-coverage
PROG=$BUILD/programs/grow
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"
SEEDS=${HS_CI_SEEDS:-30}
RATE=4096

# cirows FILE: "NAME FLAT FLAT_HALF_WIDTH" per site row of `heapsift top --ci --unit B`
cirows() {
    "$CLI" top --ci --sample-type inuse_space --unit B "$1" | awk '
        $1 == "flat" { on = 1; next }
        on && $NF ~ /^site_/ { f = $1; h = $6; sub(/B$/, "", f); sub(/B$/, "", h)
                              print $NF, f, h }'
}

# 1. The formula, on seed 1.
HEAPSIFT_RATE=$RATE HEAPSIFT_SEED=1 HEAPSIFT_OUT="$T/f.pb.gz" LD_PRELOAD="$LIB" "$PROG" \
    2>"$T/f.err" || { show "$T/f.err"; fail "grow exited with an error"; }
[ -s "$T/f.pb.gz" ] || { echo "FAIL: no profile" >&2; exit 1; }
cirows "$T/f.pb.gz" >"$T/f.ci" || fail "heapsift top --ci failed"
go tool pprof -symbolize=none -raw "$T/f.pb.gz" >"$T/f.raw" 2>&1 ||
    { fail "go tool pprof -raw: $(head -3 "$T/f.raw")"; }
for st in inuse_objects inuse_space; do
    gotop "$T/f.pb.gz" $st | table >"$T/f.$st" || fail "go tool pprof -top $st"
done
awk -F '\t' -v r=$RATE '
    FILENAME ~ /inuse_objects$/ { n[$1] = $2; next }
    FILENAME ~ /inuse_space$/ { b[$1] = $2; next }
    { name = $1; sub(/ .*/, "", name); split($0, c, " "); got[name] = c[3] }
    END {
        for (s in got) {
            sz = b[s] / n[s]; p = 1 - exp(-sz / r)
            want = 1.96 * sqrt(n[s] * sz * sz * (1 - p) / p)
            d = got[s] - want; if (d < 0) d = -d
            if (n[s] <= 0 || d > 0.0001 * want + 0.01) {
                printf "%s: top --ci half-width %s, formula %.2f (N=%s B=%s)\n", s, got[s],
                       want, n[s], b[s]; bad++ }
            k++ }
        if (k != 3) { printf "%d site rows in top --ci, want 3\n", k; bad++ }
        exit bad > 0 }' "$T/f.inuse_objects" "$T/f.inuse_space" "$T/f.ci" >"$T/f.bad" 2>&1 ||
    { fail "top --ci against the formula"; show "$T/f.bad"; show "$T/f.ci"; }
# The dump's estimate: the same variance summed over every live stack of the profile.
awk -v r=$RATE '
    /^Comment: estimate:/ { for (i = 1; i <= NF; i++) if ($i ~ /^ci95_bytes=/) {
                                got = $i; sub(/.*=/, "", got) } }
    /^Samples:/ { on = 1; next }
    /^Locations/ { on = 0 }
    on && /:/ && $3 > 0 && $4 > 0 { sz = $4 / $3; p = 1 - exp(-sz / r)
                                   var += $3 * sz * sz * (1 - p) / p }
    END { want = 1.96 * sqrt(var); d = got - want; if (d < 0) d = -d
          if (got == "" || d > 0.01 * want) {
              printf "estimate ci95_bytes=%s, formula over the live samples %.0f\n", got, want
              exit 1 } }' "$T/f.raw" >"$T/f.est" 2>&1 ||
    { fail "the dump's ci95_bytes against the formula"; show "$T/f.est"; }

# 2. Coverage over seeds.
seed=1 trials=0 covered=0
while [ $seed -le "$SEEDS" ]; do
    out=$T/s$seed.pb.gz
    if ! HEAPSIFT_RATE=$RATE HEAPSIFT_SEED=$seed HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB" "$PROG" \
        2>"$T/s.err" || [ ! -s "$out" ]; then
        fail "seed $seed: grow failed or wrote no profile"; show "$T/s.err"
        seed=$((seed + 1)); continue
    fi
    res=$( { cirows "$out"; "$CLI" top --comments --unit B "$out" | grep -E '^(exact|estimate):'; } | awk '
        $1 == "site_grow" || $1 == "site_steady" { t = 4000 * 4096 }
        $1 == "site_small" { t = 100000 * 64 }
        $1 ~ /^site_/ { d = $2 - t; if (d < 0) d = -d; n++; c += (d <= $3); next }
        $1 == "exact:" { for (i = 2; i <= NF; i++) { split($i, kv, "="); ex[kv[1]] = kv[2] } }
        $1 == "estimate:" { for (i = 2; i <= NF; i++) { split($i, kv, "="); es[kv[1]] = kv[2] } }
        END { if (ex["frees"] == 0 && ex["bytes"] > 0 && es["ci95_bytes"] != "") {
                  d = es["live_bytes"] - ex["bytes"]; if (d < 0) d = -d
                  n++; c += (d <= es["ci95_bytes"]) }
              print n + 0, c + 0 }')
    set -- $res
    [ "$1" -eq 4 ] || fail "seed $seed: $1 intervals found, want 4 (3 sites and the estimate)"
    trials=$((trials + $1)) covered=$((covered + $2))
    rm -f "$out"
    seed=$((seed + 1))
done
echo "ci_coverage: $covered of $trials 95% intervals cover the truth ($SEEDS seeds, rate $RATE)"
[ $trials -gt 0 ] && [ $((covered * 100)) -ge $((trials * 80)) ] ||
    fail "coverage $covered of $trials is under 80% (nominal 95%)"

[ $FAILS -eq 0 ] || exit 1
echo "ci_coverage: ok"

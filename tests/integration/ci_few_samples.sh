#!/bin/sh
# ci_few_samples: the 95% intervals `heapsift top --ci` prints hold for sites with few
# samples (issue 23, item 9). tests/programs/sites ladder keeps eight sites whose live bytes
# are known exactly (4, 5, 6, 8, 10.8 and 16 MB of 4000-byte objects, 10.5 MB of 256 KiB
# objects, 12.6 MB of mixed 64 KiB and 1 MiB ones): 8 to 31 samples each at the default
# rate (512 KiB). Over HS_CI_SEEDS seeds (default 160, HEAPSIFT_SEED=1..160), each site's
# interval of inuse_space, LO..HI, is checked against its truth; a site with no sample has
# no row and counts as a miss. The normal interval heapsift printed before (est -+ 1.96
# sqrt(Var), Var from the row's objects and bytes) is computed from the same runs and
# printed beside, for information only.
#
# Thresholds (exact binomial tails; the script computes them for HS_CI_SEEDS): an interval
# whose true coverage is 95% covers K of N trials with K ~ Binomial(N, 0.95); require
#  - pooled over the 8 sites (N = 1280): K >= the largest t with P(K < t) < 0.5% (1195,
#    93.4%);
#  - per site (N = 160): K >= the largest t with P(K < t) < 0.5% / 8 (142, 88.8%);
# so a correct interval fails the test with probability under 1%. The exact Poisson
# interval heapsift prints is conservative (95.7 to 96.7% for the six small-object sites'
# mean counts of 7.6 to 30.4 samples, 96.6% for the 256 KiB site: exact sums over the
# Poisson and binomial counts), so it fails far less often. What the seeds can tell
# apart: the old normal interval covers 90 to 95% of the time at these counts (it swings
# with the count: 93.9% at the 4 MB site's 7.6 samples, 90.3% at the 5 MB site's 9.5),
# about 93% pooled; at 92.8% (the issue's figure) the pooled check fails 76% of the time,
# at 93.3% half the time, and a site whose interval covers 90% fails 25% of the time. So
# this test catches an interval that is clearly too narrow, not the old one reliably: 40
# seeds could not tell even that (the pooled threshold would be 88%); 160 seeds take
# about 12 s on 2 cores.
# bench/ci_coverage.sh runs 250 seeds of the ladder and of the usual sites.
# usage: ci_few_samples.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" ci-few-samples
PROG=$BUILD/programs/sites
hs_need_built "$LIB" "$CLI" "$PROG"
SEEDS=${HS_CI_SEEDS:-160}

"$PROG" ladder --expect | awk '$2 == "flat" { print $1, $6 }' >"$T/truth"
NSITES=$(wc -l <"$T/truth")
[ "$NSITES" -eq 8 ] || { fail "sites ladder --expect: $NSITES sites, want 8"; exit 1; }

# rows FILE: "SITE BYTES LO HI OBJECTS" per site row (objects from the folded stacks,
# which no node fraction trims)
rows() {
    "$CLI" collapsed --sample-type inuse_objects "$1" >"$T/obj" &&
        "$CLI" top --ci --unit B --sample-type inuse_space "$1" >"$T/ci" || return 1
    awk 'FILENAME ~ /obj$/ { leaf = $1; sub(/.*;/, "", leaf); n[leaf] += $NF; next }
        $1 == "flat" { on = 1; next }
        on && NF == 8 && $8 ~ /^ladder_/ {
            b = $1; split($6, iv, /\.\./); lo = iv[1]; hi = iv[2]
            sub(/B$/, "", b); sub(/B$/, "", lo); sub(/B$/, "", hi)
            print $8, b, lo, hi, n[$8] + 0 }' "$T/obj" "$T/ci"
}

seed=1
while [ $seed -le "$SEEDS" ]; do
    if ! HEAPSIFT_SEED=$seed HEAPSIFT_OUT="$T/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" ladder \
        2>"$T/err" || [ ! -s "$T/p.pb.gz" ]; then
        fail "seed $seed: sites ladder failed or wrote no profile"; show "$T/err"
        exit 1
    fi
    rows "$T/p.pb.gz" | sed "s/^/$seed /" >>"$T/rows" || { fail "seed $seed: heapsift"; exit 1; }
    rm -f "$T/p.pb.gz"
    seed=$((seed + 1))
done

# threshold N Q: the largest t with P(Binomial(N, 0.95) < t) < Q
threshold() {
    awk -v n="$1" -v q="$2" 'BEGIN {
        p = 0.95; lp = n * log(1 - p); c = 0
        for (t = 0; t <= n; t++) { c += exp(lp); if (c >= q) { print t; exit }
                                   lp += log((n - t) / (t + 1)) + log(p / (1 - p)) } }'
}
pool_t=$(threshold $((SEEDS * NSITES)) 0.005)
site_t=$(threshold "$SEEDS" "$(awk -v k="$NSITES" 'BEGIN { print 0.005 / k }')")

awk -v seeds="$SEEDS" -v rate=524288 -v pt="$pool_t" -v st="$site_t" '
    NR == FNR { t[$1] = $2; order[++nk] = $1; next }
    {
        s = $2; b = $3; n = $6; tr = t[s]
        cov[s] += ($4 <= tr && tr <= $5)
        if (b > 0 && n > 0) {
            sz = b / n; p = 1 - exp(-sz / rate); h = 1.96 * sqrt(n * sz * sz * (1 - p) / p)
            old[s] += (b - h <= tr && tr <= b + h)
        }
    }
    END {
        for (i = 1; i <= nk; i++) {
            s = order[i]; all += cov[s]; allold += old[s]
            printf "ci_few_samples: %-14s %6.2f MB: covered %3d of %d (%.1f%%); the normal interval %3d (%.1f%%)%s\n",
                s, t[s] / 1e6, cov[s], seeds, 100 * cov[s] / seeds, old[s], 100 * old[s] / seeds,
                cov[s] < st ? "  FAIL: under " st : ""
            bad += cov[s] < st
        }
        printf "ci_few_samples: all sites: covered %d of %d (%.1f%%, required %d); the normal interval %d (%.1f%%)\n",
            all, seeds * nk, 100 * all / (seeds * nk), pt, allold, 100 * allold / (seeds * nk)
        exit bad > 0 || all < pt
    }' "$T/truth" "$T/rows" || fail "coverage under the threshold (per site $site_t of $SEEDS, pooled $pool_t)"

[ $FAILS -eq 0 ] || exit 1
echo "ci_few_samples: ok"

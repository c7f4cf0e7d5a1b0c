#!/bin/sh
# ci_coverage: the 95% intervals heapsift prints, end to end, on tests/programs/grow at
# HEAPSIFT_RATE=4096, whose live bytes are known exactly (site_grow and site_steady 4000
# objects of 4096 B, site_small 100000 of 64 B, nothing freed).
#  1. Formula: for one seed, `heapsift top --ci`'s flat interval LO..HI of each site equals
#     Garwood's exact Poisson limits on the effective count n = B^2 / Var, scaled by
#     Var / B, Var = N s^2 (1-p)/p (docs/sampling.md), computed here (python3, bisection,
#     apart from src/common/base/specfun.c) from the N and B that `go tool pprof` reads from
#     the same profile; and the dump's "estimate: ... lo95_bytes hi95_bytes" (what
#     heapsift_stats and the HTTP stats report) the same over the variance summed over
#     all live stacks.
#  2. Coverage: over HS_CI_SEEDS seeds (default 30), each site's interval covers its true
#     bytes, and the dump's lo95_bytes..hi95_bytes covers the exact live bytes, about 95%
#     of the time: at least 80% of the 120 intervals are required (chance of a false
#     failure under 0.1%); an interval ten times too narrow covers about 15%. The sites
#     here have thousands of samples; tests/integration/ci_few_samples.sh checks the
#     intervals of sites with 8 to 31.
# usage: ci_coverage.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" ci-coverage
PROG=$BUILD/programs/grow
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"
SEEDS=${HS_CI_SEEDS:-30}
RATE=4096

# cirows FILE: "NAME FLAT LO HI" per site row of `heapsift top --ci --unit B`
cirows() {
    "$CLI" top --ci --sample-type inuse_space --unit B "$1" | awk '
        $1 == "flat" { on = 1; next }
        on && $NF ~ /^site_/ { f = $1; split($6, iv, /\.\./); lo = iv[1]; hi = iv[2]
                              sub(/B$/, "", f); sub(/B$/, "", lo); sub(/B$/, "", hi)
                              print $NF, f, lo, hi }'
}

# garwood: "NAME EST VAR" lines in, "NAME LO HI" out: the 95% Garwood limits of the count
# n = EST^2 / VAR (the 2.5% point of Gamma(n), the 97.5% point of Gamma(n + 1)), times
# VAR / EST. Regularized incomplete gamma by series and continued fraction, inverted by
# bisection.
garwood() {
    python3 -c '
import math, sys
def gamma_p(a, x):
    if x <= 0:
        return 0.0
    front = math.exp(-x + a * math.log(x) - math.lgamma(a))
    if x < a + 1:
        term = total = 1.0 / a
        k = a
        while abs(term) > abs(total) * 1e-16:
            k += 1
            term *= x / k
            total += term
        return total * front
    b, c, d = x + 1 - a, 1e300, 1 / (x + 1 - a)
    h, i = d, 1
    while True:
        an = -i * (i - a)
        b += 2
        d = 1 / (an * d + b or 1e-300)
        c = b + an / c or 1e-300
        h *= d * c
        i += 1
        if abs(d * c - 1) < 1e-16:
            return 1 - front * h
def quantile(a, p):
    lo, hi = 0.0, a + 20 * math.sqrt(a) + 20
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if gamma_p(a, mid) < p else (lo, mid)
    return (lo + hi) / 2
for line in sys.stdin:
    name, est, var = line.split()
    est, var = float(est), float(var)
    n = est * est / var
    lo = quantile(n, 0.025) if n > 0 else 0.0
    print(name, lo * var / est, quantile(n + 1, 0.975) * var / est)
'
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
    { split($0, c, " "); got[c[1]] = c[3] " " c[4] }
    END {
        for (s in got) {
            sz = b[s] / n[s]; p = 1 - exp(-sz / r)
            printf "%s %s %.17g\n", s, b[s], n[s] * sz * sz * (1 - p) / p
            printf "%s %s\n", s, got[s] >"/dev/stderr"
            k++ }
        if (k != 3) { printf "%d site rows in top --ci, want 3\n", k >"/dev/stderr"; exit 1 } }' \
    "$T/f.inuse_objects" "$T/f.inuse_space" "$T/f.ci" 2>"$T/f.got" >"$T/f.var" ||
    { fail "top --ci: the site rows"; show "$T/f.got"; show "$T/f.ci"; }
garwood <"$T/f.var" >"$T/f.want" || fail "garwood (python3)"
awk 'NR == FNR { lo[$1] = $2; hi[$1] = $3; next }
    { d = $2 - lo[$1]; e = $3 - hi[$1]; d = d < 0 ? -d : d; e = e < 0 ? -e : e
      if (!($1 in lo) || d > 1e-7 * lo[$1] + 0.01 || e > 1e-7 * hi[$1] + 0.01) {
          printf "%s: top --ci %s..%s, Garwood %.2f..%.2f\n", $1, $2, $3, lo[$1], hi[$1]; bad++ } }
    END { exit bad > 0 }' "$T/f.want" "$T/f.got" >"$T/f.bad" 2>&1 ||
    { fail "top --ci against the formula"; show "$T/f.bad"; show "$T/f.ci"; }
# The dump's estimate: the same interval over the variance summed over every live stack.
awk -v r=$RATE '
    /^Comment: estimate:/ { for (i = 1; i <= NF; i++) if ($i ~ /^(live|lo95|hi95)_bytes=/) {
                                split($i, kv, "="); e[kv[1]] = kv[2] } }
    /^Samples:/ { on = 1; next }
    /^Locations/ { on = 0 }
    on && /:/ && $3 > 0 && $4 > 0 { sz = $4 / $3; p = 1 - exp(-sz / r)
                                   var += $3 * sz * sz * (1 - p) / p }
    END { printf "estimate %s %.17g\n", e["live_bytes"], var
          printf "%s %s %s\n", e["live_bytes"], e["lo95_bytes"], e["hi95_bytes"] >"/dev/stderr" }' \
    "$T/f.raw" >"$T/f.evar" 2>"$T/f.egot"
garwood <"$T/f.evar" >"$T/f.ewant" || fail "garwood (python3) on the estimate"
read -r elive elo ehi <"$T/f.egot" || true
awk -v est="$elive" -v lo="$elo" -v hi="$ehi" '{ w1 = est - $2; w2 = $3 - est; d = lo - $2; e = hi - $3
        d = d < 0 ? -d : d; e = e < 0 ? -e : e
        if (lo == "" || d > 0.01 * w1 || e > 0.01 * w2) {
            printf "estimate lo95..hi95 %s..%s, Garwood over the live samples %.0f..%.0f\n",
                   lo, hi, $2, $3; exit 1 } }' "$T/f.ewant" >"$T/f.est" 2>&1 ||
    { fail "the dump's lo95_bytes..hi95_bytes against the formula"; show "$T/f.est"; }

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
        $1 ~ /^site_/ { n++; c += ($3 <= t && t <= $4); next }
        $1 == "exact:" { for (i = 2; i <= NF; i++) { split($i, kv, "="); ex[kv[1]] = kv[2] } }
        $1 == "estimate:" { for (i = 2; i <= NF; i++) { split($i, kv, "="); es[kv[1]] = kv[2] } }
        END { if (ex["frees"] == 0 && ex["bytes"] > 0 && es["hi95_bytes"] != "") {
                  n++; c += (es["lo95_bytes"] <= ex["bytes"] && ex["bytes"] <= es["hi95_bytes"]) }
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

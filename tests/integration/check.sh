#!/bin/sh
# heapsift check against known truth (tests/programs/grow: site_grow holds N blocks of
# 4096 bytes, site_steady 4000, site_small 100000 of 64 bytes).
#  - budgets on an exact profile (rate 1), each at both sides of its limit: --max-inuse at
#    the total go tool pprof reads and one byte under; --max '^site_grow$' at 4000 x 4096
#    bytes (also written 15.625MB) and one byte (or 15.62MB) under; a failing line names
#    the figure, the limit and the site; exit 0 when all pass, 4 when one fails;
#  - --no-new-growth: at rate 1 one more block is growth and the same run is not; at rate
#    4096, 20 pairs of runs with different seeds and no real change must pass, 20 pairs
#    where site_grow holds 50% more must fail naming site_grow, and 10 pairs of the sites
#    program (13 stacks) must pass; the share of right judgements is printed, >= 95%;
#  - usage and bad input: bad size suffix, nothing to check, --no-new-growth without
#    --base, a bad regular expression (1); a missing file (3); a non-profile (2).
# Usage: check.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" check

prof() { # OUT SEED RATE PROGRAM ARGS...
    out=$1 seed=$2 rate=$3
    shift 3
    HEAPSIFT_RATE=$rate HEAPSIFT_SEED=$seed HEAPSIFT_OUT=$out LD_PRELOAD=$LIB "$@" >/dev/null
}

# expect STATUS NEEDLE ARGS...: heapsift check ARGS exits STATUS with NEEDLE on stdout
expect() {
    want=$1 needle=$2
    shift 2
    st=0
    "$CLI" check "$@" >"$T/out" 2>"$T/err" || st=$?
    [ $st -eq "$want" ] && grep -qF -- "$needle" "$T/out" ||
        { fail "check $*: status $st (want $want), want '$needle' in:"; show "$T/out"; show "$T/err"; }
}

prof "$T/e.pb.gz" 1 1 "$BUILD/programs/grow" 4000
g=$((4000 * 4096))
expect 0 "ok    ^site_grow\$: 15.62MB of inuse_space (+-0) <= limit 15.62MB" --max "^site_grow\$=$g" "$T/e.pb.gz"
expect 4 "FAIL  ^site_grow\$: 15.62MB of inuse_space (+-0) > limit 15.62MB (--max '^site_grow\$=$((g - 1))'); largest site: site_grow 15.62MB" \
    --max "^site_grow\$=$((g - 1))" "$T/e.pb.gz"
expect 0 "ok    ^site_grow\$" --max '^site_grow$=15.625MB' "$T/e.pb.gz"
expect 4 "FAIL  ^site_grow\$" --max '^site_grow$=15.62MB' "$T/e.pb.gz"
if command -v go >/dev/null 2>&1; then
    total=$(gotop "$T/e.pb.gz" inuse_space | sed -n 's/^Showing nodes accounting for [0-9]*B, [0-9.]*% of \([0-9]*\)B total$/\1/p')
    [ -n "$total" ] || fail "no total from go tool pprof"
    expect 0 "ok    inuse_space" --max-inuse "$total" "$T/e.pb.gz"
    expect 4 "FAIL  inuse_space" --max-inuse "$((total - 1))" "$T/e.pb.gz"
    grep -Eq "largest site: site_(grow|steady) 15.62MB$" "$T/out" || { fail "--max-inuse: largest site"; show "$T/out"; }
fi
expect 4 "check: 1 of 2 checks failed" --max-inuse 1GB --max 'site_small=1MB' "$T/e.pb.gz"
expect 4 "check: 1 of 2 checks failed" --max-inuse=1GB --max='site_small=1MB' "$T/e.pb.gz"

# Growth, exact: one block more is growth; the same program twice is not.
prof "$T/e2.pb.gz" 2 1 "$BUILD/programs/grow" 4000
prof "$T/e3.pb.gz" 2 1 "$BUILD/programs/grow" 4001
expect 0 "ok    inuse_space: no stack grew" --no-new-growth --base "$T/e.pb.gz" "$T/e2.pb.gz"
expect 4 "FAIL  site_grow < main" --no-new-growth --base "$T/e.pb.gz" "$T/e3.pb.gz"
grep -q "grew 4kB against" "$T/out" || { fail "exact growth of one block"; show "$T/out"; }

# Growth, sampled: the noise judgement over seeds.
right=0 total=0 quiet=0 caught=0
for seed in $(seq 1 20); do
    prof "$T/b.pb.gz" "$seed" 4096 "$BUILD/programs/grow" 4000
    prof "$T/n.pb.gz" $((seed + 100)) 4096 "$BUILD/programs/grow" 4000
    prof "$T/g.pb.gz" $((seed + 200)) 4096 "$BUILD/programs/grow" 6000
    total=$((total + 2))
    if "$CLI" check --no-new-growth --base "$T/b.pb.gz" "$T/n.pb.gz" >"$T/out"; then
        right=$((right + 1)) quiet=$((quiet + 1))
    else
        echo "note: seed $seed: no real growth, judged grown:"; cat "$T/out"
    fi
    st=0
    "$CLI" check --no-new-growth --base "$T/b.pb.gz" "$T/g.pb.gz" >"$T/out" || st=$?
    if [ $st -eq 4 ] && grep -q "^FAIL  site_grow < main" "$T/out"; then
        right=$((right + 1)) caught=$((caught + 1))
    else
        echo "note: seed $seed: site_grow +50% not caught (status $st)"; cat "$T/out"
    fi
done
sites=0
for seed in $(seq 1 10); do
    prof "$T/b.pb.gz" "$seed" 4096 "$BUILD/programs/sites"
    prof "$T/n.pb.gz" $((seed + 100)) 4096 "$BUILD/programs/sites"
    total=$((total + 1))
    if "$CLI" check --no-new-growth --base "$T/b.pb.gz" "$T/n.pb.gz" >"$T/out"; then
        right=$((right + 1)) sites=$((sites + 1))
    else
        echo "note: sites seed $seed: no real growth, judged grown:"; cat "$T/out"
    fi
done
echo "noise judgement: $right of $total right ($((right * 100 / total))%): grow without change" \
    "passed $quiet of 20, with +50% at site_grow failed $caught of 20, sites passed $sites of 10"
[ $((right * 100)) -ge $((total * 95)) ] || fail "under 95% of the growth judgements right"

# Usage and bad input.
cli_refuses check 1 "bad size '10XB' for --max-inuse" --max-inuse 10XB "$T/e.pb.gz"
cli_refuses check 1 "bad size 'lots' for --max" --max 'site=lots' "$T/e.pb.gz"
cli_refuses check 1 "nothing to check" "$T/e.pb.gz"
cli_refuses check 1 "missing value for '--max-inuse'" "$T/e.pb.gz" --max-inuse
cli_refuses check 1 "use heapsift top --tags" --tags --max-inuse 1GB "$T/e.pb.gz"
cli_refuses check 1 "--no-new-growth needs --base" --no-new-growth "$T/e.pb.gz"
cli_refuses check 1 "check: bad --max regular expression '('" --max '(=1MB' "$T/e.pb.gz"
cli_refuses check 3 "missing.pb.gz" --max-inuse 1MB "$T/missing.pb.gz"
printf 'junk\n' >"$T/junk"
cli_refuses check 2 "junk" --max-inuse 1MB "$T/junk"

[ $FAILS -eq 0 ] || { echo "check: $FAILS failure(s)"; exit 1; }
echo "check: ok"

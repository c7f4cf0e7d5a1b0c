#!/bin/sh
# heapsift suspects against known truth. tests/programs/leakseries dumps after each of 10
# steps: site_leak grows 256 KiB a step, site_drip 64 KiB a step (both never free),
# site_churn renews an 8 MiB ring every step (constant live bytes), site_flat holds 8 MiB
# from the start.
#  - noise judgement, 20 seeds at rate 65536: site_leak must be judged growing, site_flat
#    and site_churn not; the share of right judgements is printed and must be >= 95%;
#    site_leak must rank first every time; site_drip's detection rate is printed
#    (it grows 640 KiB in all, about 3 noise standard deviations: >= 80% required);
#  - values: the "last" value of site_leak equals `go tool pprof`'s inuse_space of its
#    stack in the last profile, byte for byte (an independent reader);
#  - rate 1 (exact): growth of site_leak exactly 9 x 256 KiB, site_drip 9 x 64 KiB,
#    site_churn and site_flat 0 and not growing;
#  - a directory of interval-trigger dumps (HEAPSIFT_INTERVAL_SECONDS), read in time order;
#  - two runs' dumps mixed in one directory: a warning;
#  - bad input: one profile, empty directory, missing file, a non-profile, a bad option.
# Usage: suspects.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" suspects
PROG=$BUILD/programs/leakseries
command -v python3 >/dev/null 2>&1 || { echo "python3 not found: skipping"; exit 77; }
hs_need_go

# series DIR SEED RATE: the 10 dumps of leakseries in DIR
series() {
    rm -rf "$1" && mkdir -p "$1"
    HEAPSIFT_RATE=$3 HEAPSIFT_SEED=$2 HEAPSIFT_OUT="$T/exit.pb.gz" LD_PRELOAD="$LIB" \
        "$PROG" 10 "$1" >/dev/null
}

# verdicts JSON: "SITE VERDICT GROWTH LAST RANK" for each block < site_* stack
verdicts() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for rank, s in enumerate(d["stacks"], 1):
    f = s["frames"]
    if len(f) > 1 and f[0] == "block" and f[1].startswith("site_"):
        print(f[1], s["verdict"], s["growth"], s["last"], rank)
' "$1"
}

right=0 total=0 first=0 drip=0
for seed in $(seq 1 20); do
    series "$T/s" "$seed" 65536
    "$CLI" suspects --all --json "$T/s" >"$T/j" || { fail "seed $seed: suspects failed"; continue; }
    verdicts "$T/j" >"$T/v"
    for site in site_leak site_flat site_churn; do
        v=$(awk -v s=$site '$1 == s { print $2 }' "$T/v")
        total=$((total + 1))
        case "$site:$v" in
        site_leak:growing | site_flat:flat | site_flat:noise | site_churn:noise | site_churn:shrinking)
            right=$((right + 1)) ;;
        *) echo "note: seed $seed: $site judged '$v'" ;;
        esac
    done
    [ "$(awk '$1 == "site_leak" { print $5 }' "$T/v")" = 1 ] && first=$((first + 1)) ||
        { echo "note: seed $seed: site_leak not ranked first"; show "$T/v"; }
    [ "$(awk '$1 == "site_drip" { print $2 }' "$T/v")" = growing ] && drip=$((drip + 1))
done
echo "noise judgement: $right of $total right ($((right * 100 / total))%);" \
    "site_leak ranked first in $first of 20; site_drip (3 sd) detected in $drip of 20"
[ $((right * 100)) -ge $((total * 95)) ] || fail "under 95% of the judgements right"
[ $first -eq 20 ] || fail "site_leak not ranked first in every run"
[ $drip -ge 16 ] || fail "site_drip detected in under 80% of the runs"

# The last value of site_leak's stack, against go tool pprof on the last profile.
last=$(ls "$T/s"/step.*.pb.gz | tail -1)
theirs=$(go tool pprof -symbolize=none -traces -unit=B -sample_index=inuse_space "$last" 2>/dev/null |
    awk '/^-+\+/ { if (st == "block;site_leak") sum += v; st = ""; v = 0; n = 0; next }
         NF >= 2 && $1 ~ /B$/ && n == 0 { v = $1; sub(/B$/, "", v); st = $2; n = 1; next }
         n == 1 && NF == 1 { st = st ";" $1; n = 2 }
         END { print sum + 0 }')
ours=$(awk '$1 == "site_leak" { print $4 }' "$T/v")
[ "$ours" = "$theirs" ] || fail "site_leak last value $ours, go tool pprof says $theirs"

# Rate 1: exact growth.
series "$T/e" 1 1
"$CLI" suspects --all --json "$T/e" >"$T/j" && verdicts "$T/j" >"$T/v" || fail "rate 1: suspects failed"
for want in "site_leak growing $((9 * 64 * 4096))" "site_drip growing $((9 * 16 * 4096))" \
    "site_churn flat 0" "site_flat flat 0"; do
    set -- $want
    got=$(awk -v s="$1" '$1 == s { print $1, $2, $3 }' "$T/v")
    [ "$got" = "$want" ] || { fail "rate 1: want '$want', got '$got'"; show "$T/v"; }
done
"$CLI" suspects "$T/e" >"$T/table" || fail "rate 1: table failed"
grep -q "^Leak suspects: 10 profiles over .*2 of [0-9]* stacks grow beyond" "$T/table" &&
    sed -n 3p "$T/table" | grep -q 'growing   block < site_leak' ||
    { fail "rate 1: table header or first row"; show "$T/table"; }
# Files without a profile's name beside the dumps (a README, a flame graph) are not read;
# a profile-named file that is no profile is an error naming it.
echo notes >"$T/e/README"
"$CLI" flamegraph -o "$T/e/heap.svg" "$T/e/step.000.pb.gz"
"$CLI" suspects "$T/e" >"$T/table2" && cmp -s "$T/table" "$T/table2" ||
    { fail "README and SVG in the directory"; show "$T/table2"; }
printf 'junk\n' >"$T/e/zz.pb.gz"
cli_refuses suspects 2 "zz.pb.gz" "$T/e"
rm -f "$T/e/README" "$T/e/heap.svg" "$T/e/zz.pb.gz"

# Interval trigger: a directory of timed dumps, in time order whatever their names.
mkdir -p "$T/iv"
# 16 steps of 100 ms (about 30 intervals of 50 ms), and on until heapsift_stats has counted
# a dump written during the sleeps of 3 different steps (leakseries' DUMPS, 60 s at most,
# else status 3): a starved trigger thread makes the run longer, not the series shorter.
# Fewer than 3 dumps is a failure, not a skip.
st=0
HEAPSIFT_RATE=65536 HEAPSIFT_SEED=3 HEAPSIFT_INTERVAL_SECONDS=0.05 \
    HEAPSIFT_OUT="$T/iv/p.%k.%n.pb.gz" LD_PRELOAD="$LIB" "$PROG" 16 - 100 - 3 >/dev/null 2>"$T/iv.err" ||
    st=$?
[ $st -eq 0 ] || { fail "interval: leakseries exited $st"; show "$T/iv.err"; }
n=$(ls "$T/iv" | wc -l)
if [ "$n" -ge 3 ]; then
    "$CLI" suspects --json "$T/iv" >"$T/j" && verdicts "$T/j" >"$T/v" || fail "interval: suspects failed"
    awk '$1 == "site_leak" && $2 == "growing" && $5 == 1 { ok = 1 } END { exit !ok }' "$T/v" ||
        { fail "interval ($n dumps): site_leak not first and growing"; show "$T/v"; }
    python3 -c '
import json, sys
t = [p["t"] for p in json.load(open(sys.argv[1]))["profiles"]]
sys.exit(0 if t == sorted(t) and t[0] == 0 else 1)' "$T/j" || fail "interval: profiles not in time order"
else
    fail "interval: only $n dumps at HEAPSIFT_INTERVAL_SECONDS=0.05, want >= 3"
fi

# Profiles written at the same time (here one twice): untimed, said in the header, slope per profile.
"$CLI" suspects --all "$T/e/step.000.pb.gz" "$T/e/step.000.pb.gz" >"$T/u" &&
    head -1 "$T/u" | grep -q '^Leak suspects: 2 profiles (untimed: in the order given, slope per profile), inuse_space; 0 of ' &&
    sed -n 3p "$T/u" | grep -q '^ *0/prof  *0 ' ||
    { fail "untimed header and slope"; show "$T/u"; }

# Two runs' dumps in one directory: analysed, with one warning naming how many each run
# has and one of each; none once one run's are removed.
mkdir -p "$T/mix"
for i in 0 1 2 3 4; do cp "$T/e/step.00$i.pb.gz" "$T/mix/a.$i.pb.gz"; done
for i in 5 6 7; do cp "$T/s/step.00$i.pb.gz" "$T/mix/b.$i.pb.gz"; done
"$CLI" suspects "$T/mix" >"$T/mix.out" 2>"$T/mix.err" && [ -s "$T/mix.out" ] &&
    [ "$(wc -l <"$T/mix.err")" -eq 1 ] &&
    grep -qF "warning: suspects: these profiles come from 2 processes (5 like $T/mix/a.0.pb.gz, 3 like $T/mix/b.5.pb.gz)" "$T/mix.err" ||
    { fail "two runs in one directory: no warning"; show "$T/mix.err"; }
rm "$T"/mix/b.*
"$CLI" suspects "$T/mix" >/dev/null 2>"$T/mix.err" && [ ! -s "$T/mix.err" ] ||
    { fail "one run's dumps after the other's were removed"; show "$T/mix.err"; }

# Bad input: one line on stderr, status 2 (bad input) or 3 (I/O), nothing on stdout.
mkdir -p "$T/empty"
cli_refuses suspects 2 "no profiles in this directory" "$T/empty"
cli_refuses suspects 2 "at least two profiles" "$T/e/step.000.pb.gz"
cli_refuses suspects 3 "missing.pb.gz" "$T/e/step.000.pb.gz" "$T/missing.pb.gz"
cli_refuses suspects 3 "missing: No such file or directory" "$T/missing"
printf 'not a profile\n' >"$T/junk.pb.gz"
cli_refuses suspects 2 "junk.pb.gz" "$T/e/step.000.pb.gz" "$T/junk.pb.gz"
printf 'heap profile:    1:   100 [   1:   100] @ heapprofile\n   1:   100 [   1:   100] @ 0x401000\n' >"$T/g.heap"
cli_refuses suspects 2 "step.000.pb.gz has other sample types than $T/g.heap" "$T/g.heap" "$T/e/step.000.pb.gz"
cli_refuses suspects 1 "see heapsift suspects --help" --bogus "$T/e"
cli_refuses suspects 1 "use heapsift top --tags" --tags "$T/e"

[ $FAILS -eq 0 ] || { echo "suspects: $FAILS failure(s)"; exit 1; }
echo "suspects: ok"

#!/bin/sh
# bench/ci_coverage.sh: how often the 95% interval heapsift prints covers the truth, per
# site, over many seeds (issue 23, item 9). tests/programs/sites in two modes at the default
# rate (512 KiB): "ladder" (sites of 4 to 16 MB of small objects, one of 256 KiB objects,
# one of mixed 64 KiB and 1 MiB objects: 8 to 31 samples each) and "all" (its usual sites,
# 12.8 to 16.4 MB: 24 to 31 samples). For each seed and site with known live bytes
# (`sites --expect`), it reads the row's inuse_space and interval from `heapsift top --ci`
# (the interval now printed: exact Poisson limits on the effective sample count) and
# computes the interval printed before, the normal est -+ 1.96 sqrt(Var) with Var from the
# row's objects and bytes (docs/sampling.md). A site with no sample has no row: both
# intervals count it as a miss. The table gives each site's coverage under both; the
# integration test tests/integration/ci_few_samples.sh runs the ladder with fewer seeds.
# usage: sh bench/ci_coverage.sh BUILD [--record]
# env: SEEDS (250), MODES ("ladder all"), SEED_BASE (0: seeds SEED_BASE+1..SEED_BASE+SEEDS)
set -eu
BENCH_NO_BEFORE=1
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/ci_coverage.sh BUILD [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=$build/libheapsift.so cli=$build/heapsift prog=$build/programs/sites
for f in "$lib" "$cli" "$prog"; do
    [ -x "$f" ] || [ -f "$f" ] || { echo "ci_coverage: no $f (build first)" >&2; exit 1; }
done
seeds=${SEEDS:-250}
base=${SEED_BASE:-0}
modes=${MODES:-ladder all}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-cicov.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')

# rows MODE PROFILE: "MODE SITE BYTES LO HI OBJECTS" per site row with a flat value (the
# objects from the folded stacks, which no node fraction trims)
rows() {
    "$cli" collapsed --sample-type inuse_objects "$2" >"$tmp/obj" || return 1
    "$cli" top --ci --unit B --sample-type inuse_space "$2" >"$tmp/ci" || return 1
    awk -v m="$1" '
        FILENAME ~ /obj$/ { leaf = $1; sub(/.*;/, "", leaf); n[leaf] += $NF; next }
        FILENAME ~ /ci$/ && $1 == "flat" { onc = 1; next }
        FILENAME ~ /ci$/ && onc && NF == 8 && $1 != "0" {
            b = $1; sub(/B$/, "", b); split($6, iv, /\.\./); lo = iv[1]; hi = iv[2]
            sub(/B$/, "", lo); sub(/B$/, "", hi)
            print m, $8, b, lo, hi, n[$8] + 0 }' "$tmp/obj" "$tmp/ci"
}

for mode in $modes; do
    "$prog" "$mode" --expect | awk -v m="$mode" '$2 == "flat" && $6 > 0 { print m, $1, $6 }' \
        >>"$tmp/truth"
    s=$((base + 1))
    while [ "$s" -le "$((base + seeds))" ]; do
        HEAPSIFT_SEED=$s HEAPSIFT_OUT="$tmp/p.pb.gz" LD_PRELOAD="$lib" "$prog" "$mode" \
            2>"$tmp/err" || { echo "ci_coverage: $mode seed $s: $(head -n 2 "$tmp/err")" >&2; exit 1; }
        rows "$mode" "$tmp/p.pb.gz" | sed "s/^/$s /" >>"$tmp/rows"
        rm -f "$tmp/p.pb.gz"
        s=$((s + 1))
    done
    echo "ci_coverage: $mode: $seeds seeds" >&2
done

{
    echo
    echo "## $started: coverage of the 95% intervals over seeds (bench/ci_coverage.sh)"
    echo
    bench_machine "$loadavg" "$lib"
    echo "- $seeds seeds (HEAPSIFT_SEED=$((base + 1))..$((base + seeds))) per mode, tests/programs/sites $modes, default rate 524288; inuse_space of each site's row"
    echo
    echo "| mode | site | truth (MB) | mean effective samples | normal interval covers (before) | exact Poisson interval covers (now) | now: truth above the interval | now: below |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
    # truth: MODE SITE BYTES; rows: SEED MODE SITE BYTES LO HI OBJECTS
    awk -v seeds="$seeds" -v rate=524288 '
        FILENAME ~ /truth$/ { k = $1 " " $2; t[k] = $3; order[++nk] = k; next }
        {
            k = $2 " " $3; if (!(k in t)) next
            b = $4; n = $7; tr = t[k]
            if (b > 0 && n > 0) {
                s = b / n; p = 1 - exp(-s / rate); v = n * s * s * (1 - p) / p
                h = 1.96 * sqrt(v); old[k] += (tr >= b - h && tr <= b + h)
                neff[k] += v > 0 ? b * b / v : 0
            }
            new[k] += ($5 <= tr && tr <= $6); above[k] += tr > $6; below[k] += tr < $5
            seen[k]++
        }
        END {
            for (i = 1; i <= nk; i++) {
                k = order[i]; split(k, mk, " ")
                printf "| %s | %s | %.2f | %.1f | %.1f%% (%d/%d) | %.1f%% (%d/%d) | %d | %d |\n",
                    mk[1], mk[2], t[k] / 1e6, seen[k] ? neff[k] / seen[k] : 0,
                    100 * old[k] / seeds, old[k], seeds, 100 * new[k] / seeds, new[k], seeds,
                    above[k], below[k]
                to[mk[1]] += old[k]; tn[mk[1]] += new[k]; tt[mk[1]] += seeds
                if (!(mk[1] in done)) { done[mk[1]] = 1; ms[++nm] = mk[1] }
            }
            for (i = 1; i <= nm; i++)
                printf "| %s | all sites | | | %.1f%% (%d/%d) | %.1f%% (%d/%d) | | |\n", ms[i],
                    100 * to[ms[i]] / tt[ms[i]], to[ms[i]], tt[ms[i]],
                    100 * tn[ms[i]] / tt[ms[i]], tn[ms[i]], tt[ms[i]]
        }' "$tmp/truth" "$tmp/rows"
    echo
    echo "A site with no sample in a run has no row and counts as a miss for both intervals."
} >"$tmp/report"
cat "$tmp/report"
[ "$record" = 0 ] || bench_record "$here" "$tmp/report"

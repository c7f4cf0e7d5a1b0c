#!/bin/sh
# bench/labels_cost.sh: what labels and trackers add to a sample. bench/sample_cost (64
# frames deep, every malloc sampled at HEAPSIFT_RATE=1, default unwinder) in interleaved
# rounds: HEAPSIFT_RATE=0 (the floor), RATE=1 plain, with 2 and 16 labels on the thread,
# with 1 and 32 trackers counting every sample; and, with --before LIB (a libheapsift.so
# built without the feature), RATE=1 with that library. Two tables: the median over rounds
# of each configuration's pair p50 and its cost per sample (minus RATE=0's), load
# dependent; and the instructions per malloc+free pair inside the timed loop under
# callgrind (one run each, 21000 pairs: deterministic), when valgrind is installed.
# usage: sh bench/labels_cost.sh BUILD [--before LIB] [--record]
# env: ROUNDS (5), N (200000), CC (gcc)
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/labels_cost.sh BUILD [--before LIB] [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=$build/libheapsift.so
rounds=${ROUNDS:-5}
n=${N:-200000}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-labels-cost.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
"${CC:-gcc}" -std=gnu11 -fno-omit-frame-pointer -I"$top/include" -O2 -g -o "$tmp/sample_cost" \
    "$here/sample_cost.c"

configs="rate0 plain labels2 labels16 trackers1 trackers32"
[ -n "$before" ] && configs="$configs before"

# env_of CONFIG: sets "$@" to the environment of that configuration.
env_of() {
    cfg=$1
    set -- "LD_PRELOAD=$lib" HEAPSIFT_RATE=1
    case $cfg in
    rate0) set -- "LD_PRELOAD=$lib" HEAPSIFT_RATE=0 ;;
    labels*) set -- "$@" "SAMPLE_COST_LABELS=${cfg#labels}" ;;
    trackers*) set -- "$@" "SAMPLE_COST_TRACKERS=${cfg#trackers}" ;;
    before) set -- "LD_PRELOAD=$before" HEAPSIFT_RATE=1 ;;
    esac
    echo "$@" "HEAPSIFT_OUT=$tmp/p.%p.pb.gz"
}

r=0
echo "labels_cost: $rounds rounds x $(echo $configs | wc -w) configurations" >&2
while [ "$r" -lt "$rounds" ]; do
    for c in $configs; do
        # shellcheck disable=SC2046
        env $(env_of $c) "$tmp/sample_cost" "$n" 64 64 >"$tmp/out" 2>"$tmp/err" ||
            { echo "labels_cost: sample_cost failed ($c)" >&2; cat "$tmp/err" >&2; exit 1; }
        [ ! -s "$tmp/err" ] || { echo "labels_cost: $c: $(head -n 2 "$tmp/err")" >&2; exit 1; }
        echo "$c $(sed -n 's/^pair_ns: p50=\([0-9]*\) .*/\1/p' "$tmp/out")" >>"$tmp/res"
        rm -f "$tmp"/p.*.pb.gz
    done
    r=$((r + 1))
done
: >"$tmp/ir"
if command -v valgrind >/dev/null 2>&1; then
    for c in $configs; do
        # shellcheck disable=SC2046
        env $(env_of $c) valgrind --tool=callgrind --toggle-collect=measure \
            --callgrind-out-file="$tmp/cg.out" "$tmp/sample_cost" 20000 64 64 >/dev/null 2>"$tmp/err" ||
            { echo "labels_cost: callgrind failed ($c)" >&2; tail -n 3 "$tmp/err" >&2; exit 1; }
        echo "$c $(sed -n 's/^summary: //p' "$tmp/cg.out")" >>"$tmp/ir"
        rm -f "$tmp"/p.*.pb.gz
    done
fi

{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): labels and trackers on the sampled path (bench/labels_cost.sh)"
    echo
    bench_machine "$loadavg" "$lib"
    echo "- workload: \`sample_cost $n 64 64\` (every malloc sampled, 64 frames), $rounds rounds;" \
        "labelsK: K labels on the thread, trackersT: T trackers on the timed function" \
        "(each sample counted T times)${before:+; before: $before}"
    echo
    echo "| configuration | pair p50 (ns, median) | cost per sample (ns) |"
    echo "| --- | --- | --- |"
    awk -v configs="$configs" "$awk_lib"'
        { v[$1] = v[$1] " " $2 }
        END {
            z = median(v["rate0"])
            n = split(configs, cs, " ")
            for (i = 1; i <= n; i++) {
                m = median(v[cs[i]])
                printf "| %s | %.0f | %s |\n", cs[i], m, cs[i] == "rate0" ? "-" : sprintf("%.0f", m - z)
            }
        }' "$tmp/res"
    if [ -s "$tmp/ir" ]; then
        echo
        echo "| configuration | instructions per sampled malloc+free (callgrind) | vs plain |"
        echo "| --- | --- | --- |"
        awk '{ ir[$1] = $2 / 21000; o[NR] = $1 }
            END { for (i = 1; i <= NR; i++) printf "| %s | %.0f | %+.0f |\n", o[i], ir[o[i]], ir[o[i]] - ir["plain"] }' "$tmp/ir"
    fi
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"

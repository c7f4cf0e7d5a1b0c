#!/bin/sh
# bench/bigheap.sh: what a big live set does to the non-sampled path. bench/bigheap
# (LIVE sampled 2 KiB blocks kept, then OPS unsampled free+malloc operations timed) for
# LIVE in 0, 16384, 65536 and 262144, in interleaved rounds of: no profiler, heapsift, and
# with --before LIB another libheapsift.so (one with a fixed-size live filter, say). The
# table gives, per LIVE, the median ns per operation and its ratio to the same round's
# no-profiler run (median over rounds).
# usage: sh bench/bigheap.sh BUILD [--before LIB] [--record]
# env: ROUNDS (5), OPS (20000000), LIVES ("0 16384 65536 262144"), CC (gcc)
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/bigheap.sh BUILD [--before LIB] [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=$build/libheapsift.so
[ -f "$lib" ] || { echo "bigheap: no $lib (build first)" >&2; exit 1; }
[ -z "$before" ] || [ -f "$before" ] || { echo "bigheap: no $before" >&2; exit 1; }
rounds=${ROUNDS:-5}
ops=${OPS:-20000000}
lives=${LIVES:-0 16384 65536 262144}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-bigheap.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
"${CC:-gcc}" -std=gnu11 -O2 -g -o "$tmp/bigheap" "$here/bigheap.c" -ldl

configs="none heapsift"
[ -n "$before" ] && configs="$configs before"

run() { # CONFIG LIVE: prints ns/op
    case $1 in
    none) set -- "$2" ;;
    heapsift) set -- "$2" "LD_PRELOAD=$lib" ;;
    before) set -- "$2" "LD_PRELOAD=$before" ;;
    esac
    live=$1
    shift
    env "$@" HEAPSIFT_OUT="$tmp/p.%p.pb.gz" "$tmp/bigheap" "$live" "$ops" 2>"$tmp/err" |
        sed -n 's/.*: \([0-9.]*\) ns\/op$/\1/p'
    [ ! -s "$tmp/err" ] || { echo "bigheap: $(head -n 2 "$tmp/err")" >&2; exit 1; }
    rm -f "$tmp"/p.*.pb.gz
}

r=0
echo "bigheap: $rounds rounds x $(echo $lives | wc -w) live sets x $(echo $configs | wc -w) configurations" >&2
while [ "$r" -lt "$rounds" ]; do
    for live in $lives; do
        base=$(run none "$live")
        for c in $configs; do
            v=$([ "$c" = none ] && echo "$base" || run "$c" "$live")
            echo "$live $c $v $base" >>"$tmp/res"
        done
    done
    r=$((r + 1))
done

{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): unsampled pairs beside a big live set (bench/bigheap.sh)"
    echo
    bench_machine "$loadavg" "$lib${before:+; before: $before}"
    echo "- workload: \`bigheap LIVE $ops\` ($rounds rounds, interleaved): LIVE sampled 2 KiB blocks kept, then unsampled free+malloc of 16..271 bytes on a ring of 4096"
    echo
    echo "| live samples | configuration | ns per operation (median) | ratio to no profiler (median of the rounds' ratios) |"
    echo "| --- | --- | --- | --- |"
    awk -v lives="$lives" -v configs="$configs" "$awk_lib"'
        { ns[$1 " " $2] = ns[$1 " " $2] " " $3; ra[$1 " " $2] = ra[$1 " " $2] " " ($3 / $4) }
        END {
            nl = split(lives, ls, " "); nc = split(configs, cs, " ")
            for (i = 1; i <= nl; i++)
                for (j = 1; j <= nc; j++) {
                    k = ls[i] " " cs[j]
                    printf "| %s | %s | %.2f | %.3f |\n", ls[i], cs[j], median(ns[k]), median(ra[k])
                }
        }' "$tmp/res"
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"

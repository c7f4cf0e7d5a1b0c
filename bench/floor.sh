#!/bin/sh
# bench/floor.sh: which part of heapsift's overhead on churn any interposer pays. churn
# (2 threads, mixed small sizes) in interleaved rounds under: no profiler; libtrampoline.so
# (bench/trampoline.c: every entry point one indirect jump to glibc's, nothing counted);
# heapsift with sampling off (HEAPSIFT_RATE=0: the hooks alone); heapsift at the default
# rate; and at 64 KiB. The table gives the median over rounds of each configuration's
# loop time (churn's own "wall", without start-up and exit) over the same round's
# no-profiler time.
# usage: sh bench/floor.sh BUILD [--record]
# env: ROUNDS (9), THREADS (2), OPS (8000000 per thread), CC (gcc)
set -eu
BENCH_NO_BEFORE=1
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/floor.sh BUILD [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=$build/libheapsift.so
[ -f "$lib" ] || { echo "floor: no $lib (build first)" >&2; exit 1; }
rounds=${ROUNDS:-9}
threads=${THREADS:-2}
ops=${OPS:-8000000}
cc=${CC:-gcc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-floor.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
"$cc" -std=gnu11 -pthread -O2 -g -o "$tmp/churn" "$here/churn.c"
"$cc" -O2 -shared -fPIC -o "$tmp/libtrampoline.so" "$here/trampoline.c" -ldl

configs="none trampoline hooks default rate64k"
run() { # CONFIG: prints churn's loop seconds
    case $1 in
    none) set -- ;;
    trampoline) set -- "LD_PRELOAD=$tmp/libtrampoline.so" ;;
    hooks) set -- "LD_PRELOAD=$lib" HEAPSIFT_RATE=0 ;;
    default) set -- "LD_PRELOAD=$lib" ;;
    rate64k) set -- "LD_PRELOAD=$lib" HEAPSIFT_RATE=65536 ;;
    esac
    env "$@" HEAPSIFT_OUT="$tmp/p.%p.pb.gz" "$tmp/churn" "$threads" "$ops" 2>"$tmp/err" |
        sed -n 's/^wall: \([0-9.]*\) s$/\1/p'
    [ ! -s "$tmp/err" ] || { echo "floor: $1: $(head -n 2 "$tmp/err")" >&2; exit 1; }
    rm -f "$tmp"/p.*.pb.gz
}

r=0
echo "floor: $rounds rounds x $(echo $configs | wc -w) configurations" >&2
while [ "$r" -lt "$rounds" ]; do
    base=$(run none)
    for c in $configs; do
        v=$([ "$c" = none ] && echo "$base" || run "$c")
        echo "$c $v $base" >>"$tmp/res"
    done
    r=$((r + 1))
done

{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): the interposition floor on churn (bench/floor.sh)"
    echo
    bench_machine "$loadavg" "$lib"
    echo "- workload: \`churn $threads $ops\`, $rounds interleaved rounds; loop time (churn's own, without start-up and exit)"
    echo
    echo "| configuration | loop ratio to no profiler (median) | range | median loop (s) |"
    echo "| --- | --- | --- | --- |"
    awk -v configs="$configs" "$awk_lib"'
        { s[$1] = s[$1] " " $2; ra[$1] = ra[$1] " " ($2 / $3) }
        END {
            n = split(configs, cs, " ")
            for (i = 1; i <= n; i++) {
                printf "| %s | %.3f | %.3f..%.3f | %.3f |\n", cs[i], median(ra[cs[i]]),
                    extreme(ra[cs[i]], 0), extreme(ra[cs[i]], 1), median(s[cs[i]])
            }
        }' "$tmp/res"
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"

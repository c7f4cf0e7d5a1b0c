#!/bin/sh
# bench/spool.sh: what HEAPSIFT_SPOOL adds to a sample. bench/sample_cost (64 frames deep,
# every malloc sampled at HEAPSIFT_RATE=1, each malloc+free pair timed alone) in
# interleaved rounds: HEAPSIFT_RATE=0 (the floor), RATE=1 without a spool, with the spool
# on tmpfs (/dev/shm) and with it on disk (SPOOL_DISK, default the build directory's
# filesystem). Two tables: the median over rounds of each configuration's pair p50 and its
# cost per sample (minus RATE=0's), load dependent; and the instructions per sampled
# malloc+free pair inside the timed loop under callgrind (one run each, 21000 pairs:
# deterministic), when valgrind is installed. The issue's budget: a sample costs at most
# 10% more with the spool.
# usage: sh bench/spool.sh BUILD [--record]
# env: ROUNDS (7), N (200000), CC (gcc), SPOOL_DISK (BUILD)
set -eu
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/spool.sh BUILD [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
lib=$build/libheapsift.so
rounds=${ROUNDS:-7}
n=${N:-200000}
disk=${SPOOL_DISK:-$build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-spool-bench.XXXXXX")
trap 'rm -rf "$tmp"; rm -f /dev/shm/hs-spool-bench.$$.* "$disk"/hs-spool-bench.$$.*' EXIT INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
"${CC:-gcc}" -std=gnu11 -fno-omit-frame-pointer -I"$top/include" -O2 -g -o "$tmp/sample_cost" \
    "$here/sample_cost.c"
fs_of() { df -T "$1" | awk 'NR == 2 { print $2 }'; }

configs="rate0 plain shm disk"

# env_of CONFIG: the environment of that configuration.
env_of() {
    case $1 in
    rate0) echo "LD_PRELOAD=$lib HEAPSIFT_RATE=0" ;;
    plain) echo "LD_PRELOAD=$lib HEAPSIFT_RATE=1" ;;
    shm) echo "LD_PRELOAD=$lib HEAPSIFT_RATE=1 HEAPSIFT_SPOOL=/dev/shm/hs-spool-bench.$$.%p" ;;
    disk) echo "LD_PRELOAD=$lib HEAPSIFT_RATE=1 HEAPSIFT_SPOOL=$disk/hs-spool-bench.$$.%p" ;;
    esac
}

r=0
echo "spool: $rounds rounds x $(echo $configs | wc -w) configurations" >&2
while [ "$r" -lt "$rounds" ]; do
    for c in $configs; do
        # shellcheck disable=SC2046
        env $(env_of $c) HEAPSIFT_OUT="$tmp/p.%p.pb.gz" "$tmp/sample_cost" "$n" 64 64 \
            >"$tmp/out" 2>"$tmp/err" ||
            { echo "spool: sample_cost failed ($c)" >&2; cat "$tmp/err" >&2; exit 1; }
        [ ! -s "$tmp/err" ] || { echo "spool: $c: $(head -n 2 "$tmp/err")" >&2; exit 1; }
        echo "$c $(sed -n 's/^pair_ns: p50=\([0-9]*\) .*/\1/p' "$tmp/out")" >>"$tmp/res"
        rm -f "$tmp"/p.*.pb.gz
    done
    r=$((r + 1))
done
: >"$tmp/ir"
if command -v valgrind >/dev/null 2>&1; then
    for c in $configs; do
        # shellcheck disable=SC2046
        env $(env_of $c) HEAPSIFT_OUT="$tmp/p.%p.pb.gz" valgrind --tool=callgrind \
            --toggle-collect=measure --callgrind-out-file="$tmp/cg.out" \
            "$tmp/sample_cost" 20000 64 64 >/dev/null 2>"$tmp/err" ||
            { echo "spool: callgrind failed ($c)" >&2; tail -n 3 "$tmp/err" >&2; exit 1; }
        echo "$c $(sed -n 's/^summary: //p' "$tmp/cg.out")" >>"$tmp/ir"
        rm -f "$tmp"/p.*.pb.gz
    done
fi

{
    echo
    echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): the spool on the sampled path (bench/spool.sh)"
    echo
    bench_machine "$loadavg" "$lib"
    echo "- workload: \`sample_cost $n 64 64\` (every malloc sampled, 64 frames), $rounds rounds," \
        "interleaved; shm: HEAPSIFT_SPOOL on /dev/shm ($(fs_of /dev/shm)), disk: on $disk" \
        "($(fs_of "$disk"))"
    echo
    echo "| configuration | pair p50 (ns, median) | cost per sample (ns) | vs plain |"
    echo "| --- | --- | --- | --- |"
    awk -v configs="$configs" "$awk_lib"'
        { v[$1] = v[$1] " " $2 }
        END {
            z = median(v["rate0"]); p = median(v["plain"]) - z
            n = split(configs, cs, " ")
            for (i = 1; i <= n; i++) {
                m = median(v[cs[i]])
                printf "| %s | %.0f | %s | %s |\n", cs[i], m,
                    cs[i] == "rate0" ? "-" : sprintf("%.0f", m - z),
                    cs[i] == "rate0" || cs[i] == "plain" ? "-" : sprintf("%+.1f%%", 100 * (m - z - p) / p)
            }
        }' "$tmp/res"
    if [ -s "$tmp/ir" ]; then
        echo
        echo "| configuration | instructions per sampled malloc+free (callgrind) | vs plain |"
        echo "| --- | --- | --- |"
        awk '{ ir[$1] = $2 / 21000; o[NR] = $1 }
            END {
                for (i = 1; i <= NR; i++)
                    printf "| %s | %.0f | %s |\n", o[i], ir[o[i]],
                        o[i] == "rate0" ? "-" : sprintf("%+.0f (%+.1f%%)", ir[o[i]] - ir["plain"],
                                                        100 * (ir[o[i]] - ir["plain"]) / (ir["plain"] - ir["rate0"]))
            }' "$tmp/ir"
    fi
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"

#!/bin/sh
# bench/run.sh: heapsift's overhead benchmark. Runs bench/churn (compiled here into
# BUILD/bench/churn if missing or stale; nothing else is built) with no profiler, with
# libheapsift.so preloaded but sampling off (HEAPSIFT_RATE=0: the hooks' own cost), at the
# default rate and at 65536, in interleaved rounds whose order rotates, so drift in machine
# load spreads over every configuration instead of landing on one. Each run's whole-process
# wall time is divided by the same round's no-profiler time; the table gives, per
# configuration, the median of those ratios and their range, the median "loop ratio" (the
# same round's no-profiler ops/s over this configuration's, from churn's own timing of its
# loop: the hooks' and the sampler's cost without process start and the at-exit dump), the
# median wall time and the median ops/s.
# Profiles written during the bench go to a temporary directory that is removed.
# With --record, the table is appended to bench/RESULTS.md with the date and the machine.
# Called by `make bench` as `sh bench/run.sh BUILD`. POSIX sh (dash) on purpose.
#
# Usage: sh bench/run.sh BUILD [--record]
# Environment: ROUNDS (default 7), THREADS (default 2), OPS (per thread, default 4000000),
#              CC (default gcc).
set -eu

usage() {
    echo "usage: sh bench/run.sh BUILD [--record]" >&2
    echo "  env: ROUNDS (7), THREADS (2), OPS per thread (4000000), CC (gcc)" >&2
    exit 1
}

build=""
record=0
for arg in "$@"; do
    case "$arg" in
    --record) record=1 ;;
    -h | --help) usage ;;
    -*) echo "bench: unknown option $arg" >&2; usage ;;
    *)
        [ -z "$build" ] || usage
        build=$arg
        ;;
    esac
done
[ -n "$build" ] || usage

here=$(cd "$(dirname "$0")" && pwd)
rounds=${ROUNDS:-7}
threads=${THREADS:-2}
ops=${OPS:-4000000}
cc=${CC:-gcc}
if [ ! -d "$build" ]; then
    echo "bench: error: build directory $build not found (build it first: make)" >&2
    exit 1
fi
lib=$(cd "$build" && pwd)/libheapsift.so
churn=$build/bench/churn

case "$rounds$threads$ops" in
*[!0-9]*) echo "bench: ROUNDS, THREADS and OPS must be positive integers" >&2; exit 1 ;;
esac
[ "$rounds" -ge 1 ] || { echo "bench: ROUNDS must be at least 1" >&2; exit 1; }

if [ ! -f "$lib" ]; then
    echo "bench: error: $build/libheapsift.so not found (build it first: make)" >&2
    exit 1
fi
if [ ! -x "$churn" ] || [ -n "$(find "$here/churn.c" -newer "$churn")" ]; then
    mkdir -p "$build/bench"
    echo "bench: compiling $churn" >&2
    $cc -std=gnu11 -O2 -g -pthread -Wall -Wextra -o "$churn" "$here/churn.c"
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/heapsift-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

# name:HEAPSIFT_RATE, where "-" means no profiler and "default" leaves the rate unset.
configs="none:- hooks-only:0 default:default rate-64k:65536"
nconfigs=4

# Runs one configuration once; appends "round name wall ops_per_s" to $tmp/results.
run_one() {
    round=$1 name=$2 rate=$3
    out=$tmp/out.txt
    t0=$(date +%s.%N)
    case "$rate" in
    -) status=0; "$churn" "$threads" "$ops" >"$out" 2>"$tmp/err.txt" || status=$? ;;
    default)
        status=0
        env LD_PRELOAD="$lib" HEAPSIFT_OUT="$tmp/$name.%p.pb.gz" HEAPSIFT_SEED=1 \
            "$churn" "$threads" "$ops" >"$out" 2>"$tmp/err.txt" || status=$?
        ;;
    *)
        status=0
        env LD_PRELOAD="$lib" HEAPSIFT_OUT="$tmp/$name.%p.pb.gz" HEAPSIFT_SEED=1 \
            HEAPSIFT_RATE="$rate" "$churn" "$threads" "$ops" >"$out" 2>"$tmp/err.txt" ||
            status=$?
        ;;
    esac
    t1=$(date +%s.%N)
    if [ "$status" -ne 0 ]; then
        echo "bench: error: configuration $name failed (exit $status) in round $round:" >&2
        tail -n 20 "$tmp/err.txt" >&2
        exit 3
    fi
    opsps=$(sed -n 's/^ops\/s: //p' "$out")
    echo "$round $name $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }') ${opsps:-0}" \
        >>"$tmp/results"
    # A profiled run that wrote no profile means the library is not doing its job; say so.
    found=0
    for f in "$tmp"/*.pb.gz; do
        [ -e "$f" ] && found=1
    done
    if [ "$rate" != "-" ] && [ "$rate" != "0" ] && [ "$found" -eq 0 ]; then
        missing=$((missing + 1))
    fi
    rm -f "$tmp"/*.pb.gz # keep the temp dir small; a profile per run is not needed
}

missing=0
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
echo "heapsift bench: churn $threads threads x $ops ops, $rounds rounds, order rotated" \
    "each round" >&2
r=0
while [ "$r" -lt "$rounds" ]; do
    # Rotate the configuration list by r places.
    order=$(echo "$configs" | tr ' ' '\n' | awk -v k="$r" -v n="$nconfigs" \
        '{ line[NR - 1] = $0 } END { for (i = 0; i < n; i++) print line[(i + k) % n] }')
    printf "  round %d/%d:" $((r + 1)) "$rounds" >&2
    for c in $order; do
        printf " %s" "${c%%:*}" >&2
        run_one "$r" "${c%%:*}" "${c#*:}"
    done
    echo >&2
    r=$((r + 1))
done

# The table, in Markdown so the same text goes to the terminal and to RESULTS.md.
table=$(awk -v configs="$configs" '
function median(list,    n, a, i, j, t) {
    n = split(list, a, " ")
    for (i = 2; i <= n; i++)
        for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) {
            t = a[j]; a[j] = a[j - 1]; a[j - 1] = t
        }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function extreme(list, want_max,    n, a, i, m) {
    n = split(list, a, " ")
    m = a[1]
    for (i = 2; i <= n; i++)
        if ((want_max && a[i] + 0 > m + 0) || (!want_max && a[i] + 0 < m + 0))
            m = a[i]
    return m
}
{ wall[$1, $2] = $3; ops[$1, $2] = $4; rounds[$1] = 1 }
END {
    nc = split(configs, cs, " ")
    print "| configuration | HEAPSIFT_RATE | median wall ratio | wall ratio range | median loop ratio | median wall (s) | median churn ops/s |"
    print "| --- | --- | --- | --- | --- | --- | --- |"
    for (c = 1; c <= nc; c++) {
        split(cs[c], kv, ":")
        name = kv[1]; rate = kv[2]
        if (rate == "-") rate = "(not loaded)"
        if (rate == "default") rate = "unset (524288)"
        ratios = ""; loops = ""; walls = ""; opsps = ""
        for (r in rounds) {
            ratios = ratios " " wall[r, name] / wall[r, "none"]
            loops = loops " " (ops[r, name] > 0 ? ops[r, "none"] / ops[r, name] : 0)
            walls = walls " " wall[r, name]
            opsps = opsps " " ops[r, name]
        }
        printf "| %s | %s | %.3f | %.3f..%.3f | %.3f | %.3f | %.0f |\n", name, rate,
            median(ratios), extreme(ratios, 0), extreme(ratios, 1), median(loops),
            median(walls), median(opsps)
    }
}' "$tmp/results")

echo
echo "$table"
if [ "$missing" -gt 0 ]; then
    echo "bench: warning: $missing profiled runs wrote no profile to HEAPSIFT_OUT" >&2
fi

if [ "$record" -eq 1 ]; then
    results=$here/RESULTS.md
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    [ -n "$cpu" ] || cpu=$(sed -n 's/^Hardware[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
    if [ -n "$(git -C "$here/.." status --porcelain -- src include CMakeLists.txt 2>/dev/null)" ]
    then
        commit="$commit (plus uncommitted changes to the library sources)"
    fi
    {
        echo
        echo "## $(date -u '+%Y-%m-%d %H:%M UTC')"
        echo
        echo "- machine: $(uname -m), $(nproc) CPUs, ${cpu:-unknown CPU}"
        echo "- kernel: $(uname -r); load average before the run: $loadavg"
        echo "- heapsift commit: $commit"
        echo "- workload: \`churn $threads $ops\` ($threads threads x $ops ops), $rounds rounds"
        echo
        echo "$table"
    } >>"$results"
    echo >&2
    echo "bench: appended to $results" >&2
fi

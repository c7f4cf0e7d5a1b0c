#!/bin/sh
# bench/run.sh: heapsift's benchmark, one command. Installs the peers it needs
# (bench/setup.sh), compiles the workloads into BUILD/bench/ (gcc/g++ -O2 -g, only those
# missing or older than their source), then runs two parts:
#   peers   (bench/peers.sh): five workloads (churn, lru, bigalloc, cppmap, and the real
#           sqlite3 shell on a generated transaction script) under no profiler, heapsift at
#           several rates and on jemalloc, gperftools' heap profiler and tcmalloc alone,
#           jemalloc's profiler and jemalloc alone, and heaptrack, in interleaved rounds
#           whose order rotates; a table per workload of wall-time ratios (within each
#           round), the program's own throughput, max RSS and the profiler's memory.
#   targets (bench/targets.sh): issue 3's budgets, each measured by its own program:
#           instructions per non-sampled malloc+free (callgrind), the latency of a sampled
#           allocation with a 64-frame stack, the duration of a dump of 100,000 live
#           samples from 10,000 stacks and the malloc latency of other threads during it;
#           with the churn, memory and peer comparisons from the peers part, each line
#           says PASS or FAIL against its target.
# and, only when asked (--reach, --reach-only), a third:
#   reach   (bench/reach.sh): churn and cppmap linked statically against tcmalloc and
#           jemalloc, under heapsift's in-place hooks and the allocators' own profilers, and
#           the hooked route's instructions per malloc+free (about 9 minutes more).
# Everything goes to stdout as Markdown; --record appends it to bench/history/DAY.md under a
# dated heading with the machine, the load average and the commit. Profiles and other
# files written during the runs go to a temporary directory that is removed.
# Called by `make bench` as `sh bench/run.sh BUILD`. POSIX sh (dash) on purpose.
#
# Usage: sh bench/run.sh BUILD [--record] [--quick] [--peers-only | --targets-only]
#        [--reach | --reach-only]
set -eu

usage() {
    cat >&2 <<'EOF'
usage: sh bench/run.sh BUILD [--record] [--quick] [--peers-only | --targets-only]
                         [--reach | --reach-only]
  --reach         also run the optional part reach (bench/reach.sh); --reach-only: only it
  --quick         1 round, small inputs, short time-outs: a smoke test (under 2 minutes)
  --record        append the report to bench/history/YYYY-MM-DD.md
  env: ROUNDS (5; quick 1), WORKLOADS ("churn lru bigalloc cppmap sqlite"),
       CONFIGS (all), THREADS (churn's, 2), OPS (churn's per thread, 16000000),
       IR_OPS (churn's per thread under callgrind, 4000000),
       TIMEOUT (s per run, 60; quick 10), HEAPTRACK_ROUNDS (2; quick 1),
       QUICK=1 (same as --quick), CC (gcc), CXX (g++)
EOF
    exit 1
}

build=""
record=0
quick=${QUICK:-0}
parts="peers targets"
reach=0
for arg in "$@"; do
    case "$arg" in
    --record) record=1 ;;
    --quick) quick=1 ;;
    --peers-only) parts="peers" ;;
    --targets-only) parts="targets" ;;
    --reach) reach=1 ;;
    --reach-only) parts="" reach=1 ;;
    -h | --help) usage ;;
    -*) echo "bench: unknown option $arg" >&2; usage ;;
    *)
        [ -z "$build" ] || usage
        build=$arg
        ;;
    esac
done
[ -n "$build" ] || usage
[ "$reach" -eq 0 ] || parts="${parts:+$parts }reach"
case "$quick" in 0 | 1) ;; *) echo "bench: QUICK must be 0 or 1" >&2; exit 1 ;; esac

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/.." && pwd)
if [ "$quick" -eq 1 ]; then
    rounds=${ROUNDS:-1}
    timeout_s=${TIMEOUT:-10}
    ht_rounds=${HEAPTRACK_ROUNDS:-1}
else
    rounds=${ROUNDS:-5}
    timeout_s=${TIMEOUT:-60}
    ht_rounds=${HEAPTRACK_ROUNDS:-2}
fi
threads=${THREADS:-2}
cc=${CC:-gcc}
cxx=${CXX:-g++}
workloads=${WORKLOADS:-churn lru bigalloc cppmap sqlite}
case "$rounds$threads$timeout_s$ht_rounds${OPS:-1}${IR_OPS:-1}" in
*[!0-9]*)
    echo "bench: ROUNDS, THREADS, OPS, IR_OPS, TIMEOUT and HEAPTRACK_ROUNDS must be integers" >&2
    exit 1
    ;;
esac
[ "$rounds" -ge 1 ] && [ "$threads" -ge 1 ] && [ "$timeout_s" -ge 1 ] ||
    { echo "bench: ROUNDS, THREADS and TIMEOUT must be at least 1" >&2; exit 1; }
if [ ! -d "$build" ]; then
    echo "bench: error: build directory $build not found (build it first: make)" >&2
    exit 1
fi
build=$(cd "$build" && pwd)
lib=$build/libheapsift.so
bin=$build/bench
if [ ! -f "$lib" ]; then
    echo "bench: error: $build/libheapsift.so not found (build it first: make)" >&2
    exit 1
fi

sh "$here/setup.sh"
multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
tcmalloc=/usr/lib/$multiarch/libtcmalloc.so.4
jemalloc=/usr/lib/$multiarch/libjemalloc.so.2
for f in "$tcmalloc" "$jemalloc"; do
    [ -f "$f" ] || { echo "bench: error: $f not found (bench/setup.sh failed?)" >&2; exit 1; }
done

# Compiles SRC into BUILD/bench/NAME unless it is there and newer than SRC.
compile() {
    name=$1 src=$2
    shift 2
    if [ ! -x "$bin/$name" ] || [ -n "$(find "$src" -newer "$bin/$name")" ]; then
        echo "bench: compiling $bin/$name" >&2
        "$@" -O2 -g -Wall -Wextra -o "$bin/$name" "$src"
    fi
}
mkdir -p "$bin"
compile churn "$here/churn.c" "$cc" -std=gnu11 -pthread
compile lru_cache "$top/examples/lru_cache.c" "$cc" -std=gnu11
compile bigalloc "$here/bigalloc.c" "$cc" -std=gnu11 -pthread
compile cppmap "$here/cppmap.cc" "$cxx" -std=gnu++17
compile pairs "$here/pairs.c" "$cc" -std=gnu11
# Frame pointers, so that every unwinder (fp included) can walk its 64 frames.
compile sample_cost "$here/sample_cost.c" "$cc" -std=gnu11 -fno-omit-frame-pointer -I"$top/include"
compile dump_latency "$here/dump_latency.c" "$cc" -std=gnu11 -pthread
compile dump_repeat "$here/dump_repeat.cc" "$cxx" -std=gnu++17 -I"$top/include"
# The least any interposer costs (bench/trampoline.c), for the jemalloc palindromes' floor.
compile libtrampoline.so "$here/trampoline.c" "$cc" -shared -fPIC -ldl

tmp=$(mktemp -d "${TMPDIR:-/tmp}/heapsift-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
report=$tmp/report.md
: >"$report"


# shellcheck source=bench/common.sh
. "$here/common.sh" # awk_lib: median and extreme
# shellcheck source=bench/peers.sh
. "$here/peers.sh"
# shellcheck source=bench/jpairs.sh
. "$here/jpairs.sh"
# shellcheck source=bench/targets.sh
. "$here/targets.sh"

for part in $parts; do
    case "$part" in
    peers) peers_main ;;
    targets) targets_main ;;
    reach)
        # Its own programs and configurations; its tables only (--part).
        ROUNDS=$rounds TIMEOUT=$timeout_s sh "$here/reach.sh" "$build" --part \
            $([ "$quick" -eq 1 ] && echo --quick) >>"$report"
        ;;
    esac
done
case " $parts " in
*" targets "*) ;;
*" peers "*) targets_peers_rows ;;
esac

echo
cat "$report"

if [ "$record" -eq 1 ]; then
    section=$tmp/section.md
    cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    [ -n "$cpu" ] || cpu=$(sed -n 's/^Hardware[[:space:]]*: //p' /proc/cpuinfo | head -n 1)
    # The library is what was measured: say which commit was HEAD when it was built, and
    # whether library sources changed since (other people commit to the same checkout).
    commit=$(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)
    libtime=$(stat -c %Y "$lib")
    libcommit=$(git -C "$top" log -1 --format=%h --before="@$libtime" 2>/dev/null || echo unknown)
    newer=$(cd "$top" && find src include CMakeLists.txt -type f -newer "$lib" 2>/dev/null |
        wc -l)
    dirty=""
    if [ -n "$(git -C "$top" status --porcelain -- src include CMakeLists.txt 2>/dev/null)" ]
    then
        dirty="; uncommitted changes to the library sources in the checkout"
    fi
    mode="full"
    [ "$quick" -eq 1 ] && mode="quick (smoke test: small inputs, figures not meaningful)"
    {
        echo
        echo "## $(date -u '+%Y-%m-%d %H:%M UTC'): $(echo "$parts" | sed 's/ / and /')" \
            "(bench/run.sh, $mode)"
        echo
        echo "- machine: $(uname -m), $(nproc) CPUs, ${cpu:-unknown CPU}"
        echo "- kernel: $(uname -r); load average before the run: $loadavg;" \
            "after: $(cut -d' ' -f1-3 /proc/loadavg)"
        echo "- library: $lib built $(date -u -d "@$libtime" '+%Y-%m-%d %H:%M UTC')," \
            "HEAD then: $libcommit; library source files modified since the build: $newer$dirty"
        echo "- bench scripts: HEAD now: $commit"
        echo "- parts: $parts; rounds: $rounds; time-out per run: $timeout_s s;" \
            "heaptrack rounds: $ht_rounds"
        cat "$report"
    } >"$section"
    # shellcheck source=bench/record.sh
    . "$here/record.sh"
    bench_record "$here" "$section"
fi

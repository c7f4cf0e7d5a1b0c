#!/bin/sh
# What the HTTP endpoint costs the program it serves from (docs/http.md), and how fast it
# answers. tests/programs/http_app.c runs malloc/free churn (default rate) with 4 MiB live
# at site_old; its threads are pinned to CPU 0 and wrk to CPU 1 (when there are two), so
# the figure is the endpoint's cost, not the load generator's.
#  - throughput: ROUNDS times, a quiet 1.5 s measurement, then 1.5 s under
#    `wrk -t1 -c16` on /debug/pprof/heap; each loaded figure over the mean of the quiet
#    ones either side; the median and range of that ratio are reported, with wrk's
#    requests/s and latency percentiles (mostly answers from the 1 s profile cache);
#  - latency of a fresh /debug/pprof/heap (a build: snapshot, symbolize, encode, gzip):
#    curl's time_total, ROUNDS requests 1.2 s apart (past the cache), median and max;
#  - RSS of the program after all of it.
# usage: sh bench/http_load.sh BUILD_DIR [--record]   (ROUNDS, default 5)
set -eu
BUILD=$(cd "${1:?usage: http_load.sh BUILD_DIR [--record]}" && pwd)
RECORD=${2:-}
ROUNDS=${ROUNDS:-5}
HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-bench-http.XXXXXX")
trap 'rm -rf "$T"' EXIT INT TERM
LIB=$BUILD/libheapsift.so
for c in wrk curl taskset; do
    command -v "$c" >/dev/null 2>&1 || { echo "http_load: $c not found" >&2; exit 1; }
done
fail() { echo "http_load: $*" >&2; exit 1; }

mkfifo "$T/in" "$T/out"
HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port" HEAPSIFT_VERBOSE=0 \
    HEAPSIFT_OUT="$T/exit.pb.gz" LD_PRELOAD="$LIB" "$BUILD/programs/http_app" \
    <"$T/in" >"$T/out" 2>"$T/err" &
APP=$!
exec 3>"$T/in" 4<"$T/out"
i=0
while [ ! -s "$T/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$T/port" ] || fail "no port"
URL=http://127.0.0.1:$(cat "$T/port")/debug/pprof/heap
app() {
    echo "$*" >&3
    while IFS= read -r l <&4; do [ "$l" = ok ] && return 0; echo "$l"; done
}
rate() { app churn "$1" | awk '/^ops/ { print $4 }'; }
WRK="wrk"
if [ "$(nproc)" -ge 2 ]; then
    taskset -a -p -c 0 "$APP" >/dev/null
    WRK="taskset -c 1 wrk"
fi
app old 64 >/dev/null

q=$(rate 1.5)
: >"$T/ratios"
for r in $(seq "$ROUNDS"); do
    $WRK -t1 -c16 -d2s --latency "$URL" >"$T/wrk.$r" 2>&1 &
    W=$!
    sleep 0.2
    l=$(rate 1.5)
    wait "$W"
    q2=$(rate 1.5)
    awk -v a="$q" -v b="$q2" -v l="$l" 'BEGIN { printf "%.3f\n", 2 * l / (a + b) }' >>"$T/ratios"
    q=$q2
done
: >"$T/lat"
for r in $(seq "$ROUNDS"); do
    sleep 1.2
    curl -sS -o /dev/null -w '%{time_total}\n' "$URL" >>"$T/lat"
done
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$APP/status")
app quit >/dev/null || true
exec 3>&- 4<&-
wait "$APP" || fail "the program exited with status $?"

med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
range() { sort -n "$1" | awk 'NR == 1 { lo = $1 } { hi = $1 } END { print lo ".." hi }'; }
cat "$T"/wrk.* | awk '/^Requests\/sec/ { print $2 }' >"$T/rps"
cat "$T"/wrk.* | awk '$1 == "50%" { print $2 }' >"$T/p50"
cat "$T"/wrk.* | awk '$1 == "99%" { print $2 }' >"$T/p99"
{
    echo "## http_load: $(date -u '+%Y-%m-%d %H:%M') UTC"
    echo
    echo "- machine: $(uname -m), $(nproc) CPUs, $(sed -n 's/^model name\t: //p' /proc/cpuinfo | head -1); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- heapsift commit: $(git -C "$HERE" rev-parse --short HEAD 2>/dev/null || echo '?')"
    echo "- workload: tests/programs/http_app.c churn (default rate, 4 MiB live), pinned to CPU 0; \`wrk -t1 -c16\` on /debug/pprof/heap pinned to CPU 1; $ROUNDS rounds"
    echo
    echo "| figure | median | range |"
    echo "| --- | --- | --- |"
    echo "| program throughput under load / without | $(med "$T/ratios") | $(range "$T/ratios") |"
    echo "| wrk requests/s | $(med "$T/rps") | $(range "$T/rps") |"
    echo "| wrk latency p50 | $(med "$T/p50") | $(range "$T/p50") |"
    echo "| wrk latency p99 | $(med "$T/p99") | $(range "$T/p99") |"
    echo "| fresh /debug/pprof/heap (a build), curl time_total (s) | $(med "$T/lat") | $(range "$T/lat") |"
    echo "| program RSS after the run (kB) | $rss | |"
    echo
} >"$T/report"
cat "$T/report"
# shellcheck source=bench/record.sh
[ "$RECORD" = --record ] && . "$HERE/record.sh" && bench_record "$HERE" "$T/report"
exit 0

#!/bin/sh
# race_loop: the two races of issue 31, N times each under load (a CPU and memory hog
# beside them), the way they failed in the audit: the shared-table descriptor cases
# (closeloop and watch, tests/stress/descriptors.sh) and forked children of a threaded
# program with the endpoint on (tests/stress/http_fork_storm.sh) and without it
# (tests/stress/fork_storm.sh's fork case at rate 1). Prints one line per case and a
# summary; exit 1 if any run failed. Not part of `make test` (it takes about an hour for
# N=100 on two cores).
# usage: scripts/race_loop.sh [N] [BUILD_DIR]
set -u
N=${1:-100}
B=$(cd "${2:-build}" && pwd)
LIB=$B/libheapsift.so
T=$(mktemp -d "${TMPDIR:-/tmp}/hs-race.XXXXXX")
HOG=""
cleanup() { [ -n "$HOG" ] && kill $HOG 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT INT TERM
command -v stress-ng >/dev/null 2>&1 || { echo "race_loop: needs stress-ng (apt-get install stress-ng)"; exit 2; }
stress-ng --cpu 2 --vm 1 --vm-bytes 1G --timeout 0 >/dev/null 2>&1 &
HOG=$!

fails=0
# case NAME CMD...: runs CMD N times; a non-zero status is a failure
loop() {
    name=$1
    shift
    bad=0
    for i in $(seq "$N"); do
        rm -rf "$T/run"
        mkdir -p "$T/run"
        if ! "$@" >"$T/out" 2>"$T/err"; then
            bad=$((bad + 1))
            echo "  $name run $i failed: $(head -c 300 "$T/out" | tr '\n' ' ') $(head -c 300 "$T/err" | tr '\n' ' ')"
        fi
    done
    echo "$name: $((N - bad)) of $N runs passed (loaded)"
    fails=$((fails + bad))
}

closeloop() {
    timeout 120 "$B/programs/nounshare" env HEAPSIFT_RATE=1 HEAPSIFT_INTERVAL_SECONDS=0.001 \
        HEAPSIFT_OUT="$T/run/p.%n.pb.gz" HEAPSIFT_KEEP=2 LD_PRELOAD="$LIB" \
        "$B/programs/stress_fds" closeloop 20000 "$T/run/data"
}
watch_shared() {
    timeout 60 "$B/programs/nounshare" env HEAPSIFT_RATE=4096 HEAPSIFT_INTERVAL_SECONDS=0.001 \
        HEAPSIFT_LEAKS=1 HEAPSIFT_OUT="$T/run/p.%n.pb.gz" HEAPSIFT_KEEP=2 LD_PRELOAD="$LIB" \
        "$B/programs/stress_fds" watch 2000 "$T/run"
}
fork_http() {
    timeout -k 5 90 env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_OUT="$T/run/prof.%p.pb.gz" \
        LD_PRELOAD="$LIB" "$B/programs/stress_fork" fork "$T/run" 4 3
}
fork_rate1() {
    timeout -k 5 90 env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/run/prof.%p.pb.gz" \
        LD_PRELOAD="$LIB" "$B/programs/stress_fork" fork "$T/run" 4 5
}
loop "descriptors shared closeloop" closeloop
loop "descriptors shared watch" watch_shared
loop "http_fork_storm fork" fork_http
loop "fork_storm fork rate 1" fork_rate1
echo "race_loop: $fails failed run(s)"
[ "$fails" -eq 0 ]

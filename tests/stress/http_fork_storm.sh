#!/bin/sh
# http_fork_storm: the endpoint and process creation (docs/http.md, "Children"):
#  - stress_fork's fork mode with HEAPSIFT_HTTP=127.0.0.1:0: 4 threads fork 3 times each
#    while 4 threads allocate; every child serves (or tries to) on a port of its own, and
#    a client fetches the parent's /debug/pprof/heap throughout. No child hangs, the
#    program exits 0, its exit profile is valid, the client got answers;
#  - 30 short-lived profiled processes that fork and exec at once (sh -c 'sleep 0.01'),
#    so forks land while the serving thread is still starting (inside dlopen): none hangs.
# usage: http_fork_storm.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" http-fork-storm stress_fork
command -v curl >/dev/null 2>&1 || { echo "SKIP: curl not found"; exit 77; }
ldconfig -p 2>/dev/null | grep -q libmicrohttpd.so.12 || { echo "SKIP: no libmicrohttpd12"; exit 77; }
PROG=$BUILD/programs/stress_fork
dir=$T/fork
mkdir -p "$dir"

env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port.%p" HEAPSIFT_OUT="$dir/prof.%p.pb.gz" \
    LD_PRELOAD="$LIB" timeout -k 5 90 "$PROG" fork "$dir" 4 3 >"$T/out" 2>"$T/err" &
P=$!
got=0
for i in $(seq 60); do
    [ -s "$T/port.$P" ] && curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$(cat "$T/port.$P")/debug/pprof/heap" &&
        got=$((got + 1))
    kill -0 "$P" 2>/dev/null || break
    sleep 0.05
done
wait "$P" && RC=0 || RC=$?
[ "$RC" = 0 ] || { fail "stress_fork with the endpoint exited $RC"; show "$T/err" 10; }
! grep -q '^hung' "$T/out" || fail "children hung: $(grep '^hung' "$T/out" | tr '\n' ' ')"
echo "answers from the parent's endpoint during the storm: $got"
[ "$got" -gt 0 ] || fail "the client got no answer from the parent's endpoint"
valid "$dir/prof.$P.pb.gz" "parent's exit profile" || true

for i in $(seq 30); do
    bounded 20 "short-lived process $i" env HEAPSIFT_HTTP=127.0.0.1:0 LD_PRELOAD="$LIB" \
        sh -c 'sleep 0.01' 2>/dev/null || true
done
finish

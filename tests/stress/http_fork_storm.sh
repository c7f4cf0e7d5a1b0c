#!/bin/sh
# http_fork_storm: the endpoint and process creation (docs/http.md, "Children"):
#  - stress_fork's fork mode with HEAPSIFT_HTTP=127.0.0.1:0: 4 threads fork 3 times each
#    while 4 threads allocate; every child serves (or tries to) on a port of its own, and
#    a client fetches the parent's /debug/pprof/heap throughout, and after the forks (the
#    program waits for it) until it has an answer. No child hangs, the program exits 0, its
#    exit profile is valid, the client got answers;
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

# The program holds after its forks (allocators running) until $T/release exists: the
# client fetches throughout the storm and after it until it has had an answer, so the
# check cannot lose by the program ending first. P is stress_fork itself (env execs it):
# no timeout(1) between, which the preload would profile too (its endpoint answered the
# client and its profile was checked as the parent's); the test bounds the run instead.
env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port.%p" HEAPSIFT_OUT="$dir/prof.%p.pb.gz" \
    LD_PRELOAD="$LIB" "$PROG" fork "$dir" 4 3 "$T/release" >"$T/out" 2>"$T/err" &
P=$!
got=0 during=0
end=$(($(date +%s) + 60))
until grep -qx forked "$T/out" && [ "$got" -gt 0 ]; do
    kill -0 "$P" 2>/dev/null || { fail "stress_fork ended before the client had an answer"; break; }
    [ "$(date +%s)" -lt "$end" ] ||
        { fail "no answer from the parent's endpoint and the storm's end within 60 s"; break; }
    storm=1
    ! grep -qx forked "$T/out" || storm=0
    [ -s "$T/port.$P" ] && curl -s -o /dev/null --max-time 5 "http://127.0.0.1:$(cat "$T/port.$P")/debug/pprof/heap" &&
        got=$((got + 1)) during=$((during + storm))
    sleep 0.05
done
touch "$T/release"
# ended: gone, or a zombie the shell has yet to reap
hs_until 90 "stress_fork's end after the release" \
    '! [ -e /proc/$P ] || grep -q "^State:.*Z" /proc/$P/status 2>/dev/null' || kill -KILL "$P"
wait "$P" && RC=0 || RC=$?
[ "$RC" = 0 ] || { fail "stress_fork with the endpoint exited $RC"; show "$T/err" 10; }
! grep -q '^hung' "$T/out" || fail "children hung: $(grep '^hung' "$T/out" | tr '\n' ' ')"
echo "answers from the parent's endpoint: $got ($during during the storm, the rest after it)"
[ "$got" -gt 0 ] || fail "the client got no answer from the parent's endpoint"
valid "$dir/prof.$P.pb.gz" "parent's exit profile" || true

for i in $(seq 30); do
    bounded 20 "short-lived process $i" env HEAPSIFT_HTTP=127.0.0.1:0 LD_PRELOAD="$LIB" \
        sh -c 'sleep 0.01' 2>/dev/null || true
done
finish

#!/bin/sh
# bench/leakscan.sh: what a leak check costs a running process (issue 28): the
# reachability scan's speed per GB of writable memory, and the pause of the program's
# threads (first stop signal to release: the threads are stopped for the whole scan). The
# target is bench/attach_target.c under heapsift (HEAPSIFT_HTTP, a token): THREADS threads
# allocating as fast as they can beside HEAP_MB of live heap in 64 KiB blocks. Each round
# POSTs /debug/heapsift/leakcheck and reads the answer's comment ("reachability scan: ...
# MiB read (U MiB untouched, not read) in T ms (C ms of CPU); N other threads stopped in S ms, paused P ms"). GB/s
# (CPU) divides by the scanning thread's CPU time: the speed of one core however loaded
# the machine is. Goal in the issue: 1 GB/s or more on one core.
# usage: sh bench/leakscan.sh BUILD
# env: ROUNDS (5), THREADS (16), HEAP_MB (1024), RATE (524288)
set -eu
build=$(cd "${1:?usage: sh bench/leakscan.sh BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
lib=$build/libheapsift.so
[ -e "$lib" ] || { echo "leakscan: no $lib (build first)" >&2; exit 1; }
command -v curl >/dev/null && command -v go >/dev/null || { echo "leakscan: needs curl and go" >&2; exit 1; }
rounds=${ROUNDS:-5} threads=${THREADS:-16} heap=${HEAP_MB:-1024} rate=${RATE:-524288}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-leakscan.XXXXXX")
target=
trap '[ -z "$target" ] || kill -9 "$target" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
cc -O2 -pthread -o "$tmp/target" "$here/attach_target.c"
export GOCACHE="$tmp/gocache" PPROF_TMPDIR="$tmp/pprof"
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
env HEAPSIFT_RATE="$rate" HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$tmp/port" \
    HEAPSIFT_HTTP_TOKEN=bench HEAPSIFT_OUT="$tmp/exit.pb.gz" LD_PRELOAD="$lib" \
    "$tmp/target" "$threads" "$heap" >"$tmp/ready" 2>"$tmp/err" &
target=$!
i=0
while ! { grep -q ready "$tmp/ready" 2>/dev/null && [ -s "$tmp/port" ]; }; do
    i=$((i + 1))
    [ "$i" -lt 1200 ] || { echo "leakscan: the target never got ready" >&2; exit 1; }
    sleep 0.1
done
url=http://127.0.0.1:$(cat "$tmp/port")/debug/heapsift/leakcheck
echo "| round | MiB read | scan ms | scan CPU ms | GB/s (wall) | GB/s (CPU) | threads stopped | stop ms | pause ms |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
r=1
while [ "$r" -le "$rounds" ]; do
    code=$(curl -sS -o "$tmp/p.pb.gz" -w '%{http_code}' --max-time 300 -X POST \
        -H 'Authorization: Bearer bench' "$url")
    [ "$code" = 200 ] || { echo "leakscan: POST answered $code" >&2; exit 1; }
    go tool pprof -comments "$tmp/p.pb.gz" 2>/dev/null | grep '^reachability scan:' |
        sed -E 's/.* ([0-9.]+) MiB read (\([^)]*\) )?in ([0-9.]+) ms \(([0-9.]+) ms of CPU\); ([0-9]+) other threads stopped in ([0-9.]+) ms, paused ([0-9.]+) ms.*/\1 \3 \4 \5 \6 \7/' |
        awk -v r="$r" '{ printf "| %d | %.0f | %.0f | %.0f | %.2f | %.2f | %d | %.1f | %.0f |\n", r, $1, $2, $3, $1 * 1.048576 / $2, $1 * 1.048576 / $3, $4, $5, $6 }'
    r=$((r + 1))
    sleep 1
done
echo
echo "- target: bench/attach_target $threads $heap under heapsift (HEAPSIFT_RATE=$rate), $rounds leak checks over HTTP; load average at start $loadavg; $(nproc) CPUs"

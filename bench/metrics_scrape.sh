#!/bin/sh
# CPU cost of one GET /metrics scrape (docs/fleet.md), in the profiled process: two
# http_app programs (tests/programs/http_app.c, 144 blocks of 64 KiB at site_old, then
# 2 s of churn at site_churn so the tables hold more than one stack), one with
# HEAPSIFT_METRICS_SITES=0 (counters, estimate, RSS parts: no profile built) and one with
# the default 10 (plus the site series: a profile built and reported once per second).
# Each round scrapes both, interleaved, once every 1.1 s (so every scrape of the second
# one builds a profile, as a 1 s scrape interval does), and reads the process's CPU time
# (the sum over its threads of /proc/PID/task/*/schedstat's first field, nanoseconds on a
# CPU) around it. Prints the median per scrape of each.
# usage: sh bench/metrics_scrape.sh BUILD_DIR [SCRAPES]
set -eu
B=$(cd "$1" && pwd)
N=${2:-30}
T=$(mktemp -d)
PIDS=
trap 'for p in $PIDS; do kill $p 2>/dev/null || true; done; rm -rf "$T"' EXIT
start() { # NAME SITES
    mkfifo "$T/$1.in" "$T/$1.out"
    env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/$1.port" HEAPSIFT_VERBOSE=0 \
        HEAPSIFT_METRICS_SITES=$2 HEAPSIFT_OUT="$T/x.%p.pb.gz" LD_PRELOAD="$B/libheapsift.so" \
        "$B/programs/http_app" <"$T/$1.in" >"$T/$1.out" 2>/dev/null &
    PIDS="$PIDS $!"
    eval "PID_$1=$!"
}
start nosites 0
start sites 10
exec 3>"$T/nosites.in" 4<"$T/nosites.out" 5>"$T/sites.in" 6<"$T/sites.out"
for fd in 3 5; do
    echo "old 144" >&$fd
    echo "churn 2" >&$fd
done
for fd in 4 6; do
    n=0
    while IFS= read -r l <&$fd; do [ "$l" = ok ] && n=$((n + 1)); [ $n = 2 ] && break; done
done
cpu() { cat /proc/"$1"/task/*/schedstat | awk '{ s += $1 } END { printf "%d\n", s }'; }
i=0
: >"$T/nosites.t"
: >"$T/sites.t"
while [ $i -lt "$N" ]; do
    for w in nosites sites; do
        eval "pid=\$PID_$w"
        port=$(cat "$T/$w.port")
        a=$(cpu "$pid")
        s0=$(date +%s%N)
        curl -sS -o /dev/null "http://127.0.0.1:$port/metrics"
        s1=$(date +%s%N)
        b=$(cpu "$pid")
        echo "$((b - a)) $(((s1 - s0) / 1000))" >>"$T/$w.t"
    done
    sleep 1.1
    i=$((i + 1))
done
for w in nosites sites; do
    for col in 1 2; do
        cut -d' ' -f$col "$T/$w.t" | sort -n | awk -v w="$w" -v c=$col '{ a[NR] = $1 }
            END { m = a[int((NR + 1) / 2)]; if (c == 1) printf "%s: cpu median %.2f ms per scrape (n=%d, min %.2f, max %.2f), ", w, m / 1e6, NR, a[1] / 1e6, a[NR] / 1e6;
                  else printf "wall median %d us\n", m }'
    done
done
echo quit >&3
echo quit >&5

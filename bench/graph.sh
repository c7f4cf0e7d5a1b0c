#!/bin/sh
# bench/graph.sh: how long the call graph and the source listing take on a large profile:
# bench/dump_latency at HEAPSIFT_RATE=1 with 70,000 live objects from 35,000 distinct
# stacks (issue 30's size; 16-frame paths through two mutually recursive functions), one
# dump. Times (median of 5 runs, wall clock, ms): `heapsift top` (reading and building the
# report: the floor), `heapsift graph` (DOT), `graph -o OUT.svg` (Graphviz's dot run on
# it), `graph --layout heapsift -o OUT.svg` (heapsift's own layout, what a process's
# ?display=svg draws) and `heapsift list path_one`. Prints a markdown table.
# usage: sh bench/graph.sh BUILD_DIR
set -eu
[ $# -eq 1 ] || { echo "usage: sh bench/graph.sh BUILD_DIR" >&2; exit 1; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
hs=$build/heapsift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cc -std=gnu11 -O2 -g -pthread -o "$tmp/dump_latency" "$here/dump_latency.c"
mkdir "$tmp/d"
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$tmp/exit.pb.gz" LD_PRELOAD="$build/libheapsift.so" \
    "$tmp/dump_latency" "$tmp/d" 70000 35000 1 1 >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
prof=$(ls "$tmp"/d/*.pb.gz | head -n 1)
"$hs" top --comments "$prof" >"$tmp/top"
stacks=$(awk '$1 == "live" { sub(/samples=/, "", $2); sub(/stacks=/, "", $3); print $2 " samples, " $3 " stacks" }' "$tmp/top")

ms() { # CMD...: median wall time of 5 runs, in ms
    for i in 1 2 3 4 5; do
        t0=$(date +%s%N)
        "$@" >/dev/null 2>&1 || echo "bench: $* failed" >&2
        t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000000))
    done | sort -n | sed -n 3p
}
echo "profile: $(basename "$prof"), $stacks; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| command | median ms (5 runs) |"
echo "| --- | --- |"
echo "| heapsift top | $(ms "$hs" top "$prof") |"
echo "| heapsift graph (DOT) | $(ms "$hs" graph "$prof") |"
if command -v dot >/dev/null 2>&1; then
    echo "| heapsift graph -o OUT.svg (Graphviz dot) | $(ms "$hs" graph -o "$tmp/g.svg" "$prof") |"
fi
echo "| heapsift graph --layout heapsift -o OUT.svg | $(ms "$hs" graph --layout heapsift -o "$tmp/h.svg" "$prof") |"
echo "| heapsift list path_one | $(ms "$hs" list path_one "$prof") |"

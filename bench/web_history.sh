#!/bin/sh
# bench/web_history.sh: how long `heapsift web`'s per-site history (/api/history) and the
# series with its interval band (/api/series) take over a full ring of 32 large profiles:
# one dump of bench/dump_latency at HEAPSIFT_RATE=1 with 70,000 live objects from 35,000
# distinct stacks (issue 30's size, as bench/graph.sh), copied 32 times into a directory
# target. Cold: the first request after the ring is loaded (one report built per profile);
# warm: the same request again (web_history.c's cache per profile id and options); with
# site: one more report of B for the site's stacks. The history is asked as the page asks
# (sample=inuse_space), so the series' band then comes from the same cache entries. Wall clock of curl, median of 5 (cold:
# one run, a fresh server each time would reload 32 profiles). Prints a markdown table.
# usage: sh bench/web_history.sh BUILD_DIR
set -eu
[ $# -eq 1 ] || { echo "usage: sh bench/web_history.sh BUILD_DIR" >&2; exit 1; }
build=$(cd "$1" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
hs=$build/heapsift
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
cc -std=gnu11 -O2 -g -pthread -o "$tmp/dump_latency" "$here/dump_latency.c"
mkdir "$tmp/d" "$tmp/ring"
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$tmp/exit.pb.gz" LD_PRELOAD="$build/libheapsift.so" \
    "$tmp/dump_latency" "$tmp/d" 70000 35000 1 1 >/dev/null 2>"$tmp/err" ||
    { cat "$tmp/err" >&2; exit 1; }
prof=$(ls "$tmp"/d/*.pb.gz | head -n 1)
for i in $(seq -w 1 32); do cp "$prof" "$tmp/ring/p$i.pb.gz"; done
"$hs" web --listen 127.0.0.1:0 --interval 3600 "$tmp/ring" >"$tmp/out" 2>"$tmp/werr" &
pid=$!
i=0
until grep -q serving "$tmp/out" 2>/dev/null; do
    sleep 0.2
    i=$((i + 1))
    [ $i -lt 600 ] || { cat "$tmp/werr" >&2; exit 1; }
done
url=$(sed -n 's#.*serving \(http://[^ ]*\) .*#\1#p' "$tmp/out")
ms() { # PATH: wall time of one GET, in ms
    t0=$(date +%s%N)
    curl -sf -o /dev/null "${url}api/$1" || echo "bench: $1 failed" >&2
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}
med() { for k in 1 2 3 4 5; do ms "$1"; done | sort -n | sed -n 3p; }
n=$(curl -sf "${url}api/targets" | sed -n 's/.*"profiles":\([0-9]*\).*/\1/p')
echo "ring: $n copies of $(basename "$prof") ($("$hs" top --comments "$prof" |
    awk '$1 == "live" { sub(/stacks=/, "", $3); print $3 }') stacks); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
echo "| request | ms |"
echo "| --- | --- |"
echo "| /api/history n=8, cold (32 reports) | $(ms "history?target=0&sample=inuse_space&n=8") |"
site=$(curl -sf "${url}api/history?target=0&sample=inuse_space&n=1" | sed -n 's/.*"sites":\[{"name":"\([^"]*\)".*/\1/p')
echo "| /api/history n=8, warm (median of 5) | $(med "history?target=0&sample=inuse_space&n=8") |"
echo "| /api/history n=32, warm (median of 5) | $(med "history?target=0&sample=inuse_space&n=32") |"
echo "| /api/history n=8 site=$site, warm (median of 5) | $(med "history?target=0&sample=inuse_space&n=8&site=$site") |"
echo "| /api/series, after the history (its entries serve the band) | $(ms "series?target=0") |"
echo "| /api/series, warm (median of 5) | $(med "series?target=0") |"
echo "| /api/top (one report, for scale; median of 5) | $(med "top?target=0&id=32") |"

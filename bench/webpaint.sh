#!/bin/sh
# bench/webpaint.sh: how soon `heapsift web` paints its Top, Flame and Graph views of a
# 35,000-stack profile (issue 30: first paint within 1 s of load), beside `go tool pprof
# -http`'s top, flame graph and graph pages on the same profile. The profile: bench/
# webstacks.c at HEAPSIFT_RATE=1 (exact), 70,000 live objects from 35,000 distinct stacks
# through 16 named functions, 4 calls deep. Each view is opened in headless Chromium
# (Debian's, with playwright-core from tests/web/node_modules: tests/web/install.sh) in a
# fresh browser context and timed from the navigation's start until its content is in the
# DOM and a requestAnimationFrame has run (bench/webpaint.mjs): heapsift's Top rows, flame
# frames, graph boxes; pprof's top table rows, its flame graph's SVG, its graph's boxes.
# The floor: the server's /api/targets as a document, loaded (what any page costs here).
# RUNS runs (default 7, at least 5), interleaved over the seven; the median, min and
# max in ms. Also the API's own time per view (curl, median of RUNS). Prints a markdown
# report (date, commit, machine, load).
# usage: sh bench/webpaint.sh BUILD_DIR [RUNS]
set -eu
[ $# -ge 1 ] || { echo "usage: sh bench/webpaint.sh BUILD_DIR [RUNS]" >&2; exit 1; }
build=$(cd "$1" && pwd)
runs=${2:-7}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
hs=$build/heapsift
[ "$runs" -ge 5 ] || { echo "webpaint: RUNS must be at least 5" >&2; exit 1; }
[ -d "$src/tests/web/node_modules/playwright-core" ] || sh "$src/tests/web/install.sh" >&2
tmp=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill "$p" 2>/dev/null; done; rm -rf "$tmp"' EXIT INT TERM
# web_free_port and web_wait_port (FILE REGEX: what REGEX captures in FILE, within 30 s).
. "$src/tests/web/lib.sh"
wait_url() {
    web_wait_port "$@" || { echo "webpaint: nothing listening (see $1)" >&2; cat "$1" >&2; return 1; }
}

cc -std=gnu11 -O2 -g -fno-omit-frame-pointer -o "$tmp/webstacks" "$here/webstacks.c"
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$tmp/webstacks.pb.gz" LD_PRELOAD="$build/libheapsift.so" \
    "$tmp/webstacks" 70000 35000 4 >/dev/null
prof=$tmp/webstacks.pb.gz
stacks=$("$hs" top --comments "$prof" | awk '$1 == "live" { sub(/samples=/, "", $2); sub(/stacks=/, "", $3); print $2 " samples, " $3 " stacks" }')

"$hs" web --listen 127.0.0.1:0 "$prof" >"$tmp/hs.out" 2>"$tmp/hs.err" &
pids="$pids $!"
hsurl=$(wait_url "$tmp/hs.out" 'serving (http://[^ ]+/)')
ppport=$(web_free_port)
pprof_ok=0
if command -v go >/dev/null 2>&1; then
    go tool pprof -http="127.0.0.1:$ppport" -no_browser "$prof" >"$tmp/pp.out" 2>&1 &
    pids="$pids $!"
    wait_url "$tmp/pp.out" "(http://127\\.0\\.0\\.1:$ppport)" >/dev/null && pprof_ok=1
fi
pp=http://127.0.0.1:$ppport/ui

# The API's time for each view (the page asks for them in MB: the page's unit here).
api_ms() { # PATH
    for i in $(seq "$runs"); do
        t0=$(date +%s%N)
        curl -sS -o /dev/null --max-time 120 "${hsurl}api/$1"
        t1=$(date +%s%N)
        echo $(((t1 - t0) / 1000000))
    done | sort -n | sed -n "$(((runs + 1) / 2))p"
}
load=$(cut -d' ' -f1-3 /proc/loadavg)
top_ms=$(api_ms "top?target=0&id=1&unit=MB")
flame_ms=$(api_ms "flame?target=0&id=1&unit=MB")
graph_ms=$(api_ms "graph?target=0&id=1&unit=MB")
flame_kb=$(curl -sS "${hsurl}api/flame?target=0&id=1&unit=MB" | wc -c)
frames=$(curl -sS "${hsurl}api/flame?target=0&id=1&unit=MB" | grep -o '"n":' | wc -l)

set -- "floor=${hsurl}api/targets=load" "hs-top=${hsurl}#top=#top-table tbody tr[data-name]" \
    "hs-flame=${hsurl}#flame=#flamebox g.fr" \
    "hs-graph=${hsurl}#graph=#graphbox g.node[data-name]"
if [ $pprof_ok = 1 ]; then
    set -- "$@" "pprof-top=$pp/top=#toptable tbody tr" "pprof-flame=$pp/flamegraph=#chart svg g" \
        "pprof-graph=$pp/=#graph svg g.node"
fi
HS_WEB_MODULES=$src/tests/web/node_modules node "$here/webpaint.mjs" "$runs" "$@" >"$tmp/paint"

fig() { # NAME: "median (min..max)"
    awk -v n="$1" '$1 == n { print $2 " (" $3 ".." $4 ")" }' "$tmp/paint"
}
runs_of() { sed -n "s/^$1 .* | //p" "$tmp/paint"; }
echo "## $(date -u '+%Y-%m-%d %H:%M') UTC: first paint of the web UI on a 35,000-stack profile (bench/webpaint.sh)"
echo
echo "- machine: $(uname -m), $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1), Chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{ print $2 }') headless"
echo "- kernel: $(uname -r); load average before the run: $load"
echo "- heapsift commit: $(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown); $(go version 2>/dev/null | awk '{ print $3 }') for go tool pprof"
echo "- profile: bench/webstacks.c, HEAPSIFT_RATE=1, $stacks; the flame tree sent: $frames frames, $((flame_kb / 1024)) KiB of JSON"
echo "- $runs runs of each view, interleaved, each in a fresh browser context; ms from navigation start to content in the DOM + one animation frame"
echo
echo "| view | heapsift web: median ms (min..max) | go tool pprof -http: median ms (min..max) | heapsift API alone, median ms |"
echo "| --- | --- | --- | --- |"
echo "| Top | $(fig hs-top) | $(fig pprof-top) | $top_ms |"
echo "| Flame | $(fig hs-flame) | $(fig pprof-flame) | $flame_ms |"
echo "| Graph | $(fig hs-graph) | $(fig pprof-graph) | $graph_ms |"
echo "| floor: /api/targets (a small JSON document) loaded | $(fig floor) | | |"
echo
echo "Every run (ms): heapsift top $(runs_of hs-top); flame $(runs_of hs-flame); graph $(runs_of hs-graph)."
[ $pprof_ok = 1 ] && echo "pprof top $(runs_of pprof-top); flame $(runs_of pprof-flame); graph $(runs_of pprof-graph)."
echo "Load average after the run: $(cut -d' ' -f1-3 /proc/loadavg)."

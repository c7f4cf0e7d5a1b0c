#!/bin/sh
# http_views: the quick views of ?display= for a person with only curl, and pprof's web
# UI on the endpoint (tests/programs/http_app.c at rate 1, site_old = 4194304 bytes):
#  - text: pprof's -top table, with site_old's row at 4MB flat, the same row
#    go tool pprof -top prints for the same profile;
#  - svg: a well-formed SVG call graph (image/svg+xml, laid out in the process) with a
#    4MB box for site_old, as heapsift graph has it, and an edge into it;
#  - flamegraph_svg: the SVG flame graph alone (what svg served before the call graph);
#  - flamegraph: an HTML page holding it; on /allocs its sample type is alloc_space;
#  - stats: the RSS reconciliation, with a live heap of 4.0 MB +- 0 B (rate 1: every
#    allocation sampled; site_old's 4 MiB and the program's few KiB);
#  - ?seconds=10&display=text: a delta drawn as text, with site_window allocated during it
#    (10 s: the allocation takes milliseconds, and must fall inside on a loaded machine);
#  - unknown display or sample_index: 400;
#  - go tool pprof -http (the web UI) on the URL serves its top page with site_old.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-views
. "$(dirname "$0")/../lib/http.sh"
http_need
app_start
app old 64 >/dev/null

[ "$(get '/debug/pprof/heap?display=text' "$T/text")" = 200 ] || fail "display=text: not 200"
grep -q '^ *4MB .* site_old$' "$T/text" || { fail "display=text: no 4MB row for site_old"; show "$T/text"; }
get /debug/pprof/heap "$T/heap.pb.gz" >/dev/null
go tool pprof -top "$T/heap.pb.gz" 2>/dev/null | grep ' site_old$' >"$T/gorow"
grep ' site_old$' "$T/text" | cmp -s - "$T/gorow" || { fail "display=text: site_old's row differs from go tool pprof -top"; show "$T/gorow"; }

ct=$(curl -sS -o "$T/cg.svg" -w '%{content_type}' "$URL/debug/pprof/heap?display=svg")
[ "$ct" = image/svg+xml ] || fail "display=svg: content type '$ct'"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$T/cg.svg" || fail "display=svg: not well-formed XML"
# The call graph: a box for site_old holding its 4MB, the node heapsift graph draws from
# the same profile (its DOT tooltip), and an edge into it.
grep -q '<g id="node[0-9]*" class="node" data-name="site_old"><title>site_old (4MB)</title>' "$T/cg.svg" ||
    { fail "display=svg: no call graph box for site_old of 4MB"; show "$T/cg.svg" 20; }
"$CLI" graph "$T/heap.pb.gz" >"$T/cg.dot" 2>&1
grep -q 'tooltip="site_old (4MB)"' "$T/cg.dot" || { fail "heapsift graph: no site_old (4MB) node"; show "$T/cg.dot"; }
grep -q '<title>[^<]* -&gt; site_old (4MB)</title>' "$T/cg.svg" || fail "display=svg: no edge into site_old"
ct=$(curl -sS -o "$T/fg.svg" -w '%{content_type}' "$URL/debug/pprof/heap?display=flamegraph_svg")
[ "$ct" = image/svg+xml ] || fail "display=flamegraph_svg: content type '$ct'"
python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "$T/fg.svg" || fail "display=flamegraph_svg: not well-formed XML"
grep -q 'hsFlame' "$T/fg.svg" && grep -q 'site_old' "$T/fg.svg" || fail "display=flamegraph_svg: no flame graph with site_old"

[ "$(get '/debug/pprof/allocs?display=flamegraph' "$T/fg.html")" = 200 ] || fail "display=flamegraph: not 200"
grep -q '<title>heapsift: pid [0-9]*, alloc_space</title>' "$T/fg.html" && grep -q '<svg' "$T/fg.html" &&
    grep -q site_old "$T/fg.html" || { fail "display=flamegraph on allocs: want an alloc_space page with the SVG"; show "$T/fg.html" 5; }

[ "$(get '/debug/pprof/heap?display=stats' "$T/stats")" = 200 ] || fail "display=stats: not 200"
grep -q '^RSS ' "$T/stats" && grep -Eq 'live heap \(sampled estimate\) +4\.0 MB +\+- 0 B \(95%\)' "$T/stats" ||
    { fail "display=stats: want RSS and a live heap of 4.0 MB +- 0 B"; show "$T/stats"; }

curl -sS -o "$T/dtext" "$URL/debug/pprof/heap?seconds=10&display=text" 2>/dev/null &
C=$!
windows_wait 1 || true
app window 8 >/dev/null
still_open 1 "the allocations of the ?seconds=10&display=text window"
wait "$C" || true
grep -q ' site_window$' "$T/dtext" && ! grep -q ' site_old$' "$T/dtext" ||
    { fail "?seconds=10&display=text: want site_window and not site_old"; show "$T/dtext"; }

[ "$(get '/debug/pprof/heap?display=bogus' "$T/x")" = 400 ] || fail "display=bogus: not 400"
[ "$(get '/debug/pprof/heap?display=text&sample_index=bogus' "$T/x")" = 400 ] || fail "sample_index=bogus: not 400"
[ "$(get '/debug/pprof/heap?sample_index=bogus' "$T/x")" = 400 ] || fail "sample_index=bogus without display: not 400"
[ "$(get '/debug/pprof/heap?sample_index=alloc_space' "$T/x")" = 200 ] || fail "sample_index=alloc_space: not 200"

UIPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
go tool pprof -no_browser -http="127.0.0.1:$UIPORT" "$URL/debug/pprof/heap" >"$T/ui.log" 2>&1 &
UI=$!
i=0
until curl -s -o "$T/ui.html" "http://127.0.0.1:$UIPORT/ui/top" 2>/dev/null || [ $i -ge 100 ]; do
    sleep 0.2
    i=$((i + 1))
done
kill "$UI" 2>/dev/null || true
wait "$UI" 2>/dev/null || true
grep -q site_old "$T/ui.html" || { fail "pprof web UI: /ui/top does not show site_old"; show "$T/ui.log"; }
app_stop
[ "$FAILS" -eq 0 ] && echo "http_views: ok"
exit $((FAILS > 0))

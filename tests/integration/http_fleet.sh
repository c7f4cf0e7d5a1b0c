#!/bin/sh
# http_fleet: the endpoint requested the way docs/fleet.md's Parca and Grafana Alloy
# configurations make those scrapers request it (neither server can be installed here):
#  - Parca, memory path /debug/pprof/heap, every scrape: 200, application/octet-stream,
#    a gzipped pprof with Go's four heap sample types (alloc_objects/count,
#    alloc_space/bytes, inuse_objects/count, inuse_space/bytes; default inuse_space),
#    period space/bytes,
#    read by go tool pprof and heapsift top with site_old = 4194304 (rate 1);
#  - repeated scrapes are cumulative: alloc_space of site_window never decreases and
#    grows by what was allocated between scrapes;
#  - Alloy profile.memory delta = false: /debug/pprof/allocs, default alloc_space;
#  - Alloy delta = true: /debug/pprof/allocs?seconds=10 holds only the window's
#    allocations (10 s: the allocation takes milliseconds and must fall inside the
#    window on a loaded machine).
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-fleet
. "$(dirname "$0")/../lib/http.sh"
http_need
app_start
app old 64 >/dev/null
scrape() { # PATH OUT: a scrape with a scraper's headers; prints status and content type
    curl -sS -o "$2" -w '%{http_code} %{content_type}' -H 'User-Agent: heapsift-fleet-test' \
        -H 'X-Prometheus-Scrape-Timeout-Seconds: 10' --max-time 30 "$URL$1" 2>>"$T/curl.err"
}

prev=0
for i in 1 2 3; do
    app window 4 >/dev/null
    sleep 1.1 # past the endpoint's 1 s profile cache, as a 15 s interval is
    r=$(scrape /debug/pprof/heap "$T/p$i.pb.gz")
    [ "$r" = "200 application/octet-stream" ] || fail "Parca scrape $i: '$r'"
    [ "$(head -c 2 "$T/p$i.pb.gz" | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "scrape $i: not gzipped"
    go tool pprof -raw "$T/p$i.pb.gz" 2>/dev/null | sed -n 's/^PeriodType: //p; /^Samples:/{n;p}' >"$T/types$i"
    printf 'space bytes\nalloc_objects/count alloc_space/bytes inuse_objects/count inuse_space/bytes[dflt]\n' |
        diff - "$T/types$i" >/dev/null ||
        { fail "scrape $i: sample types or period type are not Go's heap ones"; show "$T/types$i"; }
    [ "$(site "$T/p$i.pb.gz" inuse_space site_old)" = 4194304 ] || fail "scrape $i: site_old is not 4194304"
    w=$(site "$T/p$i.pb.gz" alloc_space site_window)
    [ "${w:-0}" -eq $((prev + 262144)) ] || fail "scrape $i: site_window alloc_space ${w:-0}, want $((prev + 262144))"
    prev=${w:-0}
done
[ "$("$CLI" top --unit B "$T/p3.pb.gz" | table | awk -F '\t' '$1 == "site_old" { print $2 }')" = 4194304 ] ||
    fail "heapsift top on a scrape: site_old is not 4194304"

r=$(scrape /debug/pprof/allocs "$T/allocs.pb.gz")
[ "$r" = "200 application/octet-stream" ] || fail "Alloy scrape (delta = false): '$r'"
go tool pprof -top "$T/allocs.pb.gz" 2>/dev/null | grep -q '^Type: alloc_space' || fail "allocs: default is not alloc_space"

scrape '/debug/pprof/allocs?seconds=10' "$T/delta.pb.gz" >"$T/delta.code" &
S=$!
windows_wait 1 || true
app window 2 >/dev/null
still_open 1 "the allocations of the delta scrape's window"
wait "$S" || true
[ "$(cut -d' ' -f1 "$T/delta.code")" = 200 ] || fail "Alloy scrape (delta = true): $(cat "$T/delta.code")"
[ "$(site "$T/delta.pb.gz" alloc_space site_window)" = 131072 ] && [ -z "$(site "$T/delta.pb.gz" alloc_space site_old)" ] ||
    { fail "delta scrape: want site_window 131072 and no site_old"; gotop "$T/delta.pb.gz" alloc_space | show /dev/stdin; }
app_stop
[ "$FAILS" -eq 0 ] && echo "http_fleet: ok"
exit $((FAILS > 0))

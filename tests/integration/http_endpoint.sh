#!/bin/sh
# http_endpoint: the endpoint's read-only paths, fetched with the real clients (curl and
# go tool pprof) from tests/programs/http_app.c at rate 1, whose site_old holds exactly
# 64 x 64 KiB = 4194304 bytes:
#  - /debug/pprof/ lists heap and allocs; /debug/pprof (no slash) too;
#  - /debug/pprof/heap: a gzipped pprof that go tool pprof reads with site_old = 4194304
#    inuse_space (also fetched by go tool pprof itself from the URL), default inuse_space;
#  - /debug/pprof/allocs: the same data, default sample type alloc_space (Go's);
#  - ?debug=1: Go's heap text, read back by heapsift top and go tool pprof with the same
#    4194304 (pprof reads addresses only: the row of 4194304B); ?gc=1 accepted;
#  - /debug/heapsift/stats: JSON whose exact counters and live estimate match: at rate 1
#    every allocation is a sample, so the estimate is exact: live_bytes is site_old's
#    4194304 plus the program's own few allocations (at most 64 KiB more, and no more than
#    it allocated: nothing is freed), one sample per object, and a ci95 of 0;
#  - /debug/pprof/symbol: "num_symbols: 1"; a profile served unsymbolized
#    (HEAPSIFT_SYMBOLIZE=none) is named by go tool pprof -symbolize=remote through it;
#    site_old's leaf address, POSTed and in Go's GET query form, is named site_old;
#  - unknown path 404, POST on a profile 405, seconds on peak 400, debug with seconds 400;
#  - no libmicrohttpd in a process without HEAPSIFT_HTTP.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-endpoint
. "$(dirname "$0")/../lib/http.sh"
http_need

app_start HEAPSIFT_PEAK=1
app old 64 >/dev/null

[ "$(get /debug/pprof/ "$T/index")" = 200 ] && grep -q 'href="heap"' "$T/index" &&
    grep -q 'href="allocs"' "$T/index" || { fail "/debug/pprof/: no index"; show "$T/index"; }
[ "$(get /debug/pprof "$T/index2")" = 200 ] || fail "/debug/pprof: not 200"

[ "$(get /debug/pprof/heap "$T/heap.pb.gz")" = 200 ] || fail "/debug/pprof/heap: not 200"
[ "$(site "$T/heap.pb.gz" inuse_space site_old)" = 4194304 ] ||
    { fail "heap: site_old inuse_space is not 4194304"; gotop "$T/heap.pb.gz" inuse_space | show /dev/stdin; }
[ "$(hstop "$T/heap.pb.gz" inuse_space | table | awk -F '\t' '$1 == "site_old" { print $2 }')" = 4194304 ] ||
    fail "heap: heapsift top does not give site_old 4194304"
go tool pprof -raw "$T/heap.pb.gz" 2>/dev/null | grep -q '^PeriodType: space bytes' || fail "heap: period type"
go tool pprof -top -unit=B "$URL/debug/pprof/heap" >"$T/gofetch" 2>&1 || fail "go tool pprof URL failed"
grep -q 'Type: inuse_space' "$T/gofetch" && grep -q '4194304B.*site_old' "$T/gofetch" ||
    { fail "go tool pprof $URL/debug/pprof/heap: want inuse_space, site_old 4194304B"; show "$T/gofetch"; }

[ "$(get /debug/pprof/allocs "$T/allocs.pb.gz")" = 200 ] || fail "allocs: not 200"
go tool pprof -top -unit=B "$T/allocs.pb.gz" >"$T/allocs.top" 2>&1
grep -q 'Type: alloc_space' "$T/allocs.top" && grep -q '4194304B.*site_old' "$T/allocs.top" ||
    { fail "allocs: want default alloc_space with site_old 4194304B"; show "$T/allocs.top"; }

[ "$(get '/debug/pprof/heap?debug=1&gc=1' "$T/heap.txt")" = 200 ] || fail "debug=1: not 200"
head -1 "$T/heap.txt" | grep -q '^heap profile: [0-9]*: [0-9]* \[[0-9]*: [0-9]*\] @ heap/2$' ||
    { fail "debug=1: not Go's header (rate 1: heap/2)"; show "$T/heap.txt" 3; }
grep -q '^#	0x[0-9a-f]*	site_old+0x0	.*http_app.c:[0-9]*$' "$T/heap.txt" || fail "debug=1: no frame comment for site_old"
[ "$("$CLI" top --unit B "$T/heap.txt" | table | awk -F '\t' '$1 == "site_old" { print $2 }')" = 4194304 ] ||
    { fail "debug=1 read by heapsift top: site_old is not 4194304"; "$CLI" top "$T/heap.txt" | show /dev/stdin; }
gotop "$T/heap.txt" inuse_space >"$T/gotext" 2>&1 && grep -q '^ *4194304B ' "$T/gotext" ||
    { fail "debug=1 read by go tool pprof: no row of 4194304B"; show "$T/gotext"; }

[ "$(get /debug/heapsift/stats "$T/stats.json")" = 200 ] || fail "stats: not 200"
python3 - "$T/stats.json" <<'PY' || fail "stats: JSON does not match"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["exact"]["allocs"] >= 64, s["exact"]
assert s["rate"] == 1 and s["active"] is True
e = s["estimate"]
assert 4194304 <= e["live_bytes"] <= min(4194304 + 65536, s["exact"]["bytes"]), (e, s["exact"])
assert e["live_bytes_ci95"] == 0 and e["live_samples"] == e["live_objects"] == s["exact"]["allocs"], (e, s["exact"])
assert s["http"]["delta_windows_open"] == 0, s["http"]
assert s["rss"]["rss"] > s["estimate"]["live_bytes"]
assert s["http"]["requests"] >= 6
PY

[ "$(get /debug/pprof/symbol "$T/sym")" = 200 ] && grep -qx 'num_symbols: 1' "$T/sym" || fail "symbol GET"
[ "$(get /debug/pprof/nothing "$T/x")" = 404 ] || fail "unknown path: not 404"
[ "$(get /debug/pprof/heap "$T/x" -X POST)" = 405 ] || fail "POST heap: not 405"
[ "$(get '/debug/pprof/peak?seconds=1' "$T/x")" = 400 ] || fail "peak?seconds: not 400"
[ "$(get '/debug/pprof/heap?seconds=1&debug=1' "$T/x")" = 400 ] || fail "seconds with debug: not 400"
[ "$(get '/debug/pprof/heap?seconds=x' "$T/x")" = 400 ] || fail "seconds=x: not 400"
[ "$(get /debug/pprof/peak "$T/peak.pb.gz")" = 200 ] || fail "peak: not 200"
[ "$(site "$T/peak.pb.gz" inuse_space site_old)" = 4194304 ] || fail "peak: site_old is not 4194304"
grep -q 'libmicrohttpd' "/proc/$APP_PID/maps" || fail "libmicrohttpd not mapped with HEAPSIFT_HTTP"
app_stop

# Remote symbolization: the profile carries addresses only; pprof asks /debug/pprof/symbol.
app_start HEAPSIFT_SYMBOLIZE=none
app old 16 >/dev/null
go tool pprof -symbolize=none -top "$URL/debug/pprof/heap" >"$T/nosym" 2>&1 || true
! grep -q site_old "$T/nosym" || fail "HEAPSIFT_SYMBOLIZE=none: the profile is symbolized already"
go tool pprof -symbolize=remote -top -unit=B "$URL/debug/pprof/heap" >"$T/remote" 2>&1 ||
    fail "go tool pprof -symbolize=remote failed"
grep -q '1048576B.*site_old' "$T/remote" ||
    { fail "-symbolize=remote: site_old not named through /debug/pprof/symbol"; show "$T/remote"; }
# The leaf of the 1 MiB sample is in site_old: POST it, and GET it (Go's query form).
get /debug/pprof/heap "$T/nosym.pb.gz" >/dev/null
go tool pprof -raw "$T/nosym.pb.gz" 2>/dev/null >"$T/raw"
leaf=$(awk '/^Samples/ { s = 1 } /^Locations/ { s = 0 } s && / 1048576: / { sub(/.*: /, ""); print $1; exit }' "$T/raw")
addr=$(awk -v id="$leaf" '/^Locations/ { l = 1; next } /^Mappings/ { l = 0 } l && $1 == id ":" { print $2; exit }' "$T/raw")
[ -n "$addr" ] || { fail "no location for the 1 MiB sample"; show "$T/raw"; }
curl -sS -X POST --data-binary "$addr+0x1" "$URL/debug/pprof/symbol" >"$T/sympost" 2>&1 || true
grep -qx "$addr site_old" "$T/sympost" || { fail "POST /debug/pprof/symbol $addr: want '$addr site_old'"; show "$T/sympost"; }
[ "$(get "/debug/pprof/symbol?$addr" "$T/symget")" = 200 ] && grep -qx "$addr site_old" "$T/symget" ||
    { fail "GET /debug/pprof/symbol?$addr: want '$addr site_old'"; show "$T/symget"; }
app_stop

# A process without HEAPSIFT_HTTP never maps libmicrohttpd.
LD_PRELOAD="$LIB" sh -c 'grep -c libmicrohttpd /proc/$$/maps' >"$T/nomap" 2>/dev/null || true
[ "$(cat "$T/nomap")" = 0 ] || fail "libmicrohttpd mapped without HEAPSIFT_HTTP"
[ "$FAILS" -eq 0 ] && echo "http_endpoint: ok"
exit $((FAILS > 0))

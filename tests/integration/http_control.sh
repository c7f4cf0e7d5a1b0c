#!/bin/sh
# http_control: POST /debug/heapsift/{active,rate,reset,dump} (tests/programs/http_app.c,
# rate 1, site_old = 4194304 bytes):
#  - without HEAPSIFT_HTTP_TOKEN every control POST is 403, and changes nothing;
#  - with it: 403 without the header and with a wrong token, 200 with the right one;
#  - active 0: allocations made then (site_window) are not sampled; active 1 again;
#  - rate 4096: /debug/heapsift/stats says rate 4096;
#  - reset: alloc_space of site_old is gone from /allocs, its inuse_space stays;
#  - dump: a profile file appears, read by go tool pprof with site_old; dump?kind=peak
#    without HEAPSIFT_PEAK answers 409 naming it, and writes nothing;
#  - bad value 400, GET 405, oversized body 413.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-control
. "$(dirname "$0")/../lib/http.sh"
http_need
post() { # PATH [curl options]: status of a control POST
    p=$1
    shift
    get "/debug/heapsift/$p" "$T/post.out" -X POST "$@"
}

app_start
app old 64 >/dev/null
for c in active rate reset dump; do
    [ "$(post "$c?value=1" -H 'Authorization: Bearer x')" = 403 ] || fail "$c without HEAPSIFT_HTTP_TOKEN: not 403"
done
[ "$(get /debug/pprof/allocs "$T/a0.pb.gz")" = 200 ] &&
    [ "$(site "$T/a0.pb.gz" alloc_space site_old)" = 4194304 ] || fail "a refused reset changed alloc_space"
app_stop

TOK=s3cret-$$
app_start HEAPSIFT_HTTP_TOKEN="$TOK"
app old 64 >/dev/null
[ "$(post 'active?value=0')" = 403 ] || fail "no Authorization header: not 403"
[ "$(post 'active?value=0' -H 'Authorization: Bearer wrong')" = 403 ] || fail "wrong token: not 403"
[ "$(post 'active?value=0' -H "Authorization: Bearer ${TOK}x")" = 403 ] || fail "token with a suffix: not 403"
[ "$(post 'active?value=0' -H "Authorization: Bearer $TOK")" = 200 ] || fail "active 0 with the token: not 200"
app window 8 >/dev/null
[ "$(post active -H "Authorization: Bearer $TOK" -d 1)" = 200 ] || fail "active 1 (body): not 200"
sleep 1.1 # the cache was dropped by the POST; be sure anyway
[ "$(get /debug/pprof/heap "$T/h1.pb.gz")" = 200 ] || fail "heap after active: not 200"
[ -z "$(site "$T/h1.pb.gz" inuse_space site_window)" ] || fail "site_window was sampled while inactive"
[ "$(site "$T/h1.pb.gz" inuse_space site_old)" = 4194304 ] || fail "site_old lost while inactive"

[ "$(post reset -H "Authorization: Bearer $TOK")" = 200 ] || fail "reset: not 200"
[ "$(get /debug/pprof/allocs "$T/a1.pb.gz")" = 200 ] || fail "allocs after reset: not 200"
[ -z "$(site "$T/a1.pb.gz" alloc_space site_old)" ] || fail "reset: site_old still has alloc_space"
[ "$(site "$T/a1.pb.gz" inuse_space site_old)" = 4194304 ] || fail "reset: site_old no longer in use"

[ "$(post rate -H "Authorization: Bearer $TOK" -d 4096)" = 200 ] || fail "rate: not 200"
get /debug/heapsift/stats "$T/stats.json" >/dev/null
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["rate"] == 4096' "$T/stats.json" ||
    fail "rate: stats do not say 4096"

[ "$(post dump -H "Authorization: Bearer $TOK")" = 200 ] || fail "dump: not 200"
f=$(find "$T" -maxdepth 1 -name 'exit.*.pb.gz' | head -1)
[ -n "$f" ] && [ "$(site "$f" inuse_space site_old)" = 4194304 ] || fail "dump: no profile file with site_old"

n=$(find "$T" -maxdepth 1 -name '*.pb.gz' | wc -l)
[ "$(post 'dump?kind=peak' -H "Authorization: Bearer $TOK")" = 409 ] || fail "dump?kind=peak without HEAPSIFT_PEAK: not 409"
grep -q HEAPSIFT_PEAK "$T/post.out" || fail "dump?kind=peak: the 409 does not say HEAPSIFT_PEAK"
[ "$(find "$T" -maxdepth 1 -name '*.pb.gz' | wc -l)" = "$n" ] || fail "dump?kind=peak: a file was written"
[ "$(post 'active?value=2' -H "Authorization: Bearer $TOK")" = 400 ] || fail "active=2: not 400"
[ "$(post 'rate?value=x' -H "Authorization: Bearer $TOK")" = 400 ] || fail "rate=x: not 400"
[ "$(get /debug/heapsift/reset "$T/x" -H "Authorization: Bearer $TOK")" = 405 ] || fail "GET reset: not 405"
head -c 4096 /dev/zero | tr '\0' 1 >"$T/big"
[ "$(post rate -H "Authorization: Bearer $TOK" --data-binary @"$T/big")" = 413 ] || fail "big body: not 413"
app_stop
[ "$FAILS" -eq 0 ] && echo "http_control: ok"
exit $((FAILS > 0))

#!/bin/sh
# http_delta: ?seconds=N is Go's delta profile (net/http/pprof serveDeltaProfile: the
# profile after the window minus the one before, all four sample types). At rate 1,
# http_app allocates 32 x 64 KiB at site_old before the window and 16 x 64 KiB at
# site_window during it, and frees site_old during a later window. Each window is 10 s:
# what the test does inside one takes milliseconds, and it checks (still_open) that it
# did it before the window closed, so a loaded machine has 10 s, not a guess of 2.
#  - four windows at once (curl ?seconds=10): a fifth is refused (503), and the four are
#    answered (200);
#  - the first of them: alloc_space and inuse_space of site_window = 1048576 exactly,
#    site_old absent (allocated before the window), duration at least 10 s and no longer
#    than the request took;
#  - the window does not block: /debug/pprof/heap answers while the windows are open;
#  - go tool pprof -seconds 10 (the client adds ?seconds=10 itself): the same on allocs;
#  - a window during which site_old is freed: site_old's inuse_space is -2097152, its
#    alloc_space absent.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-delta
. "$(dirname "$0")/../lib/http.sh"
http_need
app_start
app old 32 >/dev/null
W=10

t0=$(date +%s%N)
curl -sS -o "$T/d1.pb.gz" -w '%{http_code}' "$URL/debug/pprof/heap?seconds=$W" >"$T/d1.code" 2>&1 &
CURL=$!
windows_wait 1 || true
WS=""
for i in 2 3 4; do
    curl -sS -o /dev/null -w '%{http_code}\n' "$URL/debug/pprof/heap?seconds=$W" >"$T/w$i" 2>&1 &
    WS="$WS $!"
done
windows_wait 4 || true
[ "$(get '/debug/pprof/heap?seconds=1' "$T/x")" = 503 ] || fail "a fifth window is not refused with 503"
app window 16 >/dev/null
code=$(get /debug/pprof/heap "$T/during.pb.gz")
[ "$code" = 200 ] || fail "heap during an open window: $code"
# answered while the windows are open: a window that blocked the thread would have
# closed first
still_open 4 "the allocations of the first window, the fifth request and the heap request"
wait "$CURL" || true
t1=$(date +%s%N)
for p in $WS; do wait "$p" || true; done
for i in 2 3 4; do [ "$(cat "$T/w$i")" = 200 ] || fail "window $i: $(cat "$T/w$i")"; done
[ "$(cat "$T/d1.code")" = 200 ] || fail "?seconds=$W: status $(cat "$T/d1.code")"
for st in alloc_space inuse_space; do
    [ "$(site "$T/d1.pb.gz" $st site_window)" = 1048576 ] ||
        { fail "delta: site_window $st is not 1048576"; gotop "$T/d1.pb.gz" $st | show /dev/stdin; }
    [ -z "$(site "$T/d1.pb.gz" $st site_old)" ] || fail "delta: site_old (before the window) in $st"
done
# the window lies inside the request: at least W s, at most what the request took
go tool pprof -raw "$T/d1.pb.gz" 2>/dev/null |
    awk -v w=$W -v took="$(((t1 - t0) / 1000000))" '/^Duration:/ { d = $2; sub(/s$/, "", d) }
        END { exit !(d + 0 >= w - 0.1 && d * 1000 <= took + 100) }' ||
    fail "delta: duration is not $W s to the request's $(((t1 - t0) / 1000000)) ms"

# go tool pprof asks for the delta itself (-seconds adds ?seconds=N to the URL); the
# allocation is made once its window is seen open.
windows_wait 0 || true
go tool pprof -seconds $W -top -unit=B -sample_index=alloc_space "$URL/debug/pprof/allocs" >"$T/gosec" 2>&1 &
GP=$!
windows_wait 1 || true
app window 8 >/dev/null
still_open 1 "the allocations of go tool pprof's window"
wait "$GP" || fail "go tool pprof -seconds $W failed"
grep -q '524288B.*site_window' "$T/gosec" && ! grep -q 'site_old' "$T/gosec" ||
    { fail "go tool pprof -seconds $W: want site_window 524288B and no site_old"; show "$T/gosec"; }

curl -sS -o "$T/d2.pb.gz" "$URL/debug/pprof/heap?seconds=$W" 2>/dev/null &
CURL=$!
windows_wait 1 || true
app free_old >/dev/null
still_open 1 "the frees of the third window"
wait "$CURL" || true
[ "$(site "$T/d2.pb.gz" inuse_space site_old)" = -2097152 ] ||
    { fail "delta with a free: site_old inuse_space is not -2097152"; gotop "$T/d2.pb.gz" inuse_space | show /dev/stdin; }
[ -z "$(site "$T/d2.pb.gz" alloc_space site_old)" ] || fail "delta with a free: site_old has alloc_space"

app_stop
[ "$FAILS" -eq 0 ] && echo "http_delta: ok"
exit $((FAILS > 0))

#!/bin/sh
# http_delta: ?seconds=N is Go's delta profile (net/http/pprof serveDeltaProfile: the
# profile after the window minus the one before, all four sample types). At rate 1,
# http_app allocates 32 x 64 KiB at site_old before the window and 16 x 64 KiB at
# site_window during it, and frees site_old during a second window:
#  - curl ?seconds=2: alloc_space and inuse_space of site_window = 1048576 exactly,
#    site_old absent (allocated before the window), duration about 2 s;
#  - go tool pprof -seconds 2 (the client adds ?seconds=2 itself): the same on allocs;
#  - a window during which site_old is freed: site_old's inuse_space is -2097152, its
#    alloc_space absent;
#  - the window does not block: /debug/pprof/heap answers while it is open;
#  - a fifth concurrent window is refused (503), and the four open ones are answered.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-delta
. "$(dirname "$0")/../lib/http.sh"
http_need
app_start
app old 32 >/dev/null

curl -sS -o "$T/d1.pb.gz" -w '%{http_code}' "$URL/debug/pprof/heap?seconds=2" >"$T/d1.code" 2>&1 &
CURL=$!
windows_wait 1 || true
app window 16 >/dev/null
still_open 1 "the allocations of the first window"
t0=$(date +%s%N)
code=$(get /debug/pprof/heap "$T/during.pb.gz")
t1=$(date +%s%N)
[ "$code" = 200 ] || fail "heap during an open window: $code"
[ $(((t1 - t0) / 1000000)) -lt 1500 ] || fail "heap during an open window took $(((t1 - t0) / 1000000)) ms"
wait "$CURL" || true
[ "$(cat "$T/d1.code")" = 200 ] || fail "?seconds=2: status $(cat "$T/d1.code")"
for st in alloc_space inuse_space; do
    [ "$(site "$T/d1.pb.gz" $st site_window)" = 1048576 ] ||
        { fail "delta: site_window $st is not 1048576"; gotop "$T/d1.pb.gz" $st | show /dev/stdin; }
    [ -z "$(site "$T/d1.pb.gz" $st site_old)" ] || fail "delta: site_old (before the window) in $st"
done
go tool pprof -raw "$T/d1.pb.gz" 2>/dev/null |
    awk '/^Duration:/ { d = $2; sub(/s$/, "", d) } END { exit !(d + 0 >= 1.9 && d + 0 < 3) }' ||
    fail "delta: duration is not about 2 s"

# go tool pprof asks for the delta itself (-seconds adds ?seconds=N to the URL); the
# allocation is made once its window is seen open.
windows_wait 0 || true
go tool pprof -seconds 2 -top -unit=B -sample_index=alloc_space "$URL/debug/pprof/allocs" >"$T/gosec" 2>&1 &
GP=$!
windows_wait 1 || true
app window 8 >/dev/null
still_open 1 "the allocations of go tool pprof's window"
wait "$GP" || fail "go tool pprof -seconds 2 failed"
grep -q '524288B.*site_window' "$T/gosec" && ! grep -q 'site_old' "$T/gosec" ||
    { fail "go tool pprof -seconds 2: want site_window 524288B and no site_old"; show "$T/gosec"; }

curl -sS -o "$T/d2.pb.gz" "$URL/debug/pprof/heap?seconds=1" 2>/dev/null &
CURL=$!
windows_wait 1 || true
app free_old >/dev/null
still_open 1 "the frees of the third window"
wait "$CURL" || true
[ "$(site "$T/d2.pb.gz" inuse_space site_old)" = -2097152 ] ||
    { fail "delta with a free: site_old inuse_space is not -2097152"; gotop "$T/d2.pb.gz" inuse_space | show /dev/stdin; }
[ -z "$(site "$T/d2.pb.gz" alloc_space site_old)" ] || fail "delta with a free: site_old has alloc_space"

W=""
for i in 1 2 3 4; do
    curl -sS -o /dev/null -w '%{http_code}\n' "$URL/debug/pprof/heap?seconds=2" >"$T/w$i" 2>&1 &
    W="$W $!"
done
windows_wait 4 || true
[ "$(get '/debug/pprof/heap?seconds=1' "$T/x")" = 503 ] || fail "a fifth window is not refused with 503"
for p in $W; do wait "$p" || true; done
for i in 1 2 3 4; do [ "$(cat "$T/w$i")" = 200 ] || fail "window $i: $(cat "$T/w$i")"; done
app_stop
[ "$FAILS" -eq 0 ] && echo "http_delta: ok"
exit $((FAILS > 0))

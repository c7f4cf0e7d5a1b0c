#!/bin/sh
# `heapsift web` over a live process: tests/programs/leakseries (site_leak +256 KiB a step,
# site_drip +64 KiB, site_churn and site_flat constant at 8 MiB) runs with HEAPSIFT_HTTP
# on a free loopback port, and `heapsift web` polls its /debug/pprof/heap and
# /debug/heapsift/stats every second. Checks:
#   - each kept profile has the process's RSS from the stats JSON, and live heap rises;
#   - two stored profiles (A, B), downloaded from /api/raw: the page shows go tool pprof's
#     top row and site_leak figure, and go tool pprof -diff_base's site_leak change, which
#     must be positive (the program's truth: site_leak only grows) and equal heapsift
#     diff's (tests/web/web_live.mjs, headless Chromium), Series from the endpoint, and
#     Suspects ranking site_leak first, growing, with site_flat not growing;
#   - when the test kills the process (alive until then), the target's error shows up and
#     heapsift web keeps serving the profiles it has; SIGTERM stops it with status 0.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_live.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_live
. "$SRC/tests/web/lib.sh"
web_need_browser

# STEPS 0: a step every 100 ms until the test kills it below (or, should the test die
# first, until its parent is gone), however long the browser part takes.
HEAPSIFT_RATE=4096 HEAPSIFT_SEED=7 HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port" \
    HEAPSIFT_OUT="$T/exit.pb.gz" LD_PRELOAD="$LIB" "$BUILD/programs/leakseries" 0 - 100 \
    "$T/ready" >"$T/prog.out" 2>"$T/prog.err" &
PROG=$!
web_kill_at_exit $PROG
PORT=$(web_wait_port "$T/port" '^([0-9]+)$') || { fail "no endpoint port"; show "$T/prog.err"; exit 1; }
# site_flat's blocks are all there before the first profile (on a loaded machine the first
# poll could see part of them, and site_flat would look as if it grew)
hs_until 30 "leakseries finishing site_flat" '[ -e "$T/ready" ]'

web_start "$T/web" --interval 1 "http://127.0.0.1:$PORT"
[ -n "$URL" ] || { show "$T/web.err"; exit 1; }

# Wait for 5 profiles (the endpoint caches a built profile for 1 s; polls are 1 s apart).
n=$(web_wait_profiles 5 1)
[ "$n" -ge 5 ] || { fail "only $n profiles after 60 s"; show "$T/web.err"; }
web_json "$T/p.json" 'j.profiles.map(p => [p.id, p.inuse, p.rss, p.rss_from].join(" ")).join("\n")' >"$T/ring"
awk '$4 != "stats" || $3 <= 0 { bad = 1 } END { exit bad }' "$T/ring" ||
    { fail "RSS not from /debug/heapsift/stats"; show "$T/ring"; }
B=$(tail -n 1 "$T/ring" | cut -d' ' -f1)
A=$(tail -n 5 "$T/ring" | head -n 1 | cut -d' ' -f1)
IA=$(awk -v id="$A" '$1 == id {print $2}' "$T/ring")
IB=$(awk -v id="$B" '$1 == id {print $2}' "$T/ring")
[ "$IB" -gt "$IA" ] || fail "live heap did not rise from #$A ($IA) to #$B ($IB)"
# A and B pinned: kept past the ring of the last 32 profiles (polls 1 s apart) however long
# what follows takes on a loaded machine (A leaves the ring about 28 s after B's poll).
for id in $A $B; do
    curl -sS --max-time 30 -X POST -o "$T/pin.json" "${URL}api/pin?target=0&id=$id" &&
        grep -q '"pinned":true' "$T/pin.json" || { fail "cannot pin profile #$id"; show "$T/pin.json"; }
done

# The stored A and B, read by our CLI and by go tool pprof.
curl -sS -o "$T/a.pb.gz" "${URL}api/raw?target=0&id=$A"
curl -sS -o "$T/b.pb.gz" "${URL}api/raw?target=0&id=$B"
top_row() { sed -n '/^ *flat /{n;p;q}'; }
want_top=$("$CLI" top "$T/b.pb.gz" | top_row)
go_top=$(go tool pprof -symbolize=none -top -sample_index=inuse_space "$T/b.pb.gz" 2>/dev/null | top_row)
[ "$want_top" = "$go_top" ] || fail "heapsift top and go tool pprof disagree: '$want_top' / '$go_top'"
set -- $go_top
TOP_FLAT=$1 TOP_NAME=$6
# site_leak allocates through a helper (block): its figure is cum.
LEAK_CUM=$("$CLI" top "$T/b.pb.gz" | awk '$6 == "site_leak" {print $4; exit}')
GO_LEAK=$(go tool pprof -symbolize=none -top -sample_index=inuse_space "$T/b.pb.gz" 2>/dev/null |
    awk '$6 == "site_leak" {print $4; exit}')
[ -n "$LEAK_CUM" ] && [ "$LEAK_CUM" = "$GO_LEAK" ] || fail "site_leak: '$LEAK_CUM' / go '$GO_LEAK'"
LEAK_CUM=$GO_LEAK
# The change, from go tool pprof -diff_base; site_leak grows 256 KiB a step and never frees,
# so its change from A to B is positive, and heapsift diff must judge it grown.
GO_DIFF=$(go tool pprof -symbolize=none -top -sample_index=inuse_space -diff_base "$T/a.pb.gz" "$T/b.pb.gz" 2>/dev/null |
    awk '$6 == "site_leak" {print $4; exit}')
GO_DIFF_B=$(go tool pprof -symbolize=none -top -unit=B -sample_index=inuse_space -diff_base "$T/a.pb.gz" "$T/b.pb.gz" 2>/dev/null |
    awk '$6 == "site_leak" {sub(/B$/, "", $4); print $4; exit}')
[ -n "$GO_DIFF" ] && [ "${GO_DIFF_B:-0}" -gt 0 ] ||
    fail "go tool pprof -diff_base: site_leak's change from #$A to #$B is '$GO_DIFF' ($GO_DIFF_B B), want > 0"
DIFF=$("$CLI" diff "$T/a.pb.gz" "$T/b.pb.gz" | awk '$7 == "site_leak" {print $4, $6; exit}')
[ "$DIFF" = "$GO_DIFF grew" ] || fail "heapsift diff: site_leak from #$A to #$B: '$DIFF', want '$GO_DIFF grew'"
DIFF="$GO_DIFF grew"

cat >"$T/want.json" <<EOF
{"a": $A, "b": $B, "top": {"name": "$TOP_NAME", "flat": "$TOP_FLAT"},
 "leak": "site_leak", "leak_cum": "$LEAK_CUM", "diff_cum": "${DIFF% *}",
 "flat": "site_flat", "min_profiles": 5}
EOF
node "$SRC/tests/web/web_live.mjs" "$URL" "$T/want.json" "$BUILD/web_live" ||
    fail "browser checks (screenshots: $BUILD/web_live-*.png)"

# The process goes away: an error for the target, the profiles stay.
kill "$PROG" || fail "leakseries had ended before the test killed it"
wait "$PROG" 2>/dev/null
i=0
while [ $i -lt 30 ]; do
    web_api targets >"$T/t.json"
    err=$(web_json "$T/t.json" 'j.targets[0].error || ""')
    [ -n "$err" ] && break
    sleep 0.5
    i=$((i + 1))
done
case "$err" in
*onnect*) ;;
*) fail "no connection error after the process exited: '$err'" ;;
esac
kept=$(web_json "$T/t.json" 'j.targets[0].profiles')
[ "$kept" -ge 5 ] || fail "profiles lost after the process exited: $kept"
grep -q "127.0.0.1:$PORT" "$T/web.err" || fail "the target's error was not logged"

web_stop
echo "web_live: $FAILS failures"
[ "$FAILS" -eq 0 ]

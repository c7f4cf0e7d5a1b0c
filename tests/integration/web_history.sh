#!/bin/sh
# The web UI's History tab and the Series' interval band, in headless Chromium
# (tests/web/web_history.mjs). Two directory targets of six dumps of tests/programs/sitehist
# (sites whose live bytes grow, fall or stay at known rates, one of them reached from two
# callers): target 0 recorded at rate 1 (every figure exact), target 1 sampled (rate 8192,
# a fixed seed). The page's points must be `heapsift top --ci --unit B`'s flat and 95%
# interval of each dump for each site, the exact run's also the program's own arithmetic,
# and every sampled interval must hold the exact value; a click on a site shows its stacks
# (from_left's 3/4 and from_right's 1/4 of site_rise), a reload of the URL the same view;
# the Series band holds each live heap point. Screenshots in BUILD/web_history-*.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_history.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_history
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/sitehist"

mkdir -p "$T/exact" "$T/sampled"
HEAPSIFT_RATE=1 LD_PRELOAD=$LIB "$BUILD/programs/sitehist" 6 "$T/exact" ||
    fail "sitehist at rate 1 did not run"
HEAPSIFT_RATE=8192 HEAPSIFT_SEED=7 LD_PRELOAD=$LIB "$BUILD/programs/sitehist" 6 "$T/sampled" ||
    fail "sitehist at rate 8192 did not run"
[ "$(ls "$T/exact" | wc -l)" -eq 6 ] && [ "$(ls "$T/sampled" | wc -l)" -eq 6 ] ||
    fail "sitehist did not write six dumps each"
web_start "$T/web" --interval 1 "$T/exact" "$T/sampled"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 6 0.5)" -ge 6 ] || fail "the six profiles of target 0 were not loaded"
i=0
while [ $i -lt 60 ]; do
    web_api "profiles?target=1" >"$T/p1.json"
    [ "$(web_json "$T/p1.json" 'j.profiles.length')" -ge 6 ] && break
    sleep 0.5
    i=$((i + 1))
done
# The API alone: n bounds the sites, an unknown target is 404.
web_api "history?target=0&n=2" >"$T/h2.json"
[ "$(web_json "$T/h2.json" 'j.sites.length')" = 2 ] || fail "/api/history?n=2 did not give two sites"
[ "$(curl -s -o /dev/null -w '%{http_code}' "${URL}api/history?target=9")" = 404 ] ||
    fail "/api/history of an unknown target is not 404"
# Every refinement is part of the cache's key: after the plain history of target 0, its
# history with show=^main$ has one site, main, holding B's whole total, as heapsift top
# --show says (a key without show served the plain entries).
B=$(ls "$T/exact"/* | tail -n 1)
want=$("$CLI" top --show '^main$' --unit B "$B" | awk '$NF == "main" { sub(/B$/, "", $1); print $1 }')
web_api "history?target=0&show=%5Emain%24" >"$T/hs.json"
got=$(web_json "$T/hs.json" 'j.sites.map((s) => s.name + "=" + s.points[s.points.length - 1].v).join(",")')
[ -n "$want" ] && [ "$got" = "main=$want" ] ||
    fail "/api/history with show=^main\$: '$got', want main=$want (heapsift top --show)"
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_history.mjs" "$URL" "$CLI" \
    "$T/exact" "$T/sampled" "$BUILD/web_history" ||
    fail "browser checks (screenshots: $BUILD/web_history-*.png)"
web_stop
echo "web_history: $FAILS failures"
[ "$FAILS" -eq 0 ]

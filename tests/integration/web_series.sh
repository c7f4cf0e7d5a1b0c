#!/bin/sh
# The web UI's Series chart in headless Chromium (tests/web/web_series.mjs): its value axis
# has ticks at round values of the page's unit, and the points sit where the axis says.
# Over a directory of three profiles of tests/programs/grow (4000, 8000 and 12000 objects
# of 4096 bytes at site_grow; rate 4096, fixed seeds), whose live heaps (`go tool pprof
# -raw`'s inuse_space totals, summed here) and RSS (`heapsift stats`) are known. Clicking
# each point makes it profile B: the Top summary's total is then `heapsift top --unit
# UNIT`'s total of that file. Screenshots in BUILD/web_series-*.png. Skips (77) only when
# node or chromium cannot be installed, and never under CI.
# Usage: web_series.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_series
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/grow"

mkdir -p "$T/dumps"
i=0
for n in 4000 8000 12000; do
    i=$((i + 1))
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$i HEAPSIFT_OUT=$T/dumps/p$i.pb.gz LD_PRELOAD=$LIB \
        "$BUILD/programs/grow" $n >/dev/null || fail "grow $n did not run"
    touch -d "-$((40 - 10 * i)) seconds" "$T/dumps/p$i.pb.gz"
done
web_start "$T/web" --interval 1 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 3 0.5)" -ge 3 ] || fail "the three profiles were not loaded"
U=$(web_json "$T/p.json" '(() => { let m = Math.max(...j.profiles.flatMap((p) => [p.inuse || 0, p.rss || 0]));
    const u = ["B", "kB", "MB", "GB", "TB", "PB"]; let i = 0;
    while (m >= 1024 && i < 5) { m /= 1024; i++; } return u[i]; })()')
# Per profile (oldest first): id, live heap in bytes (go tool pprof -raw's inuse_space
# values summed, the total of `heapsift top`), and heapsift top --unit U's total.
pts=""
for i in 1 2 3; do
    id=$(web_json "$T/p.json" "j.profiles[$((i - 1))].id")
    heap=$(go tool pprof -raw -sample_index=inuse_space "$T/dumps/p$i.pb.gz" 2>/dev/null |
        awk '/^Samples:/ { s = 1; next } /^Locations/ { s = 0 } s && $1 ~ /^[0-9]+$/ { t += $4 + 0 } END { printf "%d", t }')
    [ "${heap:-0}" -gt 0 ] || fail "go tool pprof -raw gave no inuse_space for p$i"
    total=$("$CLI" top --unit "$U" "$T/dumps/p$i.pb.gz" | sed -n 's/.*Total samples = \([^ ]*\).*/\1/p')
    pts="$pts${pts:+,}{\"id\": $id, \"heap\": $heap, \"total\": \"$total\"}"
done
echo "{ \"unit\": \"$U\", \"points\": [$pts] }" >"$T/want.json"
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_series.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_series" || fail "browser checks (screenshots: $BUILD/web_series-*.png)"
web_stop
echo "web_series: $FAILS failures"
[ "$FAILS" -eq 0 ]

#!/bin/sh
# One unit per page in the web UI (tests/web/web_units.mjs in headless Chromium). The
# profile is tests/programs/grow 100 at rate 4096: site_steady holds about 16 MB,
# site_small 6 MB, site_grow 400 kB, over 1% of the total, so `heapsift top`'s own
# choice (pprof's: the unit of the smallest row) is kB ("16060.23kB") while the live heap
# and RSS read in MB. The page picks one unit from the largest live heap or RSS of the
# target's profiles (here MB, checked from the API) and every byte figure must use it:
# the Top table (equal to `heapsift top --unit MB`), the flame graph's tooltip (hovered),
# the call graph's boxes (`heapsift graph --unit MB`), the Source tab (`heapsift list
# --unit MB`) and the Series' points and note. Screenshots in BUILD/web_units-*.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_units.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_units
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/grow"

mkdir -p "$T/dumps"
P=$T/dumps/k.pb.gz
HEAPSIFT_RATE=4096 HEAPSIFT_SEED=2 HEAPSIFT_OUT=$P LD_PRELOAD=$LIB "$BUILD/programs/grow" 100 \
    >/dev/null || fail "grow 100 did not run"
# The case this is about: heapsift top's own unit is not the page's.
"$CLI" top "$P" >"$T/top_auto.txt" || fail "heapsift top"
grep -q '^ *[0-9.]*kB .* site_steady$' "$T/top_auto.txt" ||
    { fail "heapsift top does not say kB for site_steady: the profile misses the case"; show "$T/top_auto.txt"; }

web_start "$T/web" --interval 1 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 1 0.5)" -ge 1 ] || fail "the profile was not loaded"
# The unit of the largest live heap or RSS the page knows.
U=$(web_json "$T/p.json" '(() => { let m = Math.max(...j.profiles.flatMap((p) => [p.inuse || 0, p.rss || 0]));
    const u = ["B", "kB", "MB", "GB", "TB", "PB"]; let i = 0;
    while (m >= 1024 && i < 5) { m /= 1024; i++; } return u[i]; })()')
[ "$U" = MB ] || fail "the largest figure of the profile is not in MB but $U"
"$CLI" top --unit "$U" "$P" >"$T/top.txt" || fail "heapsift top --unit $U"
"$CLI" graph --unit "$U" "$P" >"$T/g.dot" || fail "heapsift graph --unit $U"
"$CLI" list --unit "$U" '^site_steady$' "$P" >"$T/list.txt" || fail "heapsift list --unit $U"
# heapsift top's rows as JSON lines: [flat, flat%, sum%, cum, cum%, name].
sed -n '/^ *flat /,$p' "$T/top.txt" | sed 1d |
    awk '{ printf "%s[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]", (NR > 1 ? "," : ""), $1, $2, $3, $4, $5, $6 }' \
    >"$T/rows.json"
TOTAL=$(sed -n 's/.*Total samples = \([^ ]*\).*/\1/p' "$T/top.txt")
STEADY=$(sed -n 's/^N[0-9]* \[label="site_steady\\n\([^ ]*\) .*/\1/p' "$T/g.dot")
cat >"$T/want.json" <<JSON
{ "unit": "$U", "rows": [$(cat "$T/rows.json")], "total": "$TOTAL", "graph_steady": "$STEADY",
  "list": "$T/list.txt" }
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_units.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_units" || fail "browser checks (screenshots: $BUILD/web_units-*.png)"
web_stop
echo "web_units: $FAILS failures"
[ "$FAILS" -eq 0 ]

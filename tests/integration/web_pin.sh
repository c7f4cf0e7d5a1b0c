#!/bin/sh
# Pinning profile A in the web UI (tests/web/web_pin.mjs in headless Chromium) while the
# ring of 32 rolls on. A directory target starts with three dumps of
# tests/programs/grow: #1 and #3 of one run (grow 8000), #2 (A) of a smaller one (grow
# 4000), so A's total is its own. The page picks #2 as A and pins it (a click), then 40
# more dumps arrive in the directory in four batches (written under a temporary name and
# renamed, as heapsift writes its dumps) and are polled in: #1 and #3 leave the ring, A
# stays selected, listed and marked pinned, and the Diff's A total stays `heapsift top`'s
# for A's file; a reload from the URL (pin=1) keeps it all. Unpinned, A leaves with the
# next dump. The pins are capped: the ninth is refused with the server's message (409),
# and a URL saying pin=1 pins its A again. Screenshots in BUILD/web_pin-*.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_pin.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_pin
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/grow"

mkdir -p "$T/dumps"
web_grow "$T/big.pb.gz" 1 8000
web_grow "$T/dumps/d02.pb.gz" 2 4000
cp "$T/big.pb.gz" "$T/dumps/d01.pb.gz"
cp "$T/big.pb.gz" "$T/dumps/d03.pb.gz"
now=$(date +%s)
touch -d "@$((now - 300))" "$T/dumps/d01.pb.gz"
touch -d "@$((now - 299))" "$T/dumps/d02.pb.gz"
touch -d "@$((now - 298))" "$T/dumps/d03.pb.gz"

web_start "$T/web" --interval 0.5 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 3 0.5)" -ge 3 ] || fail "the three dumps were not loaded"
[ "$(web_json "$T/p.json" 'j.profiles.map((p) => p.label).join(",")')" = d01.pb.gz,d02.pb.gz,d03.pb.gz ] ||
    fail "the dumps are not #1 #2 #3 in time order"
U=$(web_json "$T/p.json" '(() => { let m = Math.max(...j.profiles.flatMap((p) => [p.inuse || 0, p.rss || 0]));
    const u = ["B", "kB", "MB", "GB", "TB", "PB"]; let i = 0;
    while (m >= 1024 && i < 5) { m /= 1024; i++; } return u[i]; })()')
"$CLI" top --unit "$U" "$T/dumps/d02.pb.gz" >"$T/a.txt" || fail "heapsift top A"
"$CLI" top --unit "$U" "$T/big.pb.gz" >"$T/big.txt" || fail "heapsift top big"
ATOTAL=$(sed -n 's/.*Total samples = \([^ ]*\).*/\1/p' "$T/a.txt")
BIG=$(sed -n 's/.*Total samples = \([^ ]*\).*/\1/p' "$T/big.txt")
[ -n "$ATOTAL" ] && [ "$ATOTAL" != "$BIG" ] || fail "A's total ($ATOTAL) is not its own ($BIG)"

cat >"$T/want.json" <<JSON
{ "dir": "$T/dumps", "big": "$T/big.pb.gz", "a_total": "$ATOTAL", "start": $((now - 290)) }
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_pin.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_pin" || fail "browser checks (screenshots: $BUILD/web_pin-*.png)"

# The API: GET is refused, an unknown id is 404, the list says pinned.
code=$(curl -s -o "$T/r.json" -w '%{http_code}' "${URL}api/pin?target=0&id=2")
[ "$code" = 405 ] || fail "GET /api/pin: HTTP $code, want 405"
code=$(curl -s -o "$T/r.json" -X POST -w '%{http_code}' "${URL}api/pin?target=0&id=999999")
[ "$code" = 404 ] || { fail "POST /api/pin of no profile: HTTP $code, want 404"; show "$T/r.json"; }
web_stop
echo "web_pin: $FAILS failures"
[ "$FAILS" -eq 0 ]

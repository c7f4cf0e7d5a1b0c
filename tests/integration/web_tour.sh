#!/bin/sh
# A tour of every tab of the `heapsift web` page in headless Chromium
# (tests/web/web_tour.mjs), with a screenshot of each saved as BUILD/web-screenshots/TAB.png
# for a reviewer to look at, and opening profiles from the browser. The profiles: 6 dumps
# of tests/programs/leakseries (site_leak grows at each step, site_flat and site_churn stay
# put) in a directory. The tabs are the page's nav buttons, whatever they are at run time;
# each must show real content named after the program (Top's rows equal `heapsift top`'s,
# site_leak in the flame graph, the call graph and the Source listing, its growth in the
# Diff and the Suspects, a point per profile in the Series) and come back the same after
# a reload from its URL; a Top row opens the flame graph on it, a graph box focuses.
# Uploads: tests/programs/tracked's profile chosen with the "Open profile…" file input,
# then its legacy-text conversion dropped on the page (a DataTransfer drop event), each a
# new target whose Top rows equal `heapsift top` of that file, and the first file again
# joins its target (a second profile); a text file that is no
# profile, dropped, is an error in the page and the server goes on; the dropped file's
# target closed with its Close button leaves the list and the API (404), and the file
# dropped again takes its place with the next profile id; over the API, a body over the
# limit is a 413. Skips (77) only when node or chromium cannot be installed, and
# never under CI.
# Usage: web_tour.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_tour
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/leakseries" "$BUILD/programs/tracked"

mkdir -p "$T/dumps" "$T/up"
HEAPSIFT_RATE=32768 HEAPSIFT_SEED=7 LD_PRELOAD=$LIB "$BUILD/programs/leakseries" 6 "$T/dumps" 0 \
    >/dev/null || fail "leakseries did not run"
NEWEST=$(ls "$T/dumps"/step.*.pb.gz | tail -n 1)
HEAPSIFT_RATE=1 HEAPSIFT_OUT=$T/up/tracked.pb.gz LD_PRELOAD=$LIB "$BUILD/programs/tracked" \
    >/dev/null || fail "tracked did not run"
"$CLI" convert --to legacy -o "$T/up/tracked.heap" "$T/up/tracked.pb.gz" || fail "convert --to legacy"
echo "this is not a heap profile" >"$T/up/notes.txt"

# rows FILE UNIT: heapsift top --unit UNIT's rows of FILE as JSON: [flat, flat%, sum%, cum,
# cum%, name] (a name may hold spaces: "take (inline)").
rows() {
    "$CLI" top --unit "$2" "$1" 2>/dev/null | sed -n '/^ *flat /,$p' | sed 1d |
        awk '{ n = $6; for (i = 7; i <= NF; i++) n = n " " $i
               printf "%s[\"%s\",\"%s\",\"%s\",\"%s\",\"%s\",\"%s\"]", (NR > 1 ? "," : ""), $1, $2, $3, $4, $5, n }'
}
# The page's unit is that of the target's largest live heap or RSS: every unit's rows.
units() {
    printf '{'
    for u in B kB MB GB; do printf '%s"%s": [%s]' "$([ $u = B ] || echo ,)" $u "$(rows "$1" $u)"; done
    printf '}'
}
"$CLI" top "$NEWEST" | grep -q ' site_leak$' || fail "heapsift top of the newest dump has no site_leak"
# The Peek tab's text for ^site_leak$ in each unit: heapsift peek's after its header.
for u in B kB MB GB; do
    "$CLI" peek --unit $u '^site_leak$' "$NEWEST" | sed -n '/^Showing nodes/,$p' >"$T/peek.$u.txt"
done
grep -q '| site_leak$' "$T/peek.MB.txt" || { fail "heapsift peek ^site_leak$ of the newest dump"; show "$T/peek.MB.txt"; }

web_start "$T/web" --interval 1 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 6 0.5)" -ge 6 ] || fail "the 6 dumps were not loaded"

# Over the API: too large a body is a 413 with a message, the server goes on.
truncate -s 300M "$T/big.pb.gz"
code=$(curl -sS -o "$T/big.json" -w '%{http_code}' -X POST -T "$T/big.pb.gz" \
    "${URL}api/upload?name=big.pb.gz")
[ "$code" = 413 ] && grep -q 'too large' "$T/big.json" ||
    { fail "a 300 MB upload: want 413 'too large', got $code"; show "$T/big.json"; }
rm -f "$T/big.pb.gz"
code=$(curl -sS -o /dev/null -w '%{http_code}' "${URL}api/targets")
[ "$code" = 200 ] || fail "after the 413 the server does not answer ($code)"

cat >"$T/want.json" <<JSON
{ "top": $(units "$NEWEST"), "profiles": 6, "peek": "$T/peek",
  "upload": { "file": "$T/up/tracked.pb.gz", "rows": $(units "$T/up/tracked.pb.gz") },
  "drop": { "file": "$T/up/tracked.heap", "rows": $(units "$T/up/tracked.heap") },
  "bad": "$T/up/notes.txt" }
JSON
mkdir -p "$BUILD/web-screenshots"
rm -f "$BUILD/web-screenshots"/*.png
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_tour.mjs" "$URL" "$T/want.json" \
    "$BUILD/web-screenshots" || fail "browser checks (screenshots: $BUILD/web-screenshots/)"
ls "$BUILD/web-screenshots"/top.png "$BUILD/web-screenshots"/flame.png >/dev/null ||
    fail "no screenshots in $BUILD/web-screenshots"
grep -q 'tracked.pb.gz: uploaded' "$T/web.err" || { fail "the upload is not logged"; show "$T/web.err"; }

# Over the API: 16 uploaded targets open at most (the page left 1, and one closed); the
# upload past them is a 409 that says to close one; once one is closed, the next takes
# its place, ids going on.
post() { curl -sS -o "$T/post.json" -w '%{http_code}' -X POST "$@"; }
listed() { curl -sS "${URL}api/targets" | grep -o '"index":' | wc -l; }
k=0
while [ $k -lt 20 ]; do
    k=$((k + 1))
    code=$(post -T "$T/up/tracked.pb.gz" "${URL}api/upload?name=t$k.pb.gz")
    [ "$code" = 200 ] || break
done
[ "$code" = 409 ] && grep -q 'close one' "$T/post.json" && [ "$(listed)" -eq 17 ] ||
    { fail "upload $k: want 409 'close one' with 16 uploaded targets listed, got $code and $(listed) targets"
      show "$T/post.json"; }
code=$(post "${URL}api/close?target=0")
[ "$code" = 400 ] || fail "closing the directory's target: want 400, got $code"
code=$(post "${URL}api/close?target=5")
[ "$code" = 200 ] && grep -q '"closed":true' "$T/post.json" || fail "closing target 5: $code"
code=$(curl -sS -o /dev/null -w '%{http_code}' "${URL}api/top?target=5")
[ "$code" = 404 ] || fail "a closed target's top: want 404, got $code"
code=$(post -T "$T/up/tracked.pb.gz" "${URL}api/upload?name=t$k.pb.gz")
[ "$code" = 200 ] && grep -q '"target":5,"id":2,' "$T/post.json" ||
    { fail "the upload after a close: want target 5, id 2, got $code"; show "$T/post.json"; }
[ "$(listed)" -eq 17 ] || fail "targets listed: $(listed), want 17 (the directory and 16 uploaded)"
web_stop
echo "web_tour: $FAILS failures"
[ "$FAILS" -eq 0 ]

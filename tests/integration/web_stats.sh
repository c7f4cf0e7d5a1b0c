#!/bin/sh
# The web UI's accounting (Series tab, "Accounting of profile B") is `heapsift stats`'
# table, in headless Chromium (tests/web/web_stats.mjs): over a directory of two profiles
# of tests/programs/grow (4000 and 12000 objects of 4096 bytes at site_grow; heapsift
# writes its accounting comments into each), the page's rows, rebuilt into the columns
# `heapsift stats` prints, must be the lines `heapsift stats FILE` prints for profile B;
# a shift-click on the other profile's point in the series does not change B, a click
# makes it B and the table follows, equal to `heapsift stats` of that file; a second
# target, a Go heap profile (no accounting), says so instead of a table. Screenshots in
# BUILD/web_stats-*.png. Skips (77) only when node or chromium cannot be installed, and
# never under CI.
# Usage: web_stats.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_stats
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/grow"

mkdir -p "$T/dumps"
web_grow "$T/dumps/a.pb.gz" 1 4000
web_grow "$T/dumps/b.pb.gz" 2 12000
touch -d '-20 seconds' "$T/dumps/a.pb.gz"
touch -d '-10 seconds' "$T/dumps/b.pb.gz"
for x in a b; do
    "$CLI" stats "$T/dumps/$x.pb.gz" >"$T/$x.stats" || fail "heapsift stats $x"
done
grep -q 'live heap (sampled estimate)' "$T/b.stats" || { fail "heapsift stats: no live heap row"; show "$T/b.stats"; }
cp "$SRC/tests/corpus/go_heap_debug1.txt" "$T/go.heap"
"$CLI" stats "$T/go.heap" >/dev/null 2>&1 && fail "heapsift stats reads accounting in a Go profile"

web_start "$T/web" --interval 1 "$T/dumps" "$T/go.heap"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 2 0.5)" -ge 2 ] || fail "the two profiles were not loaded"
A=$(web_json "$T/p.json" 'j.profiles[0].id')
B=$(web_json "$T/p.json" 'j.profiles[1].id')
cat >"$T/want.json" <<JSON
{ "a": $A, "b": $B, "a_stats": "$T/a.stats", "b_stats": "$T/b.stats" }
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_stats.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_stats" || fail "browser checks (screenshots: $BUILD/web_stats-*.png)"
web_stop
echo "web_stats: $FAILS failures"
[ "$FAILS" -eq 0 ]

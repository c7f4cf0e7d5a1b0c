#!/bin/sh
# The web UI's bottom-up (callers) tree, beside the top-down flame graph, in headless
# Chromium (tests/web/web_bottomup.mjs). The profile is tests/programs/tracked at rate 1
# (exact): its allocations are all made by one inline helper, take, and comp_shared is
# called from caller_a, caller_b, caller_c and comp_outer. Bottom-up, take is a first-level
# frame as wide as its flat (`heapsift top`), comp_shared one of its callers, and under it
# the four callers, each with the bytes `go tool pprof -peek '^comp_shared$'` gives it
# (all of comp_shared's bytes go to take). Clicked as a person would: the button, the
# frames (zoom), a reload from the URL, and back to top-down. Screenshots in
# BUILD/web_bottomup-*.png. Skips (77) only when node or chromium cannot be installed, and
# never under CI.
# Usage: web_bottomup.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_bottomup
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/tracked"

mkdir -p "$T/dumps"
P=$T/dumps/t.pb.gz
HEAPSIFT_RATE=1 HEAPSIFT_OUT=$P LD_PRELOAD=$LIB "$BUILD/programs/tracked" >/dev/null ||
    fail "tracked did not run"
web_start "$T/web" --interval 1 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 1 0.5)" -ge 1 ] || fail "the profile was not loaded"
U=$(web_json "$T/p.json" '(() => { let m = Math.max(...j.profiles.flatMap((p) => [p.inuse || 0, p.rss || 0]));
    const u = ["B", "kB", "MB", "GB", "TB", "PB"]; let i = 0;
    while (m >= 1024 && i < 5) { m /= 1024; i++; } return u[i]; })()')
TAKE=$("$CLI" top --unit "$U" "$P" | awk '/ take \(inline\)$/ { print $1 }')
[ -n "$TAKE" ] || fail "heapsift top has no row for take (inline)"
# comp_shared's callers and their bytes, from pprof -peek (the lines above its own).
go tool pprof -symbolize=none -peek '^comp_shared$' -unit "$U" -sample_index=inuse_space "$P" \
    2>/dev/null >"$T/peek.txt"
CALLERS=$(sed -n '/^---/,$p' "$T/peek.txt" | awk '/\| comp_shared$/ { exit } /\|   / { printf "%s%s=%s", n++ ? "," : "", $NF, $1 }')
[ "$(echo "$CALLERS" | tr ',' '\n' | wc -l)" -eq 4 ] ||
    { fail "pprof -peek: want 4 callers of comp_shared, got '$CALLERS'"; show "$T/peek.txt"; }
cat >"$T/want.json" <<JSON
{ "take": "$TAKE", "callers": "$CALLERS" }
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_bottomup.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_bottomup" || fail "browser checks (screenshots: $BUILD/web_bottomup-*.png)"
web_stop
echo "web_bottomup: $FAILS failures"
[ "$FAILS" -eq 0 ]

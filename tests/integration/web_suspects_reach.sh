#!/bin/sh
# web_suspects_reach: the web UI's Suspects tab on profiles with heapsift's reachable=yes|no
# labels (issue 28), in headless Chromium (tests/web/web_suspects.mjs). reachprog (the
# leak_reach program: known lost and kept sites) writes a leak check's profile and its exit
# profile at HEAPSIFT_RATE=1; `heapsift web` serves their directory, and the page must show
# what `heapsift suspects --json` says of the same two profiles: how many stacks hold
# unreachable objects, those first, the first one's unreachable bytes. Screenshot in
# BUILD/web_suspects_reach-suspects-reach.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# usage: web_suspects_reach.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_suspects_reach
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$LIB" "$CLI" "$BUILD/programs/reachprog"

mkdir -p "$T/d"
HEAPSIFT_LEAKS=1 HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/d/b.pb.gz" LD_PRELOAD="$LIB" "$BUILD/programs/reachprog" check \
    "$T/d/a.pb.gz" >"$T/run.out" 2>"$T/run.err" || { fail "reachprog check: status $?"; show "$T/run.err"; }
[ -s "$T/d/a.pb.gz" ] && [ -s "$T/d/b.pb.gz" ] || fail "reachprog wrote no profiles"
touch -d '-10 seconds' "$T/d/a.pb.gz"

# What the page must show, from the CLI over the same two profiles.
"$CLI" suspects --json "$T/d/a.pb.gz" "$T/d/b.pb.gz" >"$T/sus.json" 2>"$T/sus.err" ||
    { fail "heapsift suspects --json: status $?"; show "$T/sus.err"; }
node -e '
const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const lost = j.stacks.filter((s) => s.unreachable > 0);
const first = j.stacks[0];
console.log(JSON.stringify({ unreachable: lost.length, first_leaf: first.frames[0],
                             first_bytes: first.unreachable }));' "$T/sus.json" >"$T/want.json" ||
    { fail "reading heapsift suspects --json"; show "$T/sus.json"; }
grep -q '"unreachable":[1-9]' "$T/want.json" || { fail "no unreachable stack in the CLI's view"; show "$T/want.json"; }

web_start "$T/web" "$T/d"
if [ -n "$URL" ]; then
    NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_suspects.mjs" "$URL" \
        "$T/want.json" "$BUILD/web_suspects_reach" >"$T/node.out" 2>&1 ||
        { fail "the Suspects tab in Chromium"; show "$T/node.out" 30; }
    web_stop
fi
[ "$FAILS" -eq 0 ] && echo "web_suspects_reach: ok ($(tail -n 1 "$T/node.out"))"
exit $((FAILS > 0))

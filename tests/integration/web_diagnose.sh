#!/bin/sh
# The web UI's Diagnosis tab (src/cli/web/diagnose.js over /api/diagnose), in headless
# Chromium with real clicks (tests/web/web_diagnose.mjs): two targets, one profile of
# tests/programs/diag_prog frag (glibc's 150 MB of free chunks, a fragmentation finding,
# just above its top site's: two findings whose order a wrong sort swaps) and a
# directory of leakseries' 10 dumps (a growth finding at site_leak over the series). Checks:
# /api/diagnose answers the findings `heapsift diagnose --json` prints for the same file and
# the same directory (the whole series, oldest first); the page opens on the Diagnosis tab,
# the first tab, whose cards (kind, exact bytes, site, in order, largest first) are the
# CLI's; a click on Top shows Top and hides them, a click on Diagnosis shows them again;
# the series target's cards are the CLI's over the directory, a growth finding among them;
# answers routed by the browser test: no findings said plainly, markup shown as text.
# Screenshots in BUILD/web_diagnose-*.png. Skips (77) only when node or chromium cannot be
# installed, and never under CI.
# Usage: web_diagnose.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_diagnose
. "$SRC/tests/web/lib.sh"
web_need_browser
P=$BUILD/programs
hs_need_built "$CLI" "$LIB" "$P/diag_prog" "$P/leakseries"

HEAPSIFT_RATE=64K HEAPSIFT_OUT="$T/frag.pb.gz" LD_PRELOAD="$LIB" "$P/diag_prog" frag >/dev/null ||
    fail "diag_prog frag: status $?"
mkdir "$T/grow"
HEAPSIFT_RATE=65536 HEAPSIFT_SEED=1 HEAPSIFT_OUT="$T/grow-exit.pb.gz" LD_PRELOAD="$LIB" \
    "$P/leakseries" 10 "$T/grow" >/dev/null || fail "leakseries: status $?"
NDUMPS=$(ls "$T/grow" | wc -l)
"$CLI" diagnose --json "$T/frag.pb.gz" >"$T/frag.json" || fail "heapsift diagnose --json frag"
"$CLI" diagnose --json "$T/grow" >"$T/grow.json" || fail "heapsift diagnose --json grow"

web_start "$T/web" --interval 1 "$T/frag.pb.gz" "$T/grow"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 1 0.5)" -ge 1 ] || fail "the frag profile was not loaded"
i=0
while [ $i -lt 60 ]; do
    web_api "profiles?target=1" >"$T/p1.json"
    [ "$(web_json "$T/p1.json" 'j.profiles.length')" -ge "$NDUMPS" ] && break
    sleep 0.5
    i=$((i + 1))
done
[ "$(web_json "$T/p1.json" 'j.profiles.length')" -eq "$NDUMPS" ] || fail "the $NDUMPS dumps were not loaded"

# The API: the CLI's findings and notes, for the one file and for the series.
for x in frag:0 grow:1; do
    name=${x%:*}
    web_api "diagnose?target=${x#*:}" >"$T/api-$name.json"
    node -e 'const fs = require("fs");
             const [a, b] = process.argv.slice(1).map((f) => JSON.parse(fs.readFileSync(f, "utf8")));
             const s = (j) => JSON.stringify([j.rss_bytes, j.allocator, j.findings, j.notes]);
             if (s(a) !== s(b)) { console.log(s(a) + "\nwant\n" + s(b)); process.exit(1); }' \
        "$T/api-$name.json" "$T/$name.json" || fail "/api/diagnose of $name is not heapsift diagnose --json's"
done
web_json "$T/grow.json" 'j.findings.some((f) => f.kind === "growth" && /site_leak/.test(f.site))' |
    grep -q true || fail "heapsift diagnose over the series: no growth finding at site_leak"
[ "$(web_json "$T/frag.json" 'j.findings.length')" -ge 2 ] || fail "frag: fewer than 2 findings"

cat >"$T/want.json" <<JSON
{ "one": "$T/frag.json", "series": "$T/grow.json", "dumps": $NDUMPS }
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_diagnose.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_diagnose" || fail "browser checks (screenshots: $BUILD/web_diagnose-*.png)"
web_stop
echo "web_diagnose: $FAILS failures"
[ "$FAILS" -eq 0 ]

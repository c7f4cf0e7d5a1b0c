#!/bin/sh
# The flame graph's script in a real browser (headless Debian Chromium driven by
# playwright-core: tests/web/flamegraph_browser.mjs), on three pages:
#   - the SVG `heapsift flamegraph` writes for tests/programs/sites at HEAPSIFT_RATE=1,
#     whose live bytes per site `sites --expect` states exactly;
#   - the endpoint's /debug/pprof/heap?display=flamegraph (HTML page) and
#     ?display=flamegraph_svg (the SVG alone; ?display=svg is the call graph now) of
#     tests/programs/http_app after "old 30" and "window 10" (64 KiB blocks at rate 1).
# On each: hovering a site shows its name, bytes and share (checked against the truth);
# clicking a non-root frame makes it full width, hides everything outside its subtree
# except its ancestors (full width, dimmed) and scales its subtree (a click that zoomed
# the root would leave it narrow and its siblings shown); Reset zoom, a click on the root
# and Escape restore the first layout; Search (button, answered through the prompt) and
# "/" highlight exactly the matching frames and report the share of the known truth, a
# match inside a match not counted twice. No page error, no request off the page's origin.
# Screenshots in BUILD/flamegraph_browser-*.png. Never skips: missing node, chromium or
# libmicrohttpd is a failure with its reason (sh scripts/setup.sh installs them).
# Usage: flamegraph_browser.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" flamegraph_browser
. "$SRC/tests/web/lib.sh"
. "$SRC/tests/lib/http.sh"
web_need_browser strict
hs_need_built "$CLI" "$LIB" "$BUILD/programs/sites" "$BUILD/programs/http_app"
ldconfig -p 2>/dev/null | grep -q libmicrohttpd.so.12 ||
    { echo "FAIL: libmicrohttpd12 is not installed (sh scripts/setup.sh installs it)" >&2; exit 1; }

# --- the CLI's SVG of sites, exact (rate 1) ------------------------------------------------
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/sites.pb.gz" LD_PRELOAD=$LIB "$BUILD/programs/sites" >/dev/null ||
    fail "sites did not run"
"$CLI" flamegraph -o "$T/sites.svg" "$T/sites.pb.gz" || fail "heapsift flamegraph failed"
"$BUILD/programs/sites" --expect >"$T/expect"
live() { awk -v s="$1" '$1 == s && $2 == "flat" { print $6 }' "$T/expect"; }
# The live heap: every flat site (site_transient frees all it allocates).
SITES_TOTAL=$(awk '$2 == "flat" { s += $6 } END { print s }' "$T/expect")
# run_all holds every site of the main thread: all but site_thread.
RUN_ALL=$((SITES_TOTAL - $(live site_thread)))

# --- the endpoint's pages of http_app ------------------------------------------------------
app_start || exit 1
app old 30 >/dev/null || fail "http_app: old 30"
app window 10 >/dev/null || fail "http_app: window 10"
BLOCK=65536

cat >"$T/want.json" <<EOF
[
  {"label": "cli", "url": "file://$T/sites.svg", "total": $SITES_TOTAL,
   "hover": {"name": "site_malloc", "bytes": $(live site_malloc)},
   "clicks": [{"name": "site_malloc", "hidden": ["site_calloc", "site_small", "thread_entry"]},
              {"name": "_start", "hidden": ["clone3", "thread_entry", "site_thread"]}],
   "search": {"re": "^site_(malloc|calloc)\$", "bytes": $(($(live site_malloc) + $(live site_calloc)))},
   "key_search": {"re": "^(run_all|site_malloc)\$", "bytes": $RUN_ALL}},
  {"label": "http-flamegraph", "url": "$URL/debug/pprof/heap?display=flamegraph",
   "total": $((40 * BLOCK)),
   "hover": {"name": "site_old", "bytes": $((30 * BLOCK))},
   "clicks": [{"name": "site_old", "hidden": ["site_window"]}],
   "search": {"re": "^site_(old|window)\$", "bytes": $((40 * BLOCK))},
   "key_search": {"re": "^site_window\$", "bytes": $((10 * BLOCK))}},
  {"label": "http-svg", "url": "$URL/debug/pprof/heap?display=flamegraph_svg", "total": $((40 * BLOCK)),
   "hover": {"name": "site_window", "bytes": $((10 * BLOCK))},
   "clicks": [{"name": "site_window", "hidden": ["site_old"]}],
   "search": {"re": "^site_old\$", "bytes": $((30 * BLOCK))},
   "key_search": {"re": "^site_(old|window)\$", "bytes": $((40 * BLOCK))}}
]
EOF
node "$SRC/tests/web/flamegraph_browser.mjs" "$T/want.json" "$BUILD/flamegraph_browser" ||
    fail "browser checks (screenshots: $BUILD/flamegraph_browser-*.png)"
app_stop
echo "flamegraph_browser: $FAILS failures"
[ "$FAILS" -eq 0 ]

#!/bin/sh
# The web UI's Graph and Source tabs in headless Chromium (tests/web/web_graph.mjs), over a
# directory of two profiles of tests/programs/grow (A: 4000 objects at site_grow, B:
# 12000; rate 4096, fixed seeds). What the page must show comes from the command line:
# `heapsift graph` (the boxes, site_grow's value, the boxes left when focused on
# site_grow, the verdict classes against A; graph_vs_pprof.sh holds that to go tool pprof
# -dot) and `heapsift list` (the Source tab's text; list_vs_pprof.sh holds that to pprof
# -list). The page is used with real clicks, wheel and drags: open the Graph tab from the
# URL, zoom, pan, fit, click site_grow's box to focus on it, open its source, clear the
# focus, granularity lines, colour by change since A, reload, open a URL naming a focus
# (the page's state lives in the URL's fragment). Screenshots in BUILD/web_graph-*.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_graph.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_graph
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_built "$CLI" "$LIB" "$BUILD/programs/grow"

mkdir -p "$T/dumps"
web_grow "$T/dumps/a.pb.gz" 1 4000
web_grow "$T/dumps/b.pb.gz" 2 12000
touch -d '-20 seconds' "$T/dumps/a.pb.gz"
touch -d '-10 seconds' "$T/dumps/b.pb.gz"
B=$T/dumps/b.pb.gz

names() { sed -n 's/^N[0-9]* \[.* tooltip="\(.*\) ([^)]*)".*/\1/p' "$1" | sort | tr '\n' ',' | sed 's/,$//'; }
class() { sed -n "s/^N[0-9]* \\[.* tooltip=\"$2 (.*class=\"\\([a-z]*\\)\".*/\\1/p" "$1"; }
"$CLI" graph "$B" >"$T/b.dot" || fail "heapsift graph B"
"$CLI" graph --focus '^site_grow$' "$B" >"$T/f.dot" || fail "heapsift graph --focus"
"$CLI" graph --granularity lines "$B" >"$T/l.dot" || fail "heapsift graph --granularity lines"
"$CLI" graph --base "$T/dumps/a.pb.gz" "$B" >"$T/d.dot" || fail "heapsift graph --base"
"$CLI" list --focus '^site_grow$' '^site_grow$' "$B" >"$T/list.txt" || fail "heapsift list"
GROW=$(sed -n 's/^N[0-9]* \[.* tooltip="site_grow (\([^)]*\))".*/\1/p' "$T/b.dot")
[ -n "$GROW" ] || { fail "no site_grow node in heapsift graph's DOT"; show "$T/b.dot"; }
[ "$(class "$T/d.dot" site_grow)" = grew ] || fail "heapsift graph --base: site_grow not grew"

web_start "$T/web" --interval 1 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
cat >"$T/want.json" <<JSON
{
  "nodes": "$(names "$T/b.dot")", "grow": "site_grow ($GROW)",
  "focused": "$(names "$T/f.dot")", "lines": "$(names "$T/l.dot")",
  "classes": {"site_grow": "$(class "$T/d.dot" site_grow)",
              "site_steady": "$(class "$T/d.dot" site_steady)"},
  "list": "$T/list.txt"
}
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_graph.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_graph" || fail "browser checks (screenshots: $BUILD/web_graph-*.png)"
web_stop
echo "web_graph: $FAILS failures"
[ "$FAILS" -eq 0 ]

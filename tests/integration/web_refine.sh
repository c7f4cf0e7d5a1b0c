#!/bin/sh
# The web UI's refinements as chips (tests/web/web_refine.mjs in headless Chromium), over
# a directory of two profiles of tests/programs/labeled (its threads allocate through
# work -> site_alloc under the labels tenant=acme, tenant=globex, region=eu; rate 4096,
# fixed seeds). What the page must show comes from the command line: `heapsift top --unit
# U` (U the page's unit) of profile B with each set of refinements the page is given
# (--ignore, --hide, --show, --focus, --tagfocus), held to `go tool pprof -top` for
# -ignore, -show and -tagfocus; `heapsift graph` and `heapsift diff` with the same options
# for the Graph and Diff tabs. The page is used with real clicks: kind, text and Add, a
# right-click on a Top row and its menu, a chip's x, a bad regular expression refused,
# reload, an old URL's focus=. Screenshots in BUILD/web_refine-*.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_refine.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_refine
. "$SRC/tests/web/lib.sh"
web_need_browser
hs_need_go
hs_need_built "$CLI" "$LIB" "$BUILD/programs/labeled"

mkdir -p "$T/dumps"
prof() { # OUT SEED
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$2 HEAPSIFT_OUT=$1 LD_PRELOAD=$LIB \
        "$BUILD/programs/labeled" >/dev/null || fail "labeled did not run"
}
prof "$T/dumps/a.pb.gz" 3
prof "$T/dumps/b.pb.gz" 4
touch -d '-20 seconds' "$T/dumps/a.pb.gz"
touch -d '-10 seconds' "$T/dumps/b.pb.gz"
A=$T/dumps/a.pb.gz
B=$T/dumps/b.pb.gz

web_start "$T/web" --interval 1 "$T/dumps"
[ -n "$URL" ] || { cat "$T/web.err" >&2; exit 1; }
[ "$(web_wait_profiles 2 0.5)" -ge 2 ] || fail "the two profiles were not loaded"
U=$(web_json "$T/p.json" '(() => { let m = Math.max(...j.profiles.flatMap((p) => [p.inuse || 0, p.rss || 0]));
    const u = ["B", "kB", "MB", "GB", "TB", "PB"]; let i = 0;
    while (m >= 1024 && i < 5) { m /= 1024; i++; } return u[i]; })()')

# rows FILE: the table rows of a top (or diff) text as a JSON array of their cells.
rows() {
    sed -n '/^ *flat  *flat%/,$p' "$1" | sed 1d |
        awk '{ printf "%s[", (NR > 1 ? "," : ""); for (i = 1; i <= NF; i++) printf "%s\"%s\"", (i > 1 ? "," : ""), $i; printf "]" }'
}
# top NAME OPTIONS...: heapsift top --unit U OPTIONS B, as rows, into $T/NAME.json.
top() {
    n=$1
    shift
    "$CLI" top --unit "$U" "$@" "$B" >"$T/$n.txt" || fail "heapsift top $*"
    echo "[$(rows "$T/$n.txt")]" >"$T/$n.json"
}
# pprof NAME OPTIONS...: the same from go tool pprof -top, which must agree.
pprof() {
    n=$1
    shift
    go tool pprof -top -unit="$U" "$@" "$B" >"$T/$n.go.txt" 2>"$T/$n.go.err" || fail "go tool pprof -top $*"
    echo "[$(rows "$T/$n.go.txt")]" >"$T/$n.go.json"
    cmp -s "$T/$n.json" "$T/$n.go.json" ||
        { fail "heapsift top and go tool pprof -top $* differ"; show "$T/$n.txt"; show "$T/$n.go.txt"; }
}
top base
top ignore --ignore '^mixed$'
pprof ignore -ignore='^mixed$'
top ignore_hide --ignore '^mixed$' --hide '^site_alloc$'
top hide --hide '^site_alloc$'
top show --show 'site_alloc|main'
pprof show -show='site_alloc|main'
top focus --focus '^tenant_main$'
top focus_tag --focus '^tenant_main$' --tagfocus tenant=acme
pprof focus_tag -focus='^tenant_main$' -tagfocus=tenant=acme
top tag --tagfocus tenant=acme
# The refinements must change the rows, else the test proves nothing.
for n in ignore ignore_hide hide show focus focus_tag; do
    cmp -s "$T/base.json" "$T/$n.json" && fail "heapsift top: $n gives the unrefined rows"
done
names() { sed -n 's/^N[0-9]* \[.* tooltip="\(.*\) ([^)]*)".*/\1/p' "$1" | sort | tr '\n' ',' | sed 's/,$//'; }
"$CLI" graph --unit "$U" --focus '^tenant_main$' --tagfocus tenant=acme "$B" >"$T/g.dot" || fail "heapsift graph"
"$CLI" diff --unit "$U" --focus '^tenant_main$' --tagfocus tenant=acme "$A" "$B" >"$T/diff.txt" ||
    fail "heapsift diff"

cat >"$T/want.json" <<JSON
{ "unit": "$U", "graph": "$(names "$T/g.dot")", "diff": [$(rows "$T/diff.txt")],
  "rows": { $(for n in base ignore ignore_hide hide show focus focus_tag tag; do
                printf '"%s": %s, ' "$n" "$(cat "$T/$n.json")"; done) "end": [] } }
JSON
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_refine.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_refine" || fail "browser checks (screenshots: $BUILD/web_refine-*.png)"
# The API's 400 for a bad refinement names it.
code=$(curl -s -o "$T/bad.json" -w '%{http_code}' "${URL}api/top?target=0&id=2&show=(")
[ "$code" = 400 ] && grep -q '"show: bad regular expression' "$T/bad.json" ||
    { fail "bad show regex: HTTP $code, want 400 naming show"; show "$T/bad.json"; }
code=$(curl -s -o "$T/bad.json" -w '%{http_code}' "${URL}api/flame?target=0&id=2&tagfocus=tenant=(")
[ "$code" = 400 ] && grep -q 'tagfocus' "$T/bad.json" ||
    { fail "bad tagfocus: HTTP $code, want 400 naming tagfocus"; show "$T/bad.json"; }
web_stop
echo "web_refine: $FAILS failures"
[ "$FAILS" -eq 0 ]

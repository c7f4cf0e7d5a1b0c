#!/bin/sh
# `heapsift web` over a Go process: tests/web/goserve serves Go's own net/http/pprof
# (leakySite keeps 2000 blocks of 4 KiB live). The target must be polled like a heapsift
# endpoint: profiles kept with Go's sample types, RSS "not available" (a Go process has no
# /debug/heapsift/stats, and that is no error), and the top rows the API gives equal to
# what `go tool pprof -top` and `heapsift top` print for the same stored profile
# (downloaded from /api/raw). API only: the page itself is web_ui.sh's and web_live.sh's.
# Usage: web_go.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_go
. "$SRC/tests/web/lib.sh"
command -v go >/dev/null || { echo "skip: go is not installed"; exit 77; }
command -v node >/dev/null || web_need_browser # node reads the JSON

(cd "$T" && go build -o "$T/goserve" "$SRC/tests/web/goserve/main.go") || { fail "go build"; exit 1; }
"$T/goserve" "$T/port" 2>"$T/go.err" &
GO=$!
web_kill_at_exit $GO
PORT=$(web_wait_port "$T/port" '^([0-9]+)$') || { fail "goserve did not start"; show "$T/go.err"; exit 1; }

web_start "$T/web" --interval 1 "http://127.0.0.1:$PORT"
[ -n "$URL" ] || { show "$T/web.err"; exit 1; }
n=$(web_wait_profiles 2 0.5)
web_api targets >"$T/t.json"
[ "$(web_json "$T/t.json" 'j.targets[0].error')" = null ] || { fail "Go target has an error"; show "$T/t.json"; }
[ "$n" -ge 2 ] || fail "no 2 profiles from the Go endpoint"
types=$(web_json "$T/p.json" 'j.profiles[0].sample_types.join(",")')
[ "$types" = "alloc_objects,alloc_space,inuse_objects,inuse_space" ] || fail "sample types: $types"
[ "$(web_json "$T/p.json" 'j.profiles[0].rss')" = null ] || fail "RSS should be unknown for Go"

id=$(web_json "$T/p.json" 'j.profiles[1].id')
curl -sS -o "$T/go.pb.gz" "${URL}api/raw?target=0&id=$id"
web_api "top?target=0&id=$id" >"$T/top.json"
web_json "$T/top.json" 'j.rows.map(r => [r.flat_label, r.flat_pct, r.sum_pct, r.cum_label, r.cum_pct, r.name].join(" ")).join("\n")' >"$T/api.txt"
rows() { sed -n '/^ *flat /,$p' | tail -n +2 | sed 's/^ *//; s/  */ /g; s/ (inline)$//'; }
go tool pprof -symbolize=none -top -sample_index=inuse_space "$T/go.pb.gz" 2>/dev/null | rows >"$T/go.txt"
"$CLI" top "$T/go.pb.gz" | rows >"$T/hs.txt"
cmp -s "$T/api.txt" "$T/go.txt" || { fail "API top differs from go tool pprof -top"; diff "$T/api.txt" "$T/go.txt" | head >&2; }
cmp -s "$T/api.txt" "$T/hs.txt" || fail "API top differs from heapsift top"
grep -q ' main.leakySite$' "$T/api.txt" || { fail "main.leakySite missing"; show "$T/api.txt"; }
echo "API top of the Go profile, as go tool pprof prints it:"
sed 's/^/    /' "$T/api.txt"

web_stop
echo "web_go: $FAILS failures"
[ "$FAILS" -eq 0 ]

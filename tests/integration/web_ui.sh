#!/bin/sh
# `heapsift web` end to end. Profiles of tests/programs/grow with known sites (A: 4000
# objects of 4096 bytes at site_grow, B: 6000) in a directory; the figures the page must
# show come from `go tool pprof` (an independent reader: -top for the top row and totals,
# -diff_base for the diff and the suspects' growth) and from the program's truth (the
# verdicts: site_grow grew by 2000 x 4096 bytes, site_steady did not change; go's diff
# figures must lie within 4 sigma of that truth at rate 4096), and `heapsift top`/`diff`/
# `suspects` must agree with them. Checks:
#   - the command line: bad --listen (exit 1), port in use (exit 3), missing TARGET (2);
#   - the JSON API: a directory, a file and an http:// target (a loopback static server
#     serving a profile at debug/pprof/heap) give the same figures; unknown ids are 404;
#   - the page in headless Chromium (Debian's, driven by playwright-core from npm:
#     tests/web/web_ui.mjs): Top, choosing A and B, Diff, flame graphs, Series, Suspects,
#     an unreachable target's error, a new dump picked up; screenshots in BUILD/web_ui-*.png.
# Skips (77) only when node or chromium cannot be installed, and never under CI.
# Usage: web_ui.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_ui
. "$SRC/tests/web/lib.sh"
web_need_browser

# --- profiles with known sites -------------------------------------------------------
mkdir -p "$T/dumps" "$T/srv/debug/pprof"
web_grow "$T/dumps/a.pb.gz" 1 4000
web_grow "$T/dumps/b.pb.gz" 2 6000
web_grow "$T/c.pb.gz" 3 8000
touch -d '-20 seconds' "$T/dumps/a.pb.gz"
touch -d '-10 seconds' "$T/dumps/b.pb.gz"
cp "$T/dumps/b.pb.gz" "$T/srv/debug/pprof/heap"
# 40 dumps with increasing mtimes, for the ring of 32.
mkdir -p "$T/many"
now=$(date +%s)
for i in $(seq 10 49); do
    cp "$T/dumps/a.pb.gz" "$T/many/m$i.pb.gz"
    touch -d "@$((now - 100 + i))" "$T/many/m$i.pb.gz"
done

# --- the command line's errors --------------------------------------------------------
"$CLI" web --listen nonsense:port "$T/dumps" >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q -- '--listen' "$T/err" || { fail "bad --listen: want exit 1"; show "$T/err"; }
"$CLI" web --listen 127.0.0.1:0 "$T/nowhere" >/dev/null 2>"$T/err"
[ $? -eq 2 ] && grep -q 'nowhere' "$T/err" || { fail "missing TARGET: want exit 2"; show "$T/err"; }

# --- a static HTTP server standing in for a process's endpoint --------------------------
python3 -m http.server --bind 127.0.0.1 0 --directory "$T/srv" >"$T/srv.log" 2>&1 &
SRV=$!
web_kill_at_exit $SRV
SRVPORT=$(web_wait_port "$T/srv.log" 'port ([0-9]+)')
CLOSED=$(web_free_port)

web_start "$T/web" --interval 1 "$T/dumps" "$T/dumps/b.pb.gz" "http://127.0.0.1:$SRVPORT" \
    "http://127.0.0.1:$CLOSED" "$T/many"
[ -n "$URL" ] || { cat "$T/web.err" >&2; kill "$SRV"; exit 1; }

# The same port again is refused clearly.
PORT=${URL#http://127.0.0.1:}
PORT=${PORT%/}
"$CLI" web --listen "127.0.0.1:$PORT" "$T/dumps" >/dev/null 2>"$T/err"
[ $? -eq 3 ] && grep -q 'in use' "$T/err" || { fail "port in use: want exit 3"; show "$T/err"; }

# --- the API against the command line ---------------------------------------------------
want_top=$("$CLI" top "$T/dumps/b.pb.gz" | sed -n '/^ *flat /{n;p;q}')
go_top=$(go tool pprof -symbolize=none -top -sample_index=inuse_space "$T/dumps/b.pb.gz" 2>/dev/null |
    sed -n '/^ *flat /{n;p;q}')
[ "$want_top" = "$go_top" ] || fail "heapsift top and go tool pprof disagree: '$want_top' / '$go_top'"
set -- $want_top
TOP_FLAT=$1 TOP_PCT=$2 TOP_NAME=$6
[ "$TOP_NAME" = site_grow ] || fail "top site of B is $TOP_NAME, want site_grow"
# The diff, from go tool pprof -diff_base; its site_grow and site_steady figures against the
# truth (+8192000 and 0 bytes): sigma^2 = sum over both profiles of B s (w - 1), s = 4096 =
# the rate (w - 1 = 0.582), B the truth's live bytes of the site in each.
godiff() { go tool pprof -symbolize=none -top -sample_index=inuse_space $1 -diff_base "$T/dumps/a.pb.gz" \
    "$T/dumps/b.pb.gz" 2>/dev/null; }
go_diff=$(godiff "" | grep ' site_grow$')
set -- $go_diff
DIFF_FLAT=$1 DIFF_PCT=$2
godiff -unit=B >"$T/godiff"
awk '$NF == "site_grow" { g = $1 } $NF == "site_steady" { s = $1 }
    END { sub(/B$/, "", g); sub(/B$/, "", s); w1 = 1 / (1 - exp(-1)) - 1
          sg = sqrt((4000 + 6000) * 4096 * 4096 * w1); ss = sqrt(2 * 4000 * 4096 * 4096 * w1)
          d = g - 8192000; if (d < 0) d = -d; e = s + 0; if (e < 0) e = -e
          printf "go diff: site_grow %s (truth 8192000 +- %.0f), site_steady %s (truth 0 +- %.0f)\n", g, 4 * sg, s, 4 * ss
          exit !(g != "" && d <= 4 * sg && e <= 4 * ss) }' "$T/godiff" ||
    { fail "go tool pprof -diff_base: site_grow/site_steady not within 4 sigma of the truth"; show "$T/godiff"; }
# heapsift diff must say the same figure, and the truth's verdicts.
want_diff=$("$CLI" diff "$T/dumps/a.pb.gz" "$T/dumps/b.pb.gz" | grep ' site_grow$')
set -- $want_diff
[ "$1 $2" = "$DIFF_FLAT $DIFF_PCT" ] || fail "heapsift diff: site_grow '$1 $2', go tool pprof -diff_base '$DIFF_FLAT $DIFF_PCT'"
[ "$6" = grew ] || fail "heapsift diff does not judge site_grow grown: $want_diff"
STEADY=noise
got=$("$CLI" diff "$T/dumps/a.pb.gz" "$T/dumps/b.pb.gz" | awk '$7 == "site_steady" {print $6}')
[ "$got" = "$STEADY" ] || fail "heapsift diff judges site_steady (unchanged) '$got', want $STEADY"
total() { go tool pprof -symbolize=none -top -sample_index=inuse_space "$1" 2>/dev/null |
    sed -n 's/.*Total samples = \([^ ]*\).*/\1/p'; }
A_TOTAL=$(total "$T/dumps/a.pb.gz")
B_TOTAL=$(total "$T/dumps/b.pb.gz")
# Suspects: site_grow's growth is its diff (go's figure), its verdict the truth's.
SUS="+$DIFF_FLAT growing"
got=$("$CLI" suspects "$T/dumps/a.pb.gz" "$T/dumps/b.pb.gz" | awk '$8 == "site_grow" {print $2, $7; exit}')
[ "$got" = "$SUS" ] || fail "heapsift suspects: site_grow '$got', want '$SUS'"
inuse() { go tool pprof -symbolize=none -raw -sample_index=inuse_space "$1" 2>/dev/null |
    awk '/^Samples:/ {on = 1; next} on && /^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ {s += $4} /^Locations/ {on = 0} END {print s}'; }
rss() { go tool pprof -symbolize=none -raw "$1" 2>/dev/null | sed -n 's/^Comment: rss: rss=\([0-9]*\).*/\1/p'; }

for t in 0 1 2; do
    web_api "profiles?target=$t" >"$T/p$t.json"
done
web_json "$T/p0.json" 'j.profiles.map(p => p.label).join(",")' >"$T/labels"
[ "$(cat "$T/labels")" = "a.pb.gz,b.pb.gz" ] || fail "dir target: profiles $(cat "$T/labels"), want a.pb.gz,b.pb.gz (time order)"
for t in 1 2; do
    [ "$(web_json "$T/p$t.json" 'j.profiles.length')" -ge 1 ] || { fail "target $t: no profile"; show "$T/web.err"; }
done
IN_B=$(inuse "$T/dumps/b.pb.gz")
for t in 0 1 2; do
    got=$(web_json "$T/p$t.json" 'j.profiles[j.profiles.length - 1].inuse')
    [ "$got" = "$IN_B" ] || fail "target $t: live heap $got, want $IN_B (go tool pprof -raw)"
done
web_api "top?target=2&id=1" >"$T/top2.json"
got=$(web_json "$T/top2.json" 'j.rows[0].name + " " + j.rows[0].flat_label')
[ "$got" = "$TOP_NAME $TOP_FLAT" ] || fail "http target: top row '$got', want '$TOP_NAME $TOP_FLAT'"
# The stored profile, downloaded, reads the same in go tool pprof.
curl -sS -o "$T/raw.pb.gz" "${URL}api/raw?target=0&id=2"
got=$(go tool pprof -symbolize=none -top -sample_index=inuse_space "$T/raw.pb.gz" 2>/dev/null |
    sed -n '/^ *flat /{n;p;q}')
[ "$got" = "$go_top" ] || fail "downloaded profile: top row '$got', want '$go_top'"
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL}api/top?target=0&id=99")
[ "$code" = 404 ] || fail "unknown profile id: HTTP $code, want 404"
code=$(curl -s -o /dev/null -w '%{http_code}' "${URL}api/top?target=0&id=1&focus=(")
[ "$code" = 400 ] || fail "bad focus regex: HTTP $code, want 400"
grep -q "127.0.0.1:$CLOSED" "$T/web.err" || fail "unreachable target not logged"

# The ring: the newest 32 of 40 dumps, in time order; two more evict the two oldest.
ring() { web_api "profiles?target=4" >"$T/ring.json"
    web_json "$T/ring.json" 'j.profiles.map(p => p.id + ":" + p.label.slice(0, 3)).join(" ")'; }
want=$(for i in $(seq 18 49); do printf '%s:m%s ' $((i - 17)) $i; done)
[ "$(ring) " = "$want" ] || fail "ring after 40 dumps: $(ring), want $want"
mkdir -p "$T/stage" # complete files appear at once, as heapsift's renamed dumps do
cp "$T/dumps/a.pb.gz" "$T/stage/m50.pb.gz"
cp "$T/dumps/a.pb.gz" "$T/stage/m51.pb.gz"
touch -d "@$now" "$T/stage/m50.pb.gz"
touch -d "@$((now + 1))" "$T/stage/m51.pb.gz"
mv "$T/stage/m50.pb.gz" "$T/stage/m51.pb.gz" "$T/many/"
want=$(for i in $(seq 20 51); do printf '%s:m%s ' $((i - 17)) $i; done)
i=0
while [ "$(ring) " != "$want" ] && [ $i -lt 100 ]; do sleep 0.2; i=$((i + 1)); done
[ "$(ring) " = "$want" ] || fail "ring after 2 more: $(ring), want $want"

# --- the page in a browser ----------------------------------------------------------------
cat >"$T/want.json" <<EOF
{
  "top": {"name": "$TOP_NAME", "flat": "$TOP_FLAT", "flat_pct": "$TOP_PCT",
          "flat_pct_num": ${TOP_PCT%\%}, "total": "$B_TOTAL"},
  "a_label": "a.pb.gz", "b_label": "b.pb.gz", "a_total": "$A_TOTAL",
  "diff": {"name": "site_grow", "flat": "$DIFF_FLAT", "flat_pct": "$DIFF_PCT",
           "steady": "site_steady", "steady_verdict": "$STEADY"},
  "flame": {"frames": ["all", "main", "site_grow", "site_steady", "site_small"]},
  "series": {"inuse": [$(inuse "$T/dumps/a.pb.gz"), $IN_B],
             "rss": [$(rss "$T/dumps/a.pb.gz"), $(rss "$T/dumps/b.pb.gz")]},
  "suspects": {"site": "site_grow", "growth": "${SUS% *}", "verdict": "${SUS#* }",
               "processes": 2},
  "new_src": "$T/c.pb.gz", "new_dst": "$T/dumps/c.pb.gz", "new_label": "c.pb.gz",
  "bad_target": 3
}
EOF
NODE_PATH="$SRC/tests/web/node_modules" node "$SRC/tests/web/web_ui.mjs" "$URL" "$T/want.json" \
    "$BUILD/web_ui" || fail "browser checks (screenshots: $BUILD/web_ui-*.png)"

web_stop
kill "$SRV" 2>/dev/null
wait "$SRV" 2>/dev/null
echo "web_ui: $FAILS failures"
[ "$FAILS" -eq 0 ]

#!/bin/sh
# diagnose_attach: `heapsift diagnose` on a PID that serves no endpoint (docs/diagnose.md,
# "Live targets"): heapsift attaches with an endpoint of its own for the while, takes the
# series through it and detaches after.
#  - http_app runs without heapsift; 16 blocks of 64 KiB go to site_old before the attach.
#  - `HEAPSIFT_RATE=1 heapsift diagnose --seconds 8 --leak-check --keep K --json PID`;
#    after each of the first four profiles, site_window gets 32 blocks of 64 KiB (staged:
#    each batch lands between two profiles, checked), 8 MiB in all.
#  - The JSON must name the PID as target and hold a growth finding of 8 MiB (within 10%:
#    rate 1 counts every byte) at site_window and none at site_old, which was allocated
#    before the attach; five profiles must be kept, the last one a leak check (reachable
#    labels), the attach's window profile beside them and its port file gone; stdout holds
#    only the JSON document (detach's "wrote" line goes to stderr).
#  - After: the process is detached (a second detach says it is not attached), it still
#    answers, exits 0, and nothing was written to its stderr.
# Skips (77) without curl, go or libmicrohttpd, or off x86-64 (attach).
# usage: diagnose_attach.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" diagnose_attach
. "$(dirname "$0")/../lib/http.sh"
http_need
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: attach is x86-64 only"; exit 77; }
hs_need_built "$LIB" "$CLI" "$BUILD/programs/http_app"
APP_PID="" DPID=""
trap 'for p in $APP_PID $DPID; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT INT TERM

mkfifo "$T/in" "$T/out"
"$BUILD/programs/http_app" <"$T/in" >"$T/out" 2>"$T/app.err" &
APP_PID=$!
exec 3>"$T/in" 4<"$T/out"
app old 16 >/dev/null || fail "http_app did not answer"

HEAPSIFT_RATE=1 "$CLI" diagnose --seconds 8 --leak-check --keep "$T/k" --json "$APP_PID" \
    >"$T/d.json" 2>"$T/d.err" &
DPID=$!
i=0
while [ $i -lt 4 ]; do
    hs_until 60 "profile $i" '[ -s "$T/k/profile.$i.pb.gz" ]' || { show "$T/d.err"; break; }
    app window 32 >/dev/null
    [ ! -e "$T/k/profile.$((i + 1)).pb.gz" ] ||
        fail "staging: profile $((i + 1)) was taken before the blocks after profile $i"
    i=$((i + 1))
done
wait "$DPID" && rc=0 || rc=$?
DPID=""
[ "$rc" = 0 ] || { fail "diagnose: status $rc"; show "$T/d.err"; }

python3 - "$T/d.json" "$APP_PID" >"$T/check" 2>&1 <<'PY' || { fail "the JSON answer"; show "$T/check"; show "$T/d.json" 40; }
import json, sys
d = json.load(open(sys.argv[1]))
assert str(d["target"]) == sys.argv[2], "target %r, not %s" % (d["target"], sys.argv[2])
g = [f for f in d["findings"] if f["kind"] == "growth"]
w = [f for f in g if "site_window" in (f.get("site") or "")]
assert len(w) == 1, "growth findings at site_window: %d" % len(w)
assert 0.9 * 8388608 <= w[0]["bytes"] <= 1.1 * 8388608, "growth %d, not 8 MiB" % w[0]["bytes"]
assert not [f for f in d["findings"] if "site_old" in (f.get("site") or "")], "a finding at site_old"
print("growth at site_window: %d B (8388608 allocated)" % w[0]["bytes"])
PY
cat "$T/check"
n=$(ls "$T/k" | grep -c '^profile\.[0-9]*\.pb\.gz$' || true)
[ "$n" = 5 ] || fail "$n profiles kept, not 5"
[ ! -e "$T/k/attach.port" ] || fail "the attach's port file was left in the kept directory"
[ -s "$T/k/attach-window.pb.gz" ] || fail "--keep: the attach's window profile is not kept"
grep -q "wrote $T/k/attach-window.pb.gz" "$T/d.err" || { fail "detach's line is not on stderr"; show "$T/d.err"; }
go tool pprof -raw "$T/k/profile.4.pb.gz" 2>/dev/null | grep -q 'reachable' ||
    fail "--leak-check: the last profile has no reachable labels"

"$CLI" detach "$APP_PID" >"$T/det.out" 2>"$T/det.err" && fail "a second detach succeeded: still attached"
grep -q 'not attached\|no heapsift\|not profiled' "$T/det.err" || { fail "second detach: no reason"; show "$T/det.err"; }
app window 1 >/dev/null || fail "http_app stopped answering after the detach"
app quit >/dev/null || true
exec 3>&- 4<&-
wait "$APP_PID" && rc=0 || rc=$?
APP_PID=""
[ "$rc" = 0 ] || fail "http_app exited with status $rc"
[ ! -s "$T/app.err" ] || { fail "the program's stderr got output"; show "$T/app.err"; }
[ "$FAILS" = 0 ] && echo "PASS: diagnose_attach" || exit 1

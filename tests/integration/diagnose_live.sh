#!/bin/sh
# diagnose_live: `heapsift diagnose` on running processes (docs/diagnose.md, "Live
# targets").
#  - http_app (rate 1) by its URL with --seconds 8 --keep: the test waits for each of the
#    first four profiles to be taken and then has site_window allocate 32 blocks of 64 KiB
#    (staged: each batch lands between two profiles, checked), so the five profiles grow by
#    8 MiB: the JSON must hold a growth finding for site_window of 8 MiB (within 10%), and
#    five profiles must have been taken.
#  - the same program, steady, by its PID (the endpoint found from its environment): no
#    growth finding, a top_site finding.
#  - a redis-server preloaded with heapsift and an endpoint, by its PID with --seconds 10,
#    while redis-benchmark loads it: after the first profile 20,000 keys of 4,000 bytes
#    (~80 MB) go in through redis-cli --pipe; the growth findings must sum to the growth of
#    redis' INFO used_memory within 15% (rate 65536: ~1,300 samples, 5 sigma), and
#    --leak-check must have made the last profile a leak check.
# Skips (77) without curl, go or libmicrohttpd; the redis part without redis.
# usage: diagnose_live.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" diagnose_live
. "$(dirname "$0")/../lib/http.sh"
http_need
hs_need_built "$LIB" "$CLI" "$BUILD/programs/http_app"
SPID="" BPID="" DPID=""
trap 'for p in $BPID $SPID $DPID; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$T"' EXIT INT TERM

# findings FILE KIND: "bytes site" of each finding of KIND in the JSON answer
findings() {
    python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for f in d["findings"]:
    if f["kind"] == sys.argv[2]:
        print(f["bytes"], f.get("site") or "-")
' "$1" "$2"
}

# staged K DIR N CMD: for i in 0..N-1, once DIR/profile.i exists runs CMD, then checks
# that profile.i+1 is not there yet (the change landed between two profiles)
staged() {
    s_dir=$1 s_n=$2
    shift 2
    s_i=0
    while [ $s_i -lt "$s_n" ]; do
        hs_until 60 "profile $s_i in $s_dir" '[ -s "$s_dir/profile.$s_i.pb.gz" ]' || return 1
        eval "$*"
        [ ! -e "$s_dir/profile.$((s_i + 1)).pb.gz" ] ||
            fail "staging: profile $((s_i + 1)) was taken before the change after profile $s_i ended"
        s_i=$((s_i + 1))
    done
}

app_start
app old 16 >/dev/null

# 1. by URL, growing
"$CLI" diagnose --seconds 8 --keep "$T/k1" --json "$URL/debug/pprof/heap" >"$T/d1.json" 2>"$T/d1.err" &
DPID=$!
staged "$T/k1" 4 'app window 32 >/dev/null'
wait "$DPID" && rc=0 || rc=$?
DPID=""
[ "$rc" = 0 ] || { fail "diagnose URL: status $rc"; show "$T/d1.err"; }
n=$(ls "$T/k1" | grep -c '^profile\.[0-9]*\.pb\.gz$' || true)
[ "$n" = 5 ] || fail "diagnose URL --seconds 8: $n profiles kept, not 5"
findings "$T/d1.json" growth >"$T/g1" || { fail "diagnose URL: no JSON"; show "$T/d1.json"; }
awk '$2 ~ /site_window/ && $1 >= 0.9 * 8388608 && $1 <= 1.1 * 8388608 { ok = 1 } END { exit !ok }' "$T/g1" ||
    { fail "diagnose URL: no growth finding of 8 MiB (8388608) at site_window"; show "$T/d1.json"; }
echo "by URL: growth $(cat "$T/g1" | tr '\n' ' ') (8388608 allocated)"

# 2. by PID, steady: the endpoint from the environment
"$CLI" diagnose --seconds 2 --json "$APP_PID" >"$T/d2.json" 2>"$T/d2.err" ||
    { fail "diagnose PID: status $?"; show "$T/d2.err"; }
[ -z "$(findings "$T/d2.json" growth)" ] || { fail "diagnose PID, steady: a growth finding"; show "$T/d2.json"; }
[ -n "$(findings "$T/d2.json" top_site)" ] || { fail "diagnose PID: no top_site finding"; show "$T/d2.json"; }
grep -q "\"target\": *\"$APP_PID\"" "$T/d2.json" || fail "diagnose PID: target is not $APP_PID"
"$CLI" diagnose "$APP_PID" >"$T/d2.txt" 2>"$T/d2t.err" || { fail "diagnose PID (text): status $?"; show "$T/d2t.err"; }
app_stop
"$CLI" diagnose --json http://127.0.0.1:1 >/dev/null 2>"$T/d3.err" && fail "diagnose of a closed port: status 0"
grep -q 'heapsift: error: diagnose: GET http://127.0.0.1:1/debug/pprof/heap' "$T/d3.err" ||
    { fail "closed port: no error line"; show "$T/d3.err"; }

# 3. redis under load, preloaded, by PID
. "$(dirname "$0")/../lib/redis.sh"
why=$(redis_need) || { echo "SKIP (redis part): $why"; exit $((FAILS > 0)); }
R_CLEAN="$T/rport" redis_start HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/rport" HEAPSIFT_HTTP_TOKEN=diagtoken \
    HEAPSIFT_RATE=65536 HEAPSIFT_OUT="$T/redis.%p.pb.gz" LD_PRELOAD="$LIB"
hs_until 30 "redis' port file" '[ -s "$T/rport" ]' || { show "$T/redis.err"; exit 1; }
redis_keys "$T/keys" diag
redis-benchmark -p "$PORT" -n 300000 -c 8 -q -t set,get >"$T/bench" 2>&1 &
BPID=$!
HEAPSIFT_HTTP_TOKEN=diagtoken "$CLI" diagnose --seconds 10 --leak-check --keep "$T/k3" --json "$SPID" >"$T/d3.json" 2>"$T/d3.err" &
DPID=$!
hs_until 60 "redis' first profile" '[ -s "$T/k3/profile.0.pb.gz" ]' || true
u0=$(redis_used)
redis-cli -p "$PORT" --pipe <"$T/keys" >"$T/pipe" 2>&1 || { fail "redis-cli --pipe"; show "$T/pipe"; }
u1=$(redis_used)
[ ! -e "$T/k3/profile.4.pb.gz" ] || fail "staging: the last profile was taken before the keys were in"
wait "$DPID" && rc=0 || rc=$?
DPID=""
kill "$BPID" 2>/dev/null || true
BPID=""
[ "$rc" = 0 ] || { fail "diagnose redis: status $rc"; show "$T/d3.err"; }
grep -q 'reachable' "$T/k3/profile.4.pb.gz" 2>/dev/null ||
    go tool pprof -raw "$T/k3/profile.4.pb.gz" 2>/dev/null | grep -q 'reachable' ||
    fail "--leak-check: the last profile has no reachable labels"
grow=$(findings "$T/d3.json" growth | awk '{ s += $1 } END { print s + 0 }')
want=$((u1 - u0))
echo "redis: growth findings $grow bytes, used_memory grew $want"
awk -v g="$grow" -v w="$want" 'BEGIN { exit !(g >= 0.85 * w && g <= 1.15 * w) }' ||
    { fail "redis: growth findings $grow, not within 15% of used_memory's growth $want"; show "$T/d3.json"; }
redis_stop
SPID=""
[ "$FAILS" = 0 ] && echo "PASS: diagnose_live" || exit 1

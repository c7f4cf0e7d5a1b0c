#!/bin/sh
# prometheus: a real Prometheus (Debian's prometheus package) scrapes three profiled
# programs (tests/programs/http_app.c, rate 262144, fixed seed) every second, with
# docs/prometheus/prometheus.yml (targets and interval put in) and rules.yml as they are:
#  - steady holds 144 blocks of 64 KiB at site_old (9,437,184 B): PromQL through the HTTP
#    API reads its live heap and site_old's bytes, each inside its 95% interval;
#  - grower adds 16 blocks (1 MiB) a second: HeapsiftHeapGrowing fires for it;
#  - steady and churner (malloc/free churn, 256 blocks live) never get the alert, not even
#    pending, over the same time.
# Prometheus runs on a loopback port with its storage in the test's directory and is
# ended (and waited for) at exit, with the programs. About 50 s.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" prometheus
SRC=${2:-$(dirname "$0")/../..}
. "$(dirname "$0")/../lib/http.sh"
http_need
command -v prometheus >/dev/null 2>&1 && command -v promtool >/dev/null 2>&1 ||
    { echo "SKIP: prometheus not found (Debian's prometheus)"; exit 77; }
PIDS=
cleanup() {
    for p in $PIDS; do kill "$p" 2>/dev/null || true; done
    for p in $PIDS; do wait "$p" 2>/dev/null || true; done
    rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# start NAME: http_app with its own FIFOs in $T/NAME (its driver opens them).
start() {
    d=$T/$1
    mkdir -p "$d"
    mkfifo "$d/in" "$d/out"
    env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$d/port" HEAPSIFT_RATE=262144 \
        HEAPSIFT_SEED=1 HEAPSIFT_VERBOSE=0 HEAPSIFT_OUT="$d/exit.%p.pb.gz" LD_PRELOAD="$LIB" \
        "$BUILD/programs/http_app" <"$d/in" >"$d/out" 2>>"$d/err" &
    PIDS="$PIDS $!"
}
# port NAME: waits for NAME's port file (its driver has opened the FIFOs); sets PORT_NAME.
port() {
    d=$T/$1
    hs_until 30 "$1's port file" '[ -s "$d/port" ]' || exit 1
    eval "PORT_$1=\$(cat \"\$d/port\")"
}
# drive NAME FIRST CMD PAUSE: sends FIRST, then CMD, each time waiting for its "ok" and
# pausing, until $T/stop exists; then quit.
drive() {
    d=$T/$1
    (
        exec 3>"$d/in" 4<"$d/out"
        c=$2
        while [ ! -e "$T/stop" ]; do
            echo "$c" >&3
            while IFS= read -r l <&4; do [ "$l" = ok ] && break; done
            c=$3
            sleep "$4"
        done
        echo quit >&3
    ) &
    PIDS="$PIDS $!"
}
start steady
start grower
start churner
drive steady "old 144" "old 0" 1 # then holds them
drive grower "old 16" "old 16" 1
drive churner "churn 0.3" "churn 0.3" 0.7
port steady
port grower
port churner

PPORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
sed -e "s/\['127.0.0.1:6060'\]/['127.0.0.1:$PORT_steady', '127.0.0.1:$PORT_grower', '127.0.0.1:$PORT_churner']/" \
    -e 's/_interval: 15s/_interval: 1s/' "$SRC/docs/prometheus/prometheus.yml" >"$T/prometheus.yml"
cp "$SRC/docs/prometheus/rules.yml" "$T/rules.yml"
grep -q "$PORT_churner" "$T/prometheus.yml" && grep -q 'scrape_interval: 1s' "$T/prometheus.yml" ||
    { fail "docs/prometheus/prometheus.yml: its target or interval lines changed"; exit 1; }
promtool check config "$T/prometheus.yml" >"$T/check" 2>&1 || { fail "promtool check config"; show "$T/check"; }
prometheus --config.file="$T/prometheus.yml" --storage.tsdb.path="$T/data" \
    --web.listen-address="127.0.0.1:$PPORT" >"$T/prom.log" 2>&1 &
PIDS="$PIDS $!"
P=http://127.0.0.1:$PPORT
hs_until 60 "prometheus ready" 'curl -sf "$P/-/ready" >/dev/null 2>&1' || { show "$T/prom.log"; exit 1; }

# q PROMQL: the first result's value, empty when none.
q() {
    curl -sS --max-time 10 -G "$P/api/v1/query" --data-urlencode "query=$1" 2>>"$T/curl.err" |
        python3 -c 'import json, sys; r = json.load(sys.stdin)["data"]["result"]; print(r[0]["value"][1] if r else "")'
}
between() {
    awk -v l="$1" -v x="$2" -v h="$3" 'BEGIN { exit !(l != "" && h != "" && l + 0 <= x + 0 && x + 0 <= h + 0) }'
}
S="instance=\"127.0.0.1:$PORT_steady\""
G="instance=\"127.0.0.1:$PORT_grower\""
t0=$(date +%s)

# steady: its site and its heap, once scraped after its blocks are in.
hs_until 60 "site_old in prometheus" \
    '[ -n "$(q "heapsift_site_live_bytes{$S,function=\"site_old\"}")" ]' || show "$T/prom.log"
lo=$(q "heapsift_site_live_lo95_bytes{$S,function=\"site_old\"}")
hi=$(q "heapsift_site_live_hi95_bytes{$S,function=\"site_old\"}")
between "$lo" 9437184 "$hi" || fail "steady: site_old's 9,437,184 B not inside its interval from PromQL ($lo..$hi)"
lo=$(q "heapsift_heap_live_lo95_bytes{$S}")
hi=$(q "heapsift_heap_live_hi95_bytes{$S}")
between "$lo" 9437184 "$hi" || fail "steady: a live heap of 9,437,184 B and a few KiB not inside its interval ($lo..$hi)"

# grower: the alert fires.
hs_until 150 "HeapsiftHeapGrowing firing for grower" \
    '[ -n "$(q "ALERTS{alertname=\"HeapsiftHeapGrowing\",alertstate=\"firing\",$G}")" ]' ||
    { show "$T/prom.log"; curl -sS "$P/api/v1/alerts" >&2 || true; }
fired=$(($(date +%s) - t0))
# steady and churner: no alert, pending or firing, at any time so far.
n=$(q "count(count_over_time(ALERTS{alertname=\"HeapsiftHeapGrowing\",instance!=\"127.0.0.1:$PORT_grower\"}[10m]))")
[ -z "$n" ] || { fail "the growth alert went off (pending or firing) for steady or churner"; curl -sS "$P/api/v1/alerts" >&2 || true; }
seen=$(q "count_over_time(up{$S}[10m])")
between 20 "${seen:-0}" 100000 || fail "steady scraped only ${seen:-0} times: not watched long enough to say the alert stays silent"
echo "grower's alert fired after ${fired} s; steady and churner silent (steady scraped ${seen} times)"

touch "$T/stop"
[ "$FAILS" = 0 ] || exit 1
echo "ok: prometheus"

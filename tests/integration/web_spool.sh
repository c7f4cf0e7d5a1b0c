#!/bin/sh
# `heapsift web DIR` over a directory of spools (docs/postmortem.md): a spool named *.spool
# that a killed process left is listed as a recovered profile, and the API's top table
# names the program's site with the bytes `heapsift top` reads from the spool itself.
# Usage: web_spool.sh BUILD_DIR SOURCE_DIR
set -u
SRC=$(cd "$2" && pwd)
. "$SRC/tests/lib/common.sh"
hs_setup "$1" web_spool
. "$SRC/tests/web/lib.sh"
command -v node >/dev/null || web_need_browser # node reads the JSON
PROG=$BUILD/programs/spoolprog
hs_need_built "$PROG"

mkdir -p "$T/spools"
HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$T/spools/app.%p.spool" HEAPSIFT_SPOOL_SIZE=2M \
    HEAPSIFT_OUT="$T/o.pb.gz" LD_PRELOAD="$LIB" "$PROG" run "$T/rec" 2 0 2>"$T/err" &
pid=$!
i=0
while [ ! -f "$T/rec" ] && [ $i -lt 1000 ]; do sleep 0.01; i=$((i + 1)); done
sleep 0.2
kill -9 $pid
wait $pid 2>/dev/null
[ -f "$T/spools/app.$pid.spool" ] || { fail "no spool left"; show "$T/err"; exit 1; }

web_start "$T/web" --interval 1 "$T/spools"
[ -n "$URL" ] || { show "$T/web.err"; exit 1; }
n=$(web_wait_profiles 1 0.5)
[ "$n" -ge 1 ] || { fail "the spool is not listed"; show "$T/p.json"; show "$T/web.err"; }
id=$(web_json "$T/p.json" 'j.profiles[0].id')
web_api "top?target=0&id=$id&unit=B" >"$T/top.json"
api=$(web_json "$T/top.json" 'j.rows.filter(r => r.name == "spool_site").map(r => r.flat_label).join("")')
hs=$("$CLI" top --unit B "$T/spools/app.$pid.spool" 2>/dev/null | awk '$NF == "spool_site" { print $1 }')
[ -n "$hs" ] && [ "$api" = "$hs" ] || { fail "spool_site: API '$api', heapsift top '$hs'"; show "$T/top.json"; }
web_stop
[ "$FAILS" -eq 0 ] && echo "web_spool: the spool of process $pid listed; spool_site holds $hs, as heapsift top reads"
[ "$FAILS" -eq 0 ]

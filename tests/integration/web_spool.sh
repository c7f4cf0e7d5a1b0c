#!/bin/sh
# `heapsift web DIR` over a directory of spools (docs/postmortem.md): a spool named *.spool
# that a killed process left (killed once its record shows blocks held) is listed as a
# recovered profile, and the API's top table names the program's site with the bytes
# `heapsift top` reads from the spool itself.
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
while [ ! -f "$T/rec" ] && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
[ -f "$T/rec" ] || { fail "spoolprog did not start in 30 s"; show "$T/err"; }
# Killed while stopped at a moment its record shows 10 blocks held (each of its 2 threads
# may be inside a free the spool saw already), so spool_site has a row whatever the
# machine's load: stopped, its record read, let go again until then (30 s at most).
i=0
while [ $i -lt 300 ]; do
    kill -STOP $pid
    held=$("$PROG" check "$T/rec" 0 0 | sed -n 's/^record: [0-9-]* bytes in \([0-9-]*\) objects.*/\1/p')
    [ "${held:-0}" -ge 10 ] && break
    kill -CONT $pid
    sleep 0.1
    i=$((i + 1))
done
[ "${held:-0}" -ge 10 ] || fail "spoolprog held ${held:-no} blocks after 30 s"
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

#!/bin/sh
# http_fork: children inherit HEAPSIFT_HTTP (docs/http.md, "Children"):
#  - with :0 and a port file with %p, a forked child (no exec) serves on a port of its
#    own, written to its own port file, with a valid profile; the parent keeps serving;
#  - with a fixed port, the forked child cannot bind (the parent holds it): one line on
#    stderr naming its pid, and it goes on; the parent keeps serving;
#  - another profiled process started with the same fixed port (an exec'd child's case)
#    logs once, runs normally (same output and exit status) and exits.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-fork
. "$(dirname "$0")/../lib/http.sh"
http_need

PORTWAIT='$T/port.$APP_PID' app_start HEAPSIFT_HTTP_PORTFILE="$T/port.%p"
app old 16 >/dev/null
child=$(app fork | awk '/^child/ { print $2 }')
i=0
while [ ! -s "$T/port.$child" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
if [ -s "$T/port.$child" ]; then
    cport=$(cat "$T/port.$child")
    [ "$cport" != "$(cat "$T/port.$APP_PID")" ] || fail "the forked child reports its parent's port"
    code=$(curl -sS -o "$T/child.pb.gz" -w '%{http_code}' "http://127.0.0.1:$cport/debug/pprof/heap" 2>&1 || true)
    [ "$code" = 200 ] && [ "$(site "$T/child.pb.gz" inuse_space site_old)" = 1048576 ] ||
        fail "forked child's endpoint: status $code, or no site_old (inherited 1 MiB)"
else
    fail "the forked child (pid $child) wrote no port file"; show "$T/app.err"
fi
[ "$(get /debug/pprof/heap "$T/parent.pb.gz")" = 200 ] || fail "parent's endpoint after the fork"
app_stop

FIXED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
: >"$T/app.err"
app_start HEAPSIFT_HTTP="127.0.0.1:$FIXED"
child=$(app fork | awk '/^child/ { print $2 }')
i=0
while ! grep -q "pid $child" "$T/app.err" && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ "$(grep -c "cannot listen (pid $child): Address already in use" "$T/app.err")" = 1 ] ||
    { fail "forked child on a fixed port: want one 'cannot listen' line naming pid $child"; show "$T/app.err"; }
[ "$(get /debug/pprof/heap "$T/parent2.pb.gz")" = 200 ] || fail "parent's endpoint after the child failed to bind"
out=$( (sleep 0.5; echo quit) | HEAPSIFT_HTTP="127.0.0.1:$FIXED" LD_PRELOAD="$LIB" \
    "$BUILD/programs/http_app" 2>"$T/exec.err") && rc=0 || rc=$?
[ "$out" = ok ] && [ "$rc" = 0 ] || fail "second process on the fixed port: output '$out' status $rc"
[ "$(grep -c 'cannot listen' "$T/exec.err")" = 1 ] || { fail "second process: want one 'cannot listen' line"; show "$T/exec.err"; }
app_stop
[ "$FAILS" -eq 0 ] && echo "http_fork: ok"
exit $((FAILS > 0))

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
if hs_until 30 "the forked child's (pid $child) port file" '[ -s "$T/port.$child" ]'; then
    cport=$(cat "$T/port.$child")
    [ "$cport" != "$(cat "$T/port.$APP_PID")" ] || fail "the forked child reports its parent's port"
    code=$(curl -sS -o "$T/child.pb.gz" -w '%{http_code}' "http://127.0.0.1:$cport/debug/pprof/heap" 2>&1 || true)
    [ "$code" = 200 ] && [ "$(site "$T/child.pb.gz" inuse_space site_old)" = 1048576 ] ||
        fail "forked child's endpoint: status $code, or no site_old (inherited 1 MiB)"
else
    show "$T/app.err"
fi
[ "$(get /debug/pprof/heap "$T/parent.pb.gz")" = 200 ] || fail "parent's endpoint after the fork"
app_stop

FIXED=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
: >"$T/app.err"
app_start HEAPSIFT_HTTP="127.0.0.1:$FIXED"
child=$(app fork | awk '/^child/ { print $2 }')
hs_until 30 "the forked child's (pid $child) line" "grep -q 'pid $child' '$T/app.err'" || true
[ "$(grep -c "cannot listen (pid $child): Address already in use" "$T/app.err")" = 1 ] ||
    { fail "forked child on a fixed port: want one 'cannot listen' line naming pid $child"; show "$T/app.err"; }
[ "$(get /debug/pprof/heap "$T/parent2.pb.gz")" = 200 ] || fail "parent's endpoint after the child failed to bind"
# it quits once it has said it cannot listen (a quit before its serving thread tried to
# bind would end it with nothing to say)
mkfifo "$T/exec.in"
HEAPSIFT_HTTP="127.0.0.1:$FIXED" LD_PRELOAD="$LIB" "$BUILD/programs/http_app" <"$T/exec.in" \
    >"$T/exec.out" 2>"$T/exec.err" &
EPID=$!
exec 5>"$T/exec.in"
hs_until 30 "second process on the fixed port: its 'cannot listen'" "grep -q 'cannot listen' '$T/exec.err'" || true
echo quit >&5
exec 5>&-
wait "$EPID" && rc=0 || rc=$?
out=$(cat "$T/exec.out")
[ "$out" = ok ] && [ "$rc" = 0 ] || fail "second process on the fixed port: output '$out' status $rc"
[ "$(grep -c 'cannot listen' "$T/exec.err")" = 1 ] || { fail "second process: want one 'cannot listen' line"; show "$T/exec.err"; }
app_stop
[ "$FAILS" -eq 0 ] && echo "http_fork: ok"
exit $((FAILS > 0))

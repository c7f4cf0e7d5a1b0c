#!/bin/sh
# attach_http: the endpoint of `heapsift attach --http` ends at `heapsift detach` and
# starts again at a re-attach with --http. Four attaches and detaches of one running
# attach_target: the first and the last without --http (no thread named heapsift-http:
# the second starts the endpoint a first attach did not ask for, the third restarts the
# one the second's detach ended, the last does not serve again); the second and third on
# 127.0.0.1:0 (a free port, read from --http-portfile):
#  - after the attach, one thread named heapsift-http; the index answers 200, and the
#    heap profile served after a round has that round's site_keep (--rate 1; read by go
#    tool pprof);
#  - a ?seconds=60 request is left open (its window counted by /debug/heapsift/stats)
#    while `heapsift detach` runs: it ends (503, or the connection closed unanswered)
#    instead of hanging;
#  - after detach: as many threads as before the first attach, none named heapsift-http,
#    and the port refuses connections (curl's status 7);
#  - the target runs its next round, and at the end its output and exit status are
#    unchanged.
# usage: attach_http.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_http
. "$(dirname "$0")/../lib/attach.sh"
. "$(dirname "$0")/../lib/http.sh"
http_need
hs_need_built "$LIB" "$CLI" "$BUILD/programs/attach_target"

tasks() { ls "/proc/$TPID/task" | wc -l; }
named() { cat "/proc/$TPID/task/"*/comm 2>/dev/null | grep -c "^$1\$" || true; }
# code URL PATH OUT: the HTTP status of a GET (000 when nothing answered).
code() { curl -sS --max-time 60 -o "$3" -w '%{http_code}' "$1$2" 2>"$T/curl.err" || true; }

at_start
n0=$(tasks)
[ "$(named heapsift-http)" = 0 ] || fail "a heapsift-http thread before any attach"
prev=
for k in 1 2 3 4; do
    if [ "$k" = 1 ] || [ "$k" = 4 ]; then
        "$CLI" attach --rate 1 -o "$T/p$k.pb.gz" "$TPID" 2>"$T/a$k.err" ||
            { fail "attach $k: status $?"; show "$T/a$k.err"; }
        [ "$(named heapsift-http)" = 0 ] || fail "attach $k (no --http): a thread named heapsift-http"
        if [ -n "$prev" ]; then
            rc=0; curl -sS --max-time 30 -o /dev/null "http://127.0.0.1:$prev/debug/pprof/" 2>/dev/null || rc=$?
            [ "$rc" = 7 ] || fail "attach $k (no --http): the last endpoint's port $prev: curl status $rc, not 7"
        fi
        at_round "$k"
        "$CLI" detach "$TPID" >/dev/null 2>"$T/d$k.err" || { fail "detach $k: status $?"; show "$T/d$k.err"; }
        [ "$(tasks)" = "$n0" ] || fail "detach $k: $(tasks) threads, $n0 before the attach"
        continue
    fi
    "$CLI" attach --rate 1 --http 127.0.0.1:0 --http-portfile "$T/port$k" -o "$T/p$k.pb.gz" "$TPID" \
        2>"$T/a$k.err" || { fail "attach $k: status $?"; show "$T/a$k.err"; }
    # the thread names itself, binds, then writes the port file: it may not have run yet
    i=0
    while [ ! -s "$T/port$k" ] && [ $i -lt 3000 ]; do i=$((i + 1)); sleep 0.01; done
    port=$(cat "$T/port$k" 2>/dev/null || true)
    [ -n "$port" ] || { fail "attach $k: no port file within 30 s"; show "$T/err"; break; }
    url="http://127.0.0.1:$port"
    [ "$(named heapsift-http)" = 1 ] ||
        { fail "attach $k: $(named heapsift-http) threads named heapsift-http, not 1"; cat "/proc/$TPID/task/"*/comm >&2; }
    [ "$(code "$url" /debug/pprof/ "$T/index$k")" = 200 ] && grep -q 'href="heap"' "$T/index$k" ||
        { fail "attach $k: the index does not answer on port $port"; show "$T/curl.err"; }
    at_round "$k"
    [ "$(code "$url" /debug/pprof/heap "$T/heap$k.pb.gz")" = 200 ] || fail "attach $k: /debug/pprof/heap: not 200"
    go tool pprof -top -unit=B -sample_index=alloc_space "$T/heap$k.pb.gz" >"$T/top$k" 2>&1 || true
    grep -q 'site_keep$' "$T/top$k" || { fail "attach $k: no site_keep in the served profile"; show "$T/top$k"; }

    # a request in progress at detach: a delta window, open until the detach ends it
    curl -sS --max-time 120 -o "$T/delta$k" -w '%{http_code}' "$url/debug/pprof/heap?seconds=60" \
        >"$T/delta$k.code" 2>/dev/null &
    cpid=$!
    i=0
    until code "$url" /debug/heapsift/stats "$T/stats" >/dev/null &&
        grep -q '"delta_windows_open":1' "$T/stats"; do
        i=$((i + 1)); [ $i -lt 500 ] || { fail "attach $k: the ?seconds=60 window never opened"; break; }
        sleep 0.02
    done
    "$CLI" detach "$TPID" >/dev/null 2>"$T/d$k.err" || { fail "detach $k: status $?"; show "$T/d$k.err"; }
    wait "$cpid" || true
    dc=$(cat "$T/delta$k.code")
    case "$dc" in
    503 | 000) echo "detach $k: the open ?seconds=60 request ended with status $dc" ;;
    *) fail "detach $k: the open ?seconds=60 request got $dc, not 503 or nothing" ;;
    esac

    [ "$(named heapsift-http)" = 0 ] || fail "detach $k: a thread named heapsift-http is left"
    [ "$(tasks)" = "$n0" ] || { fail "detach $k: $(tasks) threads, $n0 before the attach"; cat "/proc/$TPID/task/"*/comm >&2; }
    rc=0; curl -sS --max-time 30 -o /dev/null "$url/debug/pprof/" 2>"$T/refused$k" || rc=$?
    [ "$rc" = 7 ] || { fail "detach $k: port $port: curl status $rc, not 7 (refused)"; show "$T/refused$k"; }
    [ -z "$prev" ] || [ "$prev" = "$port" ] || echo "attach $k served on port $port (the attach before: $prev)"
    prev=$port
done
at_round 5
at_end
[ "$TSTATUS" = 0 ] || fail "the target's exit status changed: $TSTATUS"
[ "$(grep -c '^round .* done$' "$T/out")" = 5 ] || { fail "the target's output changed"; show "$T/out"; }
grep -q '^bye$' "$T/out" || fail "the target did not say bye"
[ "$FAILS" -eq 0 ] && echo "attach_http: ok"
exit $((FAILS > 0))

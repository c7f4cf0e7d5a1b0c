# Shared by the HTTP endpoint tests (tests/integration/http_*.sh): start the test program
# tests/programs/http_app.c with the library and the endpoint on 127.0.0.1:0, talk to it
# through two FIFOs, fetch paths. Sourced after common.sh and hs_setup; not run.

# http_need: skips (exit 77) without curl, go or libmicrohttpd; then points go's build
# cache, HOME and go tool pprof's saved profiles into $T.
http_need() {
    for c in curl go; do
        command -v "$c" >/dev/null 2>&1 || { echo "SKIP: $c not found"; exit 77; }
    done
    ldconfig -p 2>/dev/null | grep -q libmicrohttpd.so.12 ||
        { echo "SKIP: libmicrohttpd12 not installed"; exit 77; }
    export GOCACHE="$T/gocache" PPROF_TMPDIR="$T/pprof" HOME="$T"
}

# app_start [VAR=VALUE...]: starts http_app (the variables override the defaults: rate 1,
# quiet, profiles into $T); sets APP_PID and URL (http://127.0.0.1:PORT). Commands go
# through `app`. stderr goes to $T/app.err. PORTWAIT (evaluated after the start, e.g.
# '$T/port.$APP_PID') names the port file to wait for when it is not $T/port.
app_start() {
    rm -f "$T/in" "$T/out" "$T/port"
    mkfifo "$T/in" "$T/out"
    env HEAPSIFT_HTTP=127.0.0.1:0 HEAPSIFT_HTTP_PORTFILE="$T/port" HEAPSIFT_RATE=1 \
        HEAPSIFT_VERBOSE=0 HEAPSIFT_OUT="$T/exit.%p.pb.gz" "$@" LD_PRELOAD="$LIB" \
        "$BUILD/programs/http_app" <"$T/in" >"$T/out" 2>>"$T/app.err" &
    APP_PID=$!
    exec 3>"$T/in" 4<"$T/out"
    pf=$T/port
    [ -z "${PORTWAIT:-}" ] || pf=$(eval echo "$PORTWAIT")
    hs_until 30 "the port file $pf" '[ -s "$pf" ]' || { show "$T/app.err"; return 1; }
    URL=http://127.0.0.1:$(cat "$pf")
}

# app CMD...: sends one command; prints the answer's lines before its "ok".
app() {
    echo "$*" >&3
    while IFS= read -r l <&4; do
        [ "$l" = ok ] && return 0
        echo "$l"
    done
    return 1
}

# app_stop: quits the program and checks its status is 0.
app_stop() {
    app quit >/dev/null || true
    exec 3>&- 4<&-
    wait "$APP_PID" && rc=0 || rc=$?
    [ "$rc" = 0 ] || { fail "http_app exited with status $rc"; show "$T/app.err"; }
}

# get PATH OUT [curl options]: fetches URL/PATH into OUT; prints the HTTP status.
get() {
    p=$1 o=$2
    shift 2
    curl -sS -o "$o" -w '%{http_code}' --max-time 60 "$@" "$URL$p" 2>>"$T/curl.err" || echo 000
}

# site FILE SAMPLE_TYPE NAME: the flat value of function NAME in go tool pprof -top.
site() {
    gotop "$1" "$2" 2>/dev/null | table | awk -F '\t' -v s="$3" '$1 == s { print $2 }'
}

# http_stat KEY: the number after "KEY": in /debug/heapsift/stats (KEY unique there, e.g.
# requests, delta_windows_open); empty when the stats cannot be read.
http_stat() {
    curl -sS --max-time 5 "$URL/debug/heapsift/stats" 2>>"$T/curl.err" |
        sed -n "s/.*\"$1\":\([0-9][0-9]*\).*/\1/p"
}

# windows_open: the endpoint's open ?seconds=N windows (http.delta_windows_open).
windows_open() {
    http_stat delta_windows_open
}

# windows_wait N [SECONDS]: polls the stats until exactly N windows are open (deadline
# SECONDS, 15 by default); returns 1 (after a fail) if they never are, so a test acts only
# once its window is known to be open.
windows_wait() {
    w_want=$1 w_end=$(($(date +%s) + ${2:-15}))
    while :; do
        w_n=$(windows_open)
        [ "$w_n" != "$w_want" ] || return 0
        [ "$(date +%s)" -lt "$w_end" ] || break
        sleep 0.05
    done
    fail "$w_want delta window(s) not open within ${2:-15} s (last seen: ${w_n:-no stats})"
    return 1
}

# still_open N WHAT: fails unless N windows are still open after WHAT was done, i.e. WHAT
# fell inside the window(s) the test then reads (not after one closed on a slow machine:
# the tests' windows are 10 s, for actions of milliseconds).
still_open() {
    [ "$(windows_open)" = "$1" ] || fail "$2 came after the delta window closed (machine too slow?)"
}

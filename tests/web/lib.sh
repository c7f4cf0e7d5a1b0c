# Shared by tests/integration/web_*.sh (sourced after tests/lib/common.sh's hs_setup):
# making sure node, npm, Chromium and playwright-core are there, starting and stopping
# `heapsift web` on a free loopback port, and reading its JSON API.

# web_need_browser [strict]: installs what is missing (scripts/setup.sh,
# tests/web/install.sh); when that fails, exits 77 (skip) outside CI, and fails (exit 1,
# with the reason) under CI or when called with "strict".
web_need_browser() {
    chromium=${HS_CHROMIUM:-/usr/bin/chromium}
    if ! command -v node >/dev/null || ! command -v npm >/dev/null || [ ! -x "$chromium" ]; then
        sh "$SRC/scripts/setup.sh" >&2 || true
    fi
    why=""
    command -v node >/dev/null || why="node is not installed"
    command -v npm >/dev/null || why="npm is not installed"
    [ -x "$chromium" ] || why="$chromium is not installed"
    [ -n "$why" ] || sh "$SRC/tests/web/install.sh" || why="npm ci in tests/web failed"
    [ -z "$why" ] && return 0
    if [ -n "${CI:-}" ]; then
        echo "FAIL: $why (the browser tests must run in CI)" >&2
        exit 1
    fi
    if [ "${1:-}" = strict ]; then
        echo "FAIL: $why (this browser test does not skip: sh scripts/setup.sh installs it)" >&2
        exit 1
    fi
    echo "skip: $why" >&2
    exit 77
}

# web_kill_at_exit PID: the process is killed when the test exits (and T removed).
WEB_PIDS=""
web_kill_at_exit() {
    WEB_PIDS="$WEB_PIDS $1"
    trap 'kill $WEB_PIDS 2>/dev/null; rm -rf "$T"' EXIT INT TERM
}

# web_free_port: a TCP port nothing listens on (bound and released).
web_free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# web_wait_port FILE REGEX: the first number captured by REGEX (sed -E) in FILE, waiting
# up to 30 s for it to appear.
web_wait_port() {
    i=0
    while [ $i -lt 300 ]; do
        p=$(sed -En "s#.*$2.*#\\1#p" "$1" 2>/dev/null | head -n 1)
        [ -n "$p" ] && { echo "$p"; return 0; }
        sleep 0.1
        i=$((i + 1))
    done
    return 1
}

# web_start PREFIX ARGS...: starts `heapsift web --listen 127.0.0.1:0 ARGS...` (stdout in
# PREFIX.out, stderr in PREFIX.err); sets WEBPID and URL (empty when it did not come up).
web_start() {
    out=$1
    shift
    "$CLI" web --listen 127.0.0.1:0 "$@" >"$out.out" 2>"$out.err" &
    WEBPID=$!
    web_kill_at_exit "$WEBPID"
    port=$(web_wait_port "$out.out" 'serving http://127\.0\.0\.1:([0-9]+)/') || port=""
    URL=${port:+http://127.0.0.1:$port/}
    [ -n "$URL" ] || fail "heapsift web did not start"
}

# web_stop: SIGTERM; heapsift web must exit 0.
web_stop() {
    kill -TERM "$WEBPID" 2>/dev/null
    wait "$WEBPID"
    rc=$?
    [ $rc -eq 0 ] || { fail "heapsift web exited $rc on SIGTERM, want 0"; show "$T/web.err" 60; }
}

# web_api PATH: the JSON of GET /api/PATH on stdout.
web_api() {
    curl -sS --max-time 30 "${URL}api/$1"
}

# web_json FILE EXPR: evaluates the JavaScript EXPR over j, FILE's JSON.
web_json() {
    node -e 'const j = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
             console.log(eval(process.argv[2]))' "$1" "$2"
}

# web_wait_profiles N PAUSE: fetches /api/profiles?target=0 into $T/p.json until it lists
# N profiles, at most 60 times, PAUSE seconds apart; prints how many the last one lists.
web_wait_profiles() {
    _i=0
    while [ $_i -lt 60 ]; do
        web_api "profiles?target=0" >"$T/p.json"
        _n=$(web_json "$T/p.json" 'j.profiles.length')
        [ "$_n" -ge "$1" ] && break
        sleep "$2"
        _i=$((_i + 1))
    done
    echo "$_n"
}

# web_grow OUT SEED N: OUT, a profile of tests/programs/grow N at HEAPSIFT_RATE=4096 with
# HEAPSIFT_SEED=SEED (the web tests' directory targets).
web_grow() {
    HEAPSIFT_RATE=4096 HEAPSIFT_SEED=$2 HEAPSIFT_OUT=$1 LD_PRELOAD=$LIB \
        "$BUILD/programs/grow" "$3" >/dev/null || fail "grow $3 did not run"
}

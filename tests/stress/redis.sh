#!/bin/sh
# redis: redis-server (Debian's, on jemalloc) under heapsift at HEAPSIFT_RATE=64K on a
# loopback port (127.0.0.1, a free port picked here; no persistence), and the same without
# heapsift:
#  - redis-cli's SET/GET/INCRBY/RPUSH/LRANGE/STRLEN answers are the same with and without;
#  - redis-benchmark (bounded: 20,000 requests for each of 7 commands, 8 clients) completes;
#  - `redis-cli shutdown nosave` stops the server with status 0 and then the exit profile
#    exists, is valid, and its top sites make sense: the most bytes are allocated in redis'
#    own allocator wrappers (zmalloc & co.) and the event loop holds most of them.
# Skips (77) when redis-server, redis-cli or redis-benchmark is not installed.
# usage: redis.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" redis
for tool in redis-server redis-cli redis-benchmark; do
    command -v $tool >/dev/null 2>&1 || { echo "SKIP: $tool not installed"; exit 77; }
done
SERVER_PID=""
cleanup() {
    [ -z "$SERVER_PID" ] || kill -9 "$SERVER_PID" 2>/dev/null || true
    rm -rf "$T"
}
trap cleanup EXIT INT TERM

# start MODE DIR: starts redis-server (MODE hs: preloaded) on a free loopback port; sets
# PORT and SERVER_PID. Tries up to 8 ports; returns 1 if none came up. A preloaded try
# that exits (port taken) leaves its own exit profile behind.
start() {
    mode=$1 sdir=$2
    tries=0
    while [ $tries -lt 8 ]; do
        tries=$((tries + 1))
        PORT=$((20000 + ($$ * 7919 + tries * 104729 + $(date +%s) % 1000) % 40000))
        set -- redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
            --daemonize no --dir "$sdir" --logfile "$sdir/redis.log" --protected-mode yes
        if [ "$mode" = hs ]; then
            env LD_PRELOAD="$LIB" HEAPSIFT_RATE=65536 HEAPSIFT_OUT="$sdir/prof.%p.pb.gz" "$@" \
                2>"$sdir/stderr" &
        else
            "$@" 2>"$sdir/stderr" &
        fi
        SERVER_PID=$!
        i=0
        while [ $i -lt 100 ]; do
            if ! kill -0 "$SERVER_PID" 2>/dev/null; then
                wait "$SERVER_PID" 2>/dev/null || true
                SERVER_PID=""
                break
            fi
            [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" = PONG ] && return 0
            sleep 0.1
            i=$((i + 1))
        done
        if [ -n "$SERVER_PID" ]; then
            kill -9 "$SERVER_PID" 2>/dev/null || true
            wait "$SERVER_PID" 2>/dev/null || true
            SERVER_PID=""
            fail "redis-server ($mode) did not answer PING within 10 s"
            show "$sdir/redis.log"
            return 1
        fi
        grep -q 'already in use' "$sdir/redis.log" 2>/dev/null || break
    done
    fail "redis-server ($mode) could not start"
    show "$sdir/redis.log"
    show "$sdir/stderr"
    return 1
}

# stop LABEL: shutdown nosave, then wait (30 s at most) for the server; checks its status
stop() {
    timeout 10 redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
    i=0
    while kill -0 "$SERVER_PID" 2>/dev/null && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        fail "$1: redis-server still running 30 s after shutdown (hang at exit?)"
        kill -9 "$SERVER_PID" 2>/dev/null || true
    fi
    st=0
    wait "$SERVER_PID" || st=$?
    SERVER_PID=""
    [ $st -eq 0 ] || fail "$1: redis-server exited with status $st"
}

# session MODE: a scripted session and the benchmark; answers in $T/MODE.answers
session() {
    dir=$T/$1
    mkdir -p "$dir"
    start "$1" "$dir" || return 1
    SESSION_PID=$SERVER_PID
    cli() { timeout 30 redis-cli -p "$PORT" "$@"; }
    {
        cli SET greeting "hello from heapsift"
        cli SET counter 10
        cli INCRBY counter 32
        cli RPUSH list a b c d e
        cli LPOP list
        cli LRANGE list 0 -1
        awk 'BEGIN { for (i = 0; i < 20000; i++) printf "x" }' | cli -x SET big
        cli STRLEN big
        cli GET greeting
        cli GET counter
    } >"$T/$1.answers" 2>&1
    if ! timeout -k 5 120 redis-benchmark -p "$PORT" -n 20000 -c 8 -q \
        -t set,get,incr,lpush,lpop,sadd,hset >"$T/$1.bench" 2>&1; then
        fail "$1: redis-benchmark failed or hung"
        show "$T/$1.bench" 10
    fi
    n=$(tr '\r' '\n' <"$T/$1.bench" | grep -c 'requests per second' || true)
    [ "$n" -ge 7 ] || { fail "$1: redis-benchmark completed $n of 7 tests"; show "$T/$1.bench" 10; }
    {
        cli GET greeting
        cli GET counter
        cli STRLEN big
    } >>"$T/$1.answers" 2>&1
    stop "$1"
}

session base || finish
session hs || finish
if ! diff "$T/base.answers" "$T/hs.answers" >"$T/answers.diff"; then
    fail "redis-cli's answers differ with heapsift (< without, > with)"
    show "$T/answers.diff"
fi
# The server that served the session: a try that found its port taken also wrote an exit
# profile (a few milliseconds of start-up) into the same directory.
set -- "$T/hs/prof.$SESSION_PID.pb.gz"
if [ ! -e "$1" ]; then
    fail "no exit profile after shutdown (files: $(ls "$T/hs" | tr '\n' ' '))"
    show "$T/hs/stderr" 5
    finish
fi
valid "$1" "exit profile" || finish
if [ "$HAVE_GO" = 1 ]; then
    gotop "$1" alloc_space >"$T/top" 2>&1 || true
else
    "$CLI" top "$1" --sample-type alloc_space --unit B -n 100000 >"$T/top" 2>&1 || true
fi
table <"$T/top" | awk -F '\t' '
    { tot += $2; if ($2 + 0 > best) { best = $2 + 0; top = $1 }
      if ($1 ~ /^(aeMain|aeProcessEvents)$/ && $3 + 0 > c) c = $3 + 0 }
    END { bad = 0
          if (top !~ /^(zmalloc|ztrymalloc|zcalloc|zrealloc|ztryrealloc|zmalloc_usable|ztrycalloc)/) {
              printf "top flat site \"%s\", want one of redis zmalloc wrappers\n", top; bad = 1 }
          if (tot <= 0 || c < tot / 2) {
              printf "the event loop (aeMain) holds %.1f%% of alloc_space, want >= 50%%\n",
                     tot > 0 ? 100 * c / tot : 0; bad = 1 }
          exit bad }' >"$T/why" || { fail "top sites make no sense: $(tr '\n' ' ' <"$T/why")"; show "$T/top" 25; }
finish

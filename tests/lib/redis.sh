# tests/lib/redis.sh: a redis-server for the tests that profile one (attach_redis,
# diagnose_live). Source it after common.sh; it owns the start on a free loopback port,
# the keys file written through redis-cli --pipe and the INFO figures read back.
#   redis_need: 0 when redis-server, redis-cli and redis-benchmark are all installed
#   redis_start [VAR=VALUE...]: starts redis-server in the background under env(1) with
#     the given variables (e.g. LD_PRELOAD), data and log in $T; sets SPID and PORT once
#     it answers PING; up to 8 ports are tried, the files named in $R_CLEAN removed
#     before each (a failed try's port file, say). Fails the test if none answers.
#   redis_used: INFO memory's used_memory, in bytes
#   redis_cmds: INFO stats' total_commands_processed
#   redis_keys FILE PREFIX: 20,000 "SET PREFIX:i <4,000 digits>" commands in redis' wire
#     form, for redis-cli --pipe (~80 MB of values)
#   redis_stop: SHUTDOWN NOSAVE, then waits (30 s bound) for the server to end

redis_need() {
    for r_tool in redis-server redis-cli redis-benchmark; do
        command -v $r_tool >/dev/null 2>&1 || { echo "$r_tool not installed"; return 1; }
    done
}

redis_start() {
    SPID=""
    r_tries=0
    while [ -z "$SPID" ] && [ $r_tries -lt 8 ]; do
        r_tries=$((r_tries + 1))
        for r_f in ${R_CLEAN:-}; do rm -f "$r_f"; done
        PORT=$((20000 + ($$ * 7919 + r_tries * 104729 + $(date +%s) % 1000) % 40000))
        env "$@" redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
            --daemonize no --dir "$T" --logfile "$T/redis.log" >/dev/null 2>"$T/redis.err" &
        SPID=$!
        r_i=0
        while [ $r_i -lt 100 ] && [ "$(redis-cli -p "$PORT" ping 2>/dev/null)" != PONG ]; do
            kill -0 "$SPID" 2>/dev/null || { wait "$SPID" 2>/dev/null || true; SPID=""; break; }
            sleep 0.1
            r_i=$((r_i + 1))
        done
    done
    [ -n "$SPID" ] || { echo "FAIL: redis-server did not start"; show "$T/redis.log"; exit 1; }
}

redis_used() { redis-cli -p "$PORT" info memory | sed -n 's/^used_memory:\([0-9]*\).*/\1/p'; }
redis_cmds() { redis-cli -p "$PORT" info stats | sed -n 's/^total_commands_processed:\([0-9]*\).*/\1/p'; }

redis_keys() {
    awk -v p="$2" 'BEGIN { for (i = 0; i < 20000; i++) printf "SET %s:%d %04000d\r\n", p, i, i }' >"$1"
}

redis_stop() {
    redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
    hs_until 30 "redis-server to stop" '! kill -0 "$SPID" 2>/dev/null' || true
}

#!/bin/sh
# attach_redis: `heapsift attach` to a redis-server that nobody started with a profiler
# (Debian's, on jemalloc: attach hooks jemalloc's malloc in place), while redis-benchmark
# loads it; then 20,000 new keys of 4,000 bytes are written through redis-cli --pipe, and
# `heapsift detach` writes the profile. The profile's in-use bytes (all allocated since the
# attach) must agree with the growth of redis' own INFO memory used_memory over the same
# window within 15% (at --rate 65536, ~80 MB is ~1,300 samples: a relative standard error
# of about 3%, so 15% is 5 sigma; used_memory counts the same blocks by their usable size),
# go tool pprof must read it, the keys must all be there, and the server must go on and
# stop with status 0.
# Skips (77) when redis-server, redis-cli or redis-benchmark is not installed.
# usage: attach_redis.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_redis
. "$(dirname "$0")/../lib/redis.sh"
why=$(redis_need) || { echo "SKIP: $why"; exit 77; }
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: attach is x86-64 only"; exit 77; }
hs_need_go
hs_need_built "$LIB" "$CLI"
SPID="" BPID=""
trap '[ -z "$BPID" ] || kill -9 "$BPID" 2>/dev/null; [ -z "$SPID" ] || kill -9 "$SPID" 2>/dev/null; rm -rf "$T"' EXIT INT TERM

redis_start

redis-benchmark -p "$PORT" -n 300000 -c 8 -q -t set,get >"$T/bench" 2>&1 &
BPID=$!
# attach once the benchmark's commands are arriving (the pings above made at most 100)
hs_until 30 "redis-benchmark's commands" '[ "$(redis_cmds)" -gt 1000 ] 2>/dev/null' || true
"$CLI" attach --rate 65536 -o "$T/r.pb.gz" "$SPID" >"$T/att.out" 2>"$T/att.err" ||
    { echo "FAIL: attach: status $?"; show "$T/att.err"; exit 1; }
grep -q 'hooked in place' "$T/att.err" || { fail "attach did not say what it hooked"; show "$T/att.err"; }
u0=$(redis_used)
redis_keys "$T/keys" attached
redis-cli -p "$PORT" --pipe <"$T/keys" >"$T/pipe" 2>&1 || { fail "redis-cli --pipe"; show "$T/pipe"; }
u1=$(redis_used)
"$CLI" detach "$SPID" >"$T/det.out" 2>"$T/det.err" || { fail "detach: status $?"; show "$T/det.err"; }
kill "$BPID" 2>/dev/null || true
wait "$BPID" 2>/dev/null || true
BPID=""
[ "$(redis-cli -p "$PORT" dbsize)" -ge 20000 ] || fail "the keys are not all there: $(redis-cli -p "$PORT" dbsize)"
[ "$(redis-cli -p "$PORT" get attached:19999)" = "$(printf '%04000d' 19999)" ] || fail "a key's value changed"

if go tool pprof -symbolize=none -top -unit=B -sample_index=inuse_space "$T/r.pb.gz" >"$T/top" 2>&1; then
    got=$(sed -n 's/.*% of \([0-9]*\)B total.*/\1/p' "$T/top")
    grew=$((u1 - u0))
    awk -v got="${got:-0}" -v grew="$grew" 'BEGIN { d = got - grew; if (d < 0) d = -d
            exit !(grew > 40000000 && d <= 0.15 * grew) }' ||
        { fail "in use since the attach: profile $got B, used_memory grew $grew B"; show "$T/top" 12; }
    echo "attach_redis: profile $got B in use, used_memory grew $grew B"
else
    fail "go tool pprof: $(head -3 "$T/top")"
fi
grep -q 'attached at' "$T/top" 2>/dev/null || "$CLI" top "$T/r.pb.gz" | grep -q 'attached at' ||
    fail "the profile does not say when heapsift attached"

redis-cli -p "$PORT" shutdown nosave >/dev/null 2>&1 || true
st=0
wait "$SPID" || st=$?
SPID=""
[ $st -eq 0 ] || { fail "redis-server ended with status $st"; show "$T/redis.log"; }
[ "$FAILS" -eq 0 ] && echo "attach_redis: ok"
exit $((FAILS > 0))

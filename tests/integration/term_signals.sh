#!/bin/sh
# term_signals: a server stopped by SIGINT, SIGTERM or SIGHUP writes its exit profile
# (termsig.c; docs/library.md's first example promises one). tests/programs/termsrv.c holds
# 64 MiB at term_site and waits; for each of the three signals:
#  - default action: the process dies of the signal (status 128+N, as without heapsift)
#    and its profile holds term_site's 64 MiB in use (read by go tool pprof);
#  - its own handler, set at start or 200 ms after start (after heapsift's): the handler
#    runs (status 3) and the profile of its exit is written;
#  - ignored: the signal changes nothing (status 0 when it ends by itself);
#  - HEAPSIFT_DUMP_ON_TERM=0: dies of the signal, no profile.
# Also: under heapsift, python3 still sees SIG_DFL for SIGTERM and its own handler for
# SIGINT (CPython sets KeyboardInterrupt's handler only over SIG_DFL).
# usage: term_signals.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" term_signals
hs_need_go
PROG=$BUILD/programs/termsrv
hs_need_built "$PROG"

# run MODE SIG [ENV...]: starts termsrv, waits for READY (and "late" when the mode says
# so), sends SIG; sets ST (the status) and OUT (the profile's path)
run() {
    mode=$1 sig=$2
    shift 2
    rm -f "$T/ready" "$T"/p.*.pb.gz
    env "$@" HEAPSIFT_OUT="$T/p.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" "$mode" "$sig" "$T/ready" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    until [ -f "$T/ready" ] && { [ "$mode" != late ] || grep -q late "$T/ready"; }; do
        i=$((i + 1))
        [ $i -le 300 ] || { fail "$mode $sig: not ready after 30 s"; kill -9 $pid; break; }
        sleep 0.1
    done
    kill -"$sig" $pid 2>/dev/null || true
    ST=0
    wait $pid || ST=$?
    OUT=$(ls "$T"/p.*.pb.gz 2>/dev/null | head -n 1)
}

# held PROFILE WHAT: term_site's in-use bytes are 64 MiB within sampling bounds
held() {
    b=$(gotop "$1" inuse_space 2>"$T/gerr" | table | awk -F'\t' '$1 == "term_site" { print $2 }')
    [ -n "$b" ] || { fail "$2: no term_site row in go tool pprof -top"; show "$T/gerr"; return; }
    # 64 MiB at the default rate: 128 samples expected; 5 sigma is about 45%
    awk -v b="$b" 'BEGIN { exit !(b > 0.55 * 67108864 && b < 1.45 * 67108864) }' ||
        fail "$2: term_site holds $b bytes, want about 67108864"
}

for sig in 2 15 1; do
    run default $sig
    [ "$ST" -eq $((128 + sig)) ] || fail "default, signal $sig: status $ST, want $((128 + sig))"
    if [ -n "$OUT" ]; then held "$OUT" "default, signal $sig"; else
        fail "default, signal $sig: no exit profile"; show "$T/err"; fi

    for mode in own late; do
        run $mode $sig
        [ "$ST" -eq 3 ] || fail "$mode handler, signal $sig: status $ST, want 3 (the program's handler)"
        [ -n "$OUT" ] || fail "$mode handler, signal $sig: no exit profile"
    done

    run ignore $sig
    [ "$ST" -eq 0 ] || fail "ignored signal $sig: status $ST, want 0"

    run default $sig HEAPSIFT_DUMP_ON_TERM=0
    [ "$ST" -eq $((128 + sig)) ] || fail "DUMP_ON_TERM=0, signal $sig: status $ST"
    [ -z "$OUT" ] || fail "DUMP_ON_TERM=0, signal $sig: a profile was written"
    echo "signal $sig: checked"
done

py=$(LD_PRELOAD="$LIB" HEAPSIFT_OUT="$T/py.pb.gz" python3 -c \
    'import signal; print(signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT).__name__)')
[ "$py" = "0 default_int_handler" ] || fail "python3 sees '$py', want '0 default_int_handler'"

[ "$FAILS" -eq 0 ] && echo "term_signals: ok"
exit $((FAILS > 0))

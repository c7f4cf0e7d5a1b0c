# Shared by the attach_*.sh tests (sourced after common.sh): start tests/programs/
# attach_target in the background and drive its rounds.

# at_start [ARGS...]: starts attach_target "$T/d" ARGS, its stdout in $T/out, stderr in
# $T/err, its exit status later in $T/status; waits for "ready"; sets TPID.
at_start() {
    mkdir -p "$T/d"
    ( "$BUILD/programs/attach_target" "$T/d" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
    _i=0
    while ! grep -q '^ready$' "$T/out" 2>/dev/null; do
        _i=$((_i + 1)); [ $_i -lt 500 ] || { echo "FAIL: attach_target never ready" >&2; exit 1; }
        sleep 0.01
    done
    TPID=$(pgrep -f "attach_target $T/d" | head -1)
    [ -n "$TPID" ] || { echo "FAIL: no attach_target pid" >&2; exit 1; }
}

# at_round N: runs round N and waits for its "round N done".
at_round() {
    : >"$T/d/go.$1"
    _i=0
    while ! grep -q "^round $1 done\$" "$T/out"; do
        _i=$((_i + 1)); [ $_i -lt 1000 ] || { fail "round $1 never done"; return 1; }
        sleep 0.01
    done
}

# at_end: ends the target and waits for its exit status (in $TSTATUS).
at_end() {
    : >"$T/d/end"
    _i=0
    while [ ! -s "$T/status" ]; do
        _i=$((_i + 1)); [ $_i -lt 1000 ] || { fail "attach_target did not exit"; kill -9 "$TPID"; break; }
        sleep 0.01
    done
    TSTATUS=$(cat "$T/status" 2>/dev/null || echo none)
}

# at_libs PID: how many mappings of libheapsift the process has.
at_libs() {
    grep -c 'libheapsift' "/proc/$1/maps" || true
}

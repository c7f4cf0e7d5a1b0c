# Shared by the attach_*.sh tests (sourced after common.sh): start tests/programs/
# attach_target in the background and drive its rounds.

# at_start [ARGS...]: starts attach_target "$T/d" ARGS (or the program $AT_PROG), its
# stdout in $T/out, stderr in $T/err, its exit status later in $T/status; waits (30 s at
# most) for "ready"; sets TPID, killed when the test exits.
at_start() {
    _prog=${AT_PROG:-$BUILD/programs/attach_target}
    mkdir -p "$T/d"
    rm -f "$T/status" "$T/d"/go.* "$T/d/end"
    ( set +e; "$_prog" "$T/d" "$@" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
    hs_until 30 "$(basename "$_prog") ready" "grep -q '^ready\$' '$T/out' 2>/dev/null" ||
        { show "$T/err"; exit 1; }
    TPID=$(pgrep -f "$(basename "$_prog") $T/d" | head -1)
    [ -n "$TPID" ] || { echo "FAIL: no attach_target pid" >&2; exit 1; }
    # A test that ends early (a failure under set -e, a signal) leaves no target running.
    trap 'kill -9 "$TPID" 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM
}

# at_round N: runs round N and waits (30 s at most) for its "round N done".
at_round() {
    : >"$T/d/go.$1"
    hs_until 30 "round $1 done" "grep -q '^round $1 done\$' '$T/out'"
}

# at_end: ends the target and waits (30 s at most) for its exit status (in $TSTATUS).
at_end() {
    : >"$T/d/end"
    hs_until 30 "attach_target's exit" '[ -s "$T/status" ]' || kill -9 "$TPID" 2>/dev/null || true
    TSTATUS=$(cat "$T/status" 2>/dev/null || echo none)
}

# at_libs PID: how many mappings of libheapsift the process has.
at_libs() {
    grep -c 'libheapsift' "/proc/$1/maps" || true
}

# at_expect STATUS PATTERN LABEL -- ARGS...: runs $CLI ARGS (within 120 s: a hang fails);
# its status must be STATUS and its stderr one line matching PATTERN (grep -E).
at_expect() {
    _want=$1 _pat=$2 _label=$3
    shift 4
    _rc=0; timeout 120 "$CLI" "$@" >"$T/o" 2>"$T/e" || _rc=$?
    [ "$_rc" != 124 ] || fail "$_label: heapsift $1 did not end within 120 s"
    [ "$_rc" = "$_want" ] || { fail "$_label: status $_rc, not $_want"; show "$T/e"; }
    grep -Eq "$_pat" "$T/e" || { fail "$_label: no '$_pat' message"; show "$T/e"; }
    [ "$(wc -l <"$T/e")" = 1 ] || { fail "$_label: not one line on stderr"; show "$T/e"; }
}

# at_check_profile PROFILE LABEL: each site's alloc and inuse figures in PROFILE (one
# round at rate 1) equal the truth in $T/expect (attach_target --expect), through go tool
# pprof and heapsift top, and in the stacks as recorded (heapsift top --no-drop-frames: no
# allocator frame kept as a leaf); heapsift top's header says where heapsift's knowledge
# starts.
at_check_profile() {
    for st in alloc_objects alloc_space inuse_objects inuse_space; do
        col=$(case $st in alloc_objects) echo 3 ;; alloc_space) echo 4 ;; inuse_objects) echo 5 ;; *) echo 6 ;; esac)
        gotop "$1" $st >"$T/go.$st" 2>&1 || { fail "$2: go tool pprof $st"; show "$T/go.$st"; continue; }
        table <"$T/go.$st" >"$T/go.$st.tab"
        compare "$2 go pprof $st" "$T/expect" "$T/go.$st.tab" $col 0 || { fail "$2: go tool pprof $st"; show "$T/go.$st"; }
        hstop "$1" $st >"$T/hs.$st" 2>&1 || { fail "$2: heapsift top $st"; continue; }
        table <"$T/hs.$st" >"$T/hs.$st.tab"
        compare "$2 heapsift top $st" "$T/expect" "$T/hs.$st.tab" $col 0 || { fail "$2: heapsift top $st"; show "$T/hs.$st"; }
        # the stacks as recorded, without the profile's drop_frames: no allocator frame left
        "$CLI" top "$1" --no-drop-frames --sample-type $st --unit B >"$T/raw.$st" 2>&1 ||
            { fail "$2: heapsift top --no-drop-frames $st"; continue; }
        table <"$T/raw.$st" >"$T/raw.$st.tab"
        compare "$2 heapsift top --no-drop-frames $st" "$T/expect" "$T/raw.$st.tab" $col 0 ||
            { fail "$2: heapsift top --no-drop-frames $st"; show "$T/raw.$st"; }
    done
    "$CLI" top "$1" | sed '/^Type:/q' | grep -q '^attach: attached at .*allocations made before it are not seen' ||
        fail "$2: heapsift top's header has no 'attach: attached at' line"
}

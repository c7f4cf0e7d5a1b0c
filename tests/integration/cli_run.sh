#!/bin/sh
# cli_run: `heapsift run` passes the program's exit status and output through, writes the
# profile where -o (or the default heapsift.%p.pb.gz in the cwd) says and tells on stderr
# where it went, honours --rate (the profile's period; 0 = no profile), --seed and --depth,
# reports a missing program shell-style with status 127, passes SIGTERM on to the program
# and makes a relative -o absolute (a program that changes directory still writes there).
# usage: cli_run.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" cli-run
PROG=$BUILD/programs/sites
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"
unset HEAPSIFT_OUT HEAPSIFT_RATE HEAPSIFT_SEED HEAPSIFT_DEPTH HEAPSIFT_UNWIND HEAPSIFT_CHILDREN \
    LD_PRELOAD 2>/dev/null || true

# period FILE: the profile's period, from `go tool pprof -raw`
period() {
    go tool pprof -symbolize=none -raw "$1" 2>/dev/null | sed -n 's/^Period: \([0-9]*\)$/\1/p'
}
# only_file DIR: sets F to the one file in DIR, or fails the test and empties F
only_file() {
    n=$(find "$1" -mindepth 1 -maxdepth 1 | wc -l)
    F=""
    if [ "$n" -ne 1 ]; then
        fail "want exactly one file in $1, got $n: $(find "$1" -mindepth 1 -maxdepth 1 | tr '\n' ' ')"
        return 0
    fi
    F=$(find "$1" -mindepth 1 -maxdepth 1)
}

# 1. Default output in the cwd, exit status 3 and stdout passed through, "where" on stderr.
mkdir -p "$T/cwd"
rc=0
(cd "$T/cwd" && "$CLI" run -- "$PROG" --say hello-from-sites --exit 3) >"$T/1.out" 2>"$T/1.err" ||
    rc=$?
[ $rc -eq 3 ] || { fail "heapsift run -- sites --exit 3: status $rc, want 3"; show "$T/1.err" 10; }
[ "$(cat "$T/1.out")" = hello-from-sites ] ||
    { fail "program's stdout not passed through: want hello-from-sites, got:"; show "$T/1.out" 5; }
only_file "$T/cwd"
f=$F
if [ -n "$f" ]; then
    case "$(basename "$f")" in
    heapsift.[0-9]*.pb.gz) ;;
    *) fail "default output name: want heapsift.PID.pb.gz in the cwd, got $(basename "$f")" ;;
    esac
    grep -q "$(basename "$f")" "$T/1.err" ||
        { fail "stderr does not say where the profile went ($(basename "$f"))"; show "$T/1.err" 10; }
    p=$(period "$f")
    [ "$p" = 524288 ] || fail "default rate: period ${p:-unreadable}, want 524288"
fi

# 2. -o PATTERN and --rate 1: exact values, period 1, the path on stderr
mkdir -p "$T/o"
rc=0
"$CLI" run -o "$T/o/out.%p.pb.gz" --rate 1 -- "$PROG" >"$T/2.out" 2>"$T/2.err" || rc=$?
[ $rc -eq 0 ] || { fail "heapsift run -o ... --rate 1 -- sites: status $rc"; show "$T/2.err" 10; }
only_file "$T/o"
f=$F
if [ -n "$f" ]; then
    case "$(basename "$f")" in
    out.[0-9]*.pb.gz) ;;
    *) fail "-o $T/o/out.%p.pb.gz: got $(basename "$f")" ;;
    esac
    grep -q "$f" "$T/2.err" || { fail "stderr does not name $f"; show "$T/2.err" 10; }
    p=$(period "$f")
    [ "$p" = 1 ] || fail "--rate 1: period ${p:-unreadable}, want 1"
    got=$(go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 -sample_index=inuse_space "$f" 2>&1 |
        awk '$NF == "site_malloc" || $NF ~ /^site_malloc\(/ { sub(/B$/, "", $1); print $1 }')
    [ "$got" = 16384000 ] || fail "--rate 1: site_malloc inuse_space ${got:-absent}, want 16384000"
fi

# 3. --rate 4096 --seed N: period 4096, and the same seed gives the same profile values.
for i in 1 2; do
    mkdir -p "$T/r$i"
    rc=0
    "$CLI" run -o "$T/r$i/p.pb.gz" --rate 4096 --seed 42 -- "$PROG" >/dev/null 2>"$T/3.err" ||
        rc=$?
    [ $rc -eq 0 ] || { fail "heapsift run --rate 4096 --seed 42: status $rc"; show "$T/3.err" 10; }
done
if [ -s "$T/r1/p.pb.gz" ] && [ -s "$T/r2/p.pb.gz" ]; then
    p=$(period "$T/r1/p.pb.gz")
    [ "$p" = 4096 ] || fail "--rate 4096: period ${p:-unreadable}, want 4096"
    for i in 1 2; do
        go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 -sample_index=alloc_space \
            "$T/r$i/p.pb.gz" 2>/dev/null | awk '$NF ~ /^site_/' >"$T/r$i.top"
    done
    [ -s "$T/r1.top" ] || fail "--rate 4096: no site_* function in the profile"
    cmp -s "$T/r1.top" "$T/r2.top" ||
        { fail "--seed 42 twice: site values differ"; show "$T/r1.top" 15; show "$T/r2.top" 15; }
else
    fail "--rate 4096 -o $T/rN/p.pb.gz: no profile written"
fi

# 3b. --rate 0 turns sampling off: no profile, status passed through. --depth 3: no stack
# longer than 3 frames (return addresses: inlined functions expanded by the symbolizer are
# not counted), and the leaf (the caller of malloc) is kept.
mkdir -p "$T/off"
rc=0
"$CLI" run -o "$T/off/p.pb.gz" --rate 0 -- "$PROG" --exit 4 >/dev/null 2>"$T/off.err" || rc=$?
[ $rc -eq 4 ] || { fail "heapsift run --rate 0 -- sites --exit 4: status $rc, want 4"; show "$T/off.err" 5; }
[ -z "$(find "$T/off" -mindepth 1)" ] || fail "--rate 0: a profile was written: $(find "$T/off" -mindepth 1)"
mkdir -p "$T/depth"
rc=0
"$CLI" run -o "$T/depth/p.pb.gz" --rate 1 --depth 3 -- "$PROG" >/dev/null 2>"$T/depth.err" || rc=$?
[ $rc -eq 0 ] || { fail "heapsift run --depth 3: status $rc"; show "$T/depth.err" 5; }
if [ -s "$T/depth/p.pb.gz" ]; then
    go tool pprof -symbolize=none -traces "$T/depth/p.pb.gz" >"$T/depth.traces" 2>&1 || true
    awk '/^-+\+-+/ { if (n > max) max = n; n = 0; on = 1; next }
         !on || $1 ~ /:$/ || / \(inline\)$/ { next }
         NF >= 1 { n++ }
         END { if (n > max) max = n; if (max > 3) { print "deepest stack: " max " frames"; exit 1 } }' \
        "$T/depth.traces" >&2 || fail "--depth 3: stacks deeper than 3 frames"
    grep -Eq '^ *[^ ]+ +site_malloc$' "$T/depth.traces" ||
        { fail "--depth 3: site_malloc is not the leaf of any stack"; show "$T/depth.traces" 20; }
else
    fail "--depth 3: no profile written"
fi

# 4. A missing program: status 127 and a shell-like "CMD: command not found" line.
rc=0
"$CLI" run -- hs-no-such-command-xyz arg >"$T/4.out" 2>"$T/4.err" || rc=$?
[ $rc -eq 127 ] || fail "heapsift run -- hs-no-such-command-xyz: status $rc, want 127"
grep -q 'hs-no-such-command-xyz.*not found' "$T/4.err" ||
    { fail "missing program: want 'hs-no-such-command-xyz: command not found' on stderr, got:"; show "$T/4.err" 5; }
[ "$(wc -l <"$T/4.err")" -eq 1 ] || { fail "missing program: want one line on stderr, got:"; show "$T/4.err" 5; }
rc=0
"$CLI" run -- "$T/no/such/prog" >"$T/5.out" 2>"$T/5.err" || rc=$?
[ $rc -eq 127 ] || fail "heapsift run -- $T/no/such/prog: status $rc, want 127"
grep -q "$T/no/such/prog" "$T/5.err" || { fail "missing path: stderr does not name it:"; show "$T/5.err" 5; }

# 6. SIGTERM sent to `heapsift run` alone (a supervisor stopping it) reaches the program,
# which decides: here it exits 7, and that is run's status (the previous run died of it and
# left the program running).
rc=0
"$CLI" run -q -- sh -c 'trap "exit 7" TERM; echo started; while :; do sleep 0.05; done' \
    >"$T/6.out" 2>"$T/6.err" &
runpid=$!
# the signal goes only once the program says its trap is set
hs_until 30 "SIGTERM to heapsift run: the program's 'started'" "grep -q '^started\$' '$T/6.out'" || true
kill -TERM "$runpid"
wait "$runpid" || rc=$?
[ $rc -eq 7 ] || { fail "SIGTERM to heapsift run: status $rc, want the program's 7"; show "$T/6.err" 5; pkill -f 'trap "exit 7" TERM' || true; }

# 6b. The program killed by a signal: run says so, and claims nothing about the profile
# that the summary does not show. SIGTERM (heapsift's handler in place: the exit profile
# is written), SIGKILL (its live heap recovered from its spool) and SIGTERM at --rate 0
# (sampling off: "no profile was written").
for sig in TERM KILL OFF; do
    rate=1; [ "$sig" != OFF ] || rate=0
    rm -rf "$T/k$sig" && mkdir -p "$T/k$sig"
    "$CLI" run --rate $rate -o "$T/k$sig/p.%p.pb.gz" -- sh -c 'echo started; exec sleep 300' >"$T/k$sig.out" 2>"$T/k$sig.err" &
    runpid=$!
    hs_until 30 "run -- sleep: the program's start" "grep -q '^started\$' '$T/k$sig.out'" || true
    # the shell says "started" before its exec: wait for the exec'd sleep, run's child (not
    # another test's: the suite may run twice at once)
    hs_until 30 "run -- sleep: sleep exec'd" "pgrep -P $runpid -f '^sleep 300\$' >/dev/null" || true
    kpid=$(pgrep -P "$runpid" -f '^sleep 300$' | head -n 1)
    # the exec'd sleep, with heapsift's SIGTERM handler in place (SigCgt bit 15); at rate
    # 0 heapsift is off and sets none: the library's start is waited for by its maps
    if [ "$sig" = OFF ]; then
        hs_until 30 "sleep with the library" "grep -q libheapsift /proc/$kpid/maps" || true
    else
        hs_until 30 "sleep catching SIGTERM" \
            "[ \$((0x\$(awk '/^SigCgt:/ { print \$2 }' /proc/$kpid/status 2>/dev/null || echo 0) & 0x4000)) != 0 ]" || true
    fi
    kill -s "$( [ "$sig" = OFF ] && echo TERM || echo "$sig")" "$kpid"
    rc=0; wait "$runpid" || rc=$?
    n=$(ls "$T/k$sig" | grep -c '\.pb\.gz$' || true)
    case $sig in TERM | OFF) want=143 num=15 ;; *) want=137 num=9 ;; esac
    files=1; [ "$sig" != OFF ] || files=0
    [ $rc -eq $want ] || fail "run -- sleep, SIG$sig: status $rc, want $want"
    [ "$n" = "$files" ] || fail "run -- sleep, SIG$sig: $n profiles, want $files"
    grep -q "killed by signal $num " "$T/k$sig.err" || { fail "run, SIG$sig: not said"; show "$T/k$sig.err" 5; }
    ! grep -q 'no profile at exit' "$T/k$sig.err" || { fail "run, SIG$sig: 'no profile at exit' said"; show "$T/k$sig.err" 5; }
    if [ "$files" = 1 ]; then
        grep -q '^heapsift: 1 profile written' "$T/k$sig.err" || { fail "run, SIG$sig: the summary does not list its profile"; show "$T/k$sig.err" 5; }
    else
        grep -q '^heapsift: no profile was written$' "$T/k$sig.err" || { fail "run, rate 0: not said that no profile was written"; show "$T/k$sig.err" 5; }
    fi
    [ "$sig" != KILL ] || grep -q 'recovered from its spool' "$T/k$sig.err" || { fail "run, SIGKILL: no recovery said"; show "$T/k$sig.err" 5; }
done

# 7. -o relative: made absolute by run, so a program that changes directory before exec
# writes where the command line meant.
mkdir -p "$T/cwd7/sub"
(cd "$T/cwd7" && "$CLI" run -q -o rel.%p.pb.gz -- sh -c "cd sub && exec '$PROG'") >"$T/7.out" 2>"$T/7.err" ||
    fail "run -o rel.%p.pb.gz with cd: status $?"
[ -n "$(ls "$T/cwd7" | grep '^rel\.[0-9]*\.pb\.gz$')" ] && [ -z "$(ls "$T/cwd7/sub")" ] ||
    { fail "run -o rel.%p.pb.gz with cd: files in cwd: $(ls "$T/cwd7" | tr '\n' ' '), in sub: $(ls "$T/cwd7/sub" | tr '\n' ' ')"; show "$T/7.err" 5; }

if [ $FAILS -ne 0 ]; then
    echo "cli_run: $FAILS check(s) failed" >&2
    exit 1
fi
echo "cli_run: ok"

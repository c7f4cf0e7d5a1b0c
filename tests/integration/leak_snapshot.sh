#!/bin/sh
# leak_snapshot: the leak check scans a fork's copy-on-write snapshot, the threads paused
# only for the stop and the fork (src/preload/leaks/snapshot.c, issue 43).
# - Same answers: reachprog's heap (tests/programs/reachprog.c: a spinning thread's
#   register, a blocked thread's stack, an mmap, ...) checked by heapsift_leak_check and at
#   exit, in snapshot mode and with HEAPSIFT_LEAKS_SNAPSHOT=0 (stop-the-world): the same
#   bytes per site and class in both, and each profile's comment names its mode. The exit
#   report scans in place in both (no thread needs to go on at exit) and says so.
# - The snapshot's instant: snapprog change (HEAPSIFT_TEST_SNAPSHOT's fifos stage it)
#   drops a pointer, unhides another and frees a block after the snapshot and before the
#   child scans: the labels are those of the snapshot.
# - Fallbacks, said in the comment: a seccomp filter refusing fork (EPERM), a
#   MADV_DONTFORK mapping holding the only pointer to a block (which stays reachable), a
#   MADV_WIPEONFORK one likewise (zeros in a fork); heapsift's own wipe-on-fork pages
#   (its owner tokens) take no snapshot away: every other mode checks a snapshot was used.
# - The program's own SIGCHLD handler and waitpid(-1) see nothing of the snapshot's child;
#   with SIGCHLD ignored the check still answers; heapsift run --leaks-stop-world.
# usage: leak_snapshot.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" leak-snapshot
REACH=$BUILD/programs/reachprog
SNAP=$BUILD/programs/snapprog
hs_need_go
hs_need_built "$LIB" "$CLI" "$REACH" "$SNAP"

# run NAME [VAR=VALUE...] -- ARGS: at rate 1 with the leak report; $T/NAME.out, .err, .rc
run() {
    name=$1
    shift
    set +e
    env HEAPSIFT_RATE=1 HEAPSIFT_LEAKS=1 HEAPSIFT_LEAKS_MAX=0 HEAPSIFT_OUT="$T/$name.exit.pb.gz" \
        LD_PRELOAD="$LIB" "$@" >"$T/$name.out" 2>"$T/$name.err"
    echo $? >"$T/$name.rc"
    set -e
}

# labels NAME FILE: "SITE CLASS BYTES" for every SITE of $T/NAME.out, from FILE's labels
labels() {
    for class in no yes; do
        go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 \
            -sample_index=inuse_space -tagfocus "reachable=$class" "$2" 2>/dev/null | table >"$T/$1.$class"
    done
    awk -F '\t' 'FILENAME ~ /out$/ { split($0, e, " "); if (e[1] == "SITE") want[e[2]] = 1; next }
        { cls = FILENAME ~ /no$/ ? "unreachable" : "reachable"; sub(/\(.*$/, "", $1)
          if ($1 in want) print $1, cls, $3 + 0 }' "$T/$1.out" "$T/$1.no" "$T/$1.yes" | sort
}

# comment FILE: the profile's line on how the leak check was made
comment() {
    go tool pprof -comments "$1" 2>/dev/null | grep '^leak check: ' || true
}

# (c) The same heap in both modes: per-site labels of the check and of the exit report.
run snap "$REACH" check "$T/snap.pb.gz"
run stop HEAPSIFT_LEAKS_SNAPSHOT=0 "$REACH" check "$T/stop.pb.gz"
for m in snap stop; do
    grep -q '^CHECK 0$' "$T/$m.out" || { fail "$m: heapsift_leak_check did not answer 0"; show "$T/$m.err"; }
done
labels snap "$T/snap.pb.gz" >"$T/snap.labels"
labels stop "$T/stop.pb.gz" >"$T/stop.labels"
[ "$(wc -l <"$T/snap.labels")" -ge 13 ] || { fail "snapshot check: too few labelled sites"; show "$T/snap.labels"; }
diff "$T/stop.labels" "$T/snap.labels" >"$T/labels.diff" ||
    { fail "leak check: labels differ between stop-the-world (<) and snapshot (>)"; show "$T/labels.diff"; }
comment "$T/snap.pb.gz" | grep -q '^leak check: snapshot (fork), paused [0-9.]* ms (fork [0-9.]* ms): the labels are the heap as it was at the snapshot$' ||
    { fail "snapshot check: comment"; comment "$T/snap.pb.gz" >&2; }
comment "$T/stop.pb.gz" | grep -q '^leak check: stop-the-world, paused [0-9.]* ms (no snapshot: HEAPSIFT_LEAKS_SNAPSHOT=0)$' ||
    { fail "stop-the-world check: comment"; comment "$T/stop.pb.gz" >&2; }
for m in snap stop; do
    grep '^heapsift:   reachability: ' "$T/$m.err" >"$T/$m.report"
done
diff "$T/stop.report" "$T/snap.report" >"$T/report.diff" ||
    { fail "exit report: reachability lines differ between stop-the-world (<) and snapshot (>)"; show "$T/report.diff"; }
grep -q '^heapsift: leak check: stop-the-world, paused [0-9.]* ms (no snapshot: at exit, the program is ending)$' "$T/snap.err" ||
    { fail "exit report: not scanned in place at exit"; show "$T/snap.err"; }

# (a) Changed right after the snapshot: the scan sees the snapshot's heap.
mkfifo "$T/f.taken" "$T/f.go"
# (bounded by timeout, which runs outside heapsift: the hook is each process's first scan)
set +e
timeout 120 env HEAPSIFT_RATE=1 HEAPSIFT_TEST_SNAPSHOT="$T/f" LD_PRELOAD="$LIB" \
    "$SNAP" change "$T/change.pb.gz" "$T/f" >"$T/change.out" 2>"$T/change.err"
set -e
grep -q '^CHECK 0$' "$T/change.out" || { fail "change: no answer 0"; show "$T/change.out"; show "$T/change.err"; }
labels change "$T/change.pb.gz" >"$T/change.labels"
printf 'kept_then_lost reachable 2000\nlost_then_kept unreachable 3008\n' >"$T/change.want"
diff "$T/change.want" "$T/change.labels" >"$T/change.diff" ||
    { fail "change after the snapshot: labels are not the snapshot's (< want, > got)"; show "$T/change.diff"; }

# (b) Fallbacks: fork refused by seccomp; a MADV_DONTFORK or MADV_WIPEONFORK mapping
# holding a pointer.
for m in seccomp dontfork wipeonfork; do
    run "$m" "$SNAP" "$m" "$T/$m.pb.gz"
    grep -q '^CHECK 0$' "$T/$m.out" || { fail "$m: no answer 0"; show "$T/$m.out"; show "$T/$m.err"; continue; }
    labels "$m" "$T/$m.pb.gz" >"$T/$m.labels"
    awk '$1 == "SITE" { print $2, $3, $4 }' "$T/$m.out" | sort >"$T/$m.want"
    diff "$T/$m.want" "$T/$m.labels" >"$T/$m.diff" ||
        { fail "$m: labels differ from the truth (< want, > got)"; show "$T/$m.diff"; }
done
comment "$T/seccomp.pb.gz" | grep -q '^leak check: stop-the-world, paused [0-9.]* ms (no snapshot: fork refused: Operation not permitted)$' ||
    { fail "seccomp: the comment does not say fork was refused"; comment "$T/seccomp.pb.gz" >&2; }
comment "$T/dontfork.pb.gz" | grep -q '^leak check: stop-the-world, .*(no snapshot: MADV_DONTFORK memory at 0x[0-9a-f]*-0x[0-9a-f]* (4 KiB) would be missing from a fork)$' ||
    { fail "dontfork: the comment does not say why"; comment "$T/dontfork.pb.gz" >&2; }
comment "$T/wipeonfork.pb.gz" | grep -q '^leak check: stop-the-world, .*(no snapshot: MADV_WIPEONFORK memory at 0x[0-9a-f]*-0x[0-9a-f]* (4 KiB) would read as zeros in a fork)$' ||
    { fail "wipeonfork: the comment does not say why"; comment "$T/wipeonfork.pb.gz" >&2; }

# (d) The program's SIGCHLD and waitpid(-1) see nothing of the snapshot's child.
run sigchld "$SNAP" sigchld "$T/sigchld.pb.gz"
printf 'CHECK 0\nSIGCHLD 0\nWAITED ok\nECHILD yes\n' >"$T/sigchld.want"
diff "$T/sigchld.want" "$T/sigchld.out" >"$T/sigchld.diff" ||
    { fail "sigchld: the program saw the snapshot's child (< want, > got)"; show "$T/sigchld.diff"; show "$T/sigchld.err"; }
comment "$T/sigchld.pb.gz" | grep -q '^leak check: snapshot (fork)' || fail "sigchld: no snapshot taken"
run sigign "$SNAP" sigign "$T/sigign.pb.gz"
printf 'CHECK 0\nSIGCHLD 0\nECHILD yes\n' >"$T/sigign.want"
diff "$T/sigign.want" "$T/sigign.out" >"$T/sigign.diff" ||
    { fail "sigign: (< want, > got)"; show "$T/sigign.diff"; show "$T/sigign.err"; }
comment "$T/sigign.pb.gz" | grep -q '^leak check: snapshot (fork)' || fail "sigign: no snapshot taken"

# heapsift run --leaks-stop-world: the exit report says stop-the-world and why.
set +e
"$CLI" run -q --rate 1 --leaks 1 --leaks-stop-world -o "$T/cli.pb.gz" -- "$REACH" kept >/dev/null 2>"$T/cli.err"
set -e
grep -q '^heapsift: leak check: stop-the-world, paused [0-9.]* ms (no snapshot: HEAPSIFT_LEAKS_SNAPSHOT=0)$' "$T/cli.err" ||
    { fail "heapsift run --leaks-stop-world: no stop-the-world line"; show "$T/cli.err"; }

[ "$FAILS" -eq 0 ] && echo "leak_snapshot: ok (same labels in both modes; the snapshot's instant; seccomp, MADV_DONTFORK and MADV_WIPEONFORK fallbacks; SIGCHLD and waitpid(-1) untouched)"
exit $((FAILS > 0))

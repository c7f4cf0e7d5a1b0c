#!/bin/sh
# sandbox_spool: issue 39's sandboxed processes, on a program of our own that sandboxes
# itself after start as a browser's content process does (tests/programs/sandboxed.c: a
# TSYNC seccomp filter refusing clone, unshare, open, openat, rename, unlink, getgroups,
# process_vm_readv..., with EPERM or, with --trap, SIGSYS and a Firefox-like log line per
# refused call). At HEAPSIFT_RATE=1:
#  - under `heapsift run`, with and without a fork server parent (--fork) and with both
#    refusals, the process's profile is recovered from its rescue spool, at the path it
#    would have written: inuse_space exactly before_filter 10000, in_thread 15000,
#    after_filter 14000 (and before_fork 12000 with --fork, in the parent's profile as
#    well), freed_after absent, read by go tool pprof and by heapsift top alike; run says
#    which process was recovered and why; the profile's comment says so; no violation line
#    (no refused call made by heapsift), no "cannot" line, no spool left behind;
#  - `heapsift run -q`: the same profile, and nothing at all on stderr;
#  - preloaded by hand without a spool: the profile is lost and exactly one line says so;
#  - preloaded with HEAPSIFT_SPOOL: the spool stays, `heapsift recover` gives the figures;
#  - a raw clone's child (--clone), with spares: its profile from spare 0, exited or
#    killed, exactly before_fork 12000 and in_clone 30000; without: one line says it is lost;
#    as root, the same with parent and child each the init of a PID namespace (pid 1 both).
# usage: sandbox_spool.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sandbox_spool
hs_need_go
PROG=$BUILD/programs/sandboxed
hs_need_built "$PROG" "$LIB" "$CLI"
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the test program's filter is written for x86-64"; exit 77; }

# flat FILE NAME READER: NAME's flat inuse_space in bytes (0 when absent), read by go tool
# pprof (READER go) or heapsift top (READER hs).
flat() {
    if [ "$3" = go ]; then gotop "$1" inuse_space; else hstop "$1" inuse_space; fi 2>/dev/null |
        table | awk -F '\t' -v n="$2" '$1 == n { v = $2 } END { print v + 0 }'
}

# expect FILE LABEL NAME=BYTES...: each NAME's flat inuse_space, by both readers.
expect() {
    f=$1 label=$2
    shift 2
    for kv in "$@"; do
        for r in go hs; do
            got=$(flat "$f" "${kv%%=*}" $r)
            [ "$got" = "${kv#*=}" ] || fail "$label: ${kv%%=*} $got B ($r), want ${kv#*=}"
        done
    done
}

OWN="before_filter=10000 in_thread=15000 after_filter=14000 freed_after=0"

# no_noise LABEL FILE: no violation line, no "cannot" line of heapsift's.
no_noise() {
    if grep -E 'Sandbox: seccomp sandbox violation|heapsift: .*cannot|is lost' "$2" >"$T/noise"; then
        fail "$1: unexpected lines on stderr"
        show "$T/noise"
    fi
}

# under_run NAME ARGS...: the program under heapsift run, profiles in T/NAME, spools and
# report in T/NAME/tmp.
under_run() {
    name=$1
    shift
    d=$T/$name
    mkdir -p "$d/tmp"
    st=0
    TMPDIR=$d/tmp "$CLI" run --rate 1 -o "$d/p.%p.pb.gz" -- "$PROG" "$@" >"$d/out" 2>"$d/err" || st=$?
    [ "$st" = 0 ] || { fail "$name: status $st"; show "$d/err"; }
    [ -z "$(ls -A "$d/tmp")" ] || fail "$name: left in TMPDIR: $(ls "$d/tmp" | tr '\n' ' ')"
}

for mode in errno trap; do
    arg=""
    [ $mode = trap ] && arg=--trap
    under_run $mode $arg
    d=$T/$mode
    set -- "$d"/p.*.pb.gz
    [ $# = 1 ] && [ -f "$1" ] || { fail "$mode: $# profiles, want 1"; show "$d/err"; continue; }
    pid=$(basename "$1" .pb.gz)
    pid=${pid#p.}
    expect "$1" "$mode" $OWN
    grep -q "^heapsift: process $pid (sandboxed) ran under a seccomp filter installed after it started (a sandbox), which let it write no profile; its live heap, recovered from its spool, went to $1\$" "$d/err" ||
        { fail "$mode: run does not say it recovered process $pid"; show "$d/err"; }
    gotop "$1" inuse_space 2>/dev/null | grep -q "recovered from the spool of process $pid, which exited at .* under a seccomp filter installed after it started" ||
        fail "$mode: the profile's comment does not say it was recovered"
    no_noise "$mode" "$d/err"

    under_run "fork-$mode" --fork $arg
    d=$T/fork-$mode
    n=$(ls "$d"/p.*.pb.gz 2>/dev/null | wc -l)
    [ "$n" = 2 ] || { fail "fork-$mode: $n profiles, want 2 (parent, sandboxed child)"; show "$d/err"; continue; }
    child=$(sed -n 's/^heapsift: process \([0-9]*\) (sandboxed) ran under a seccomp filter.*/\1/p' "$d/err")
    [ -n "$child" ] || { fail "fork-$mode: run does not say it recovered the child"; show "$d/err"; continue; }
    expect "$d/p.$child.pb.gz" "fork-$mode child" $OWN before_fork=12000
    for f in "$d"/p.*.pb.gz; do
        [ "$f" = "$d/p.$child.pb.gz" ] || expect "$f" "fork-$mode parent" before_fork=12000 before_filter=0
    done
    no_noise "fork-$mode" "$d/err"
done

# Quiet: the same recovery, nothing on stderr.
d=$T/quiet
mkdir -p "$d/tmp"
TMPDIR=$d/tmp "$CLI" run -q --rate 1 -o "$d/p.%p.pb.gz" -- "$PROG" --trap >"$d/out" 2>"$d/err" ||
    fail "quiet: status $?"
[ -s "$d/err" ] && { fail "quiet: heapsift run -q wrote on stderr"; show "$d/err"; }
set -- "$d"/p.*.pb.gz
[ -f "$1" ] && expect "$1" quiet $OWN || fail "quiet: no profile"

# By hand, no spool: one line, the profile is lost.
d=$T/hand
mkdir -p "$d"
HEAPSIFT_RATE=1 HEAPSIFT_OUT="$d/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" --trap >"$d/out" 2>"$d/err" ||
    fail "by hand: status $?"
[ "$(wc -l <"$d/err")" = 1 ] && grep -q '^heapsift: the profile of process [0-9]* is lost: a seccomp filter installed after it started (a sandbox)' "$d/err" ||
    { fail "by hand: want exactly the one line saying the profile is lost"; show "$d/err"; }
[ ! -e "$d/p.pb.gz" ] || fail "by hand: a profile was written under the filter"

# By hand with HEAPSIFT_SPOOL: the spool stays and recover reads it.
d=$T/spool
mkdir -p "$d"
HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$d/s.%p" HEAPSIFT_OUT="$d/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" >"$d/out" 2>"$d/err" ||
    fail "spool: status $?"
[ -s "$d/err" ] && { fail "spool: the program's stderr is not empty"; show "$d/err"; }
set -- "$d"/s.*
if [ -f "$1" ] && "$CLI" recover -q "$1" -o "$d/r.pb.gz" 2>"$d/rec.err"; then
    expect "$d/r.pb.gz" spool $OWN
else
    fail "spool: no spool left, or recover failed"
    show "$d/rec.err"
fi

# A raw clone's child (--clone: no fork handler runs; filtered before its first sample),
# under run with two spares (HEAPSIFT_SPOOL_SPARES: this program is not a PID namespace's
# init): the child takes spare 0 at its first sample, with no refused call (--trap would
# log it), and its profile is recovered from it, whether it exits (under its filter) or is
# killed (--kill); the unused spare is removed (under_run checks TMPDIR is empty).
CLONED="before_fork=12000 in_clone=30000 freed_after=0 before_filter=0"
for mode in exit kill; do
    arg=""
    [ $mode = kill ] && arg=--kill
    HEAPSIFT_SPOOL_SPARES=2 under_run "clone-$mode" --clone --trap $arg
    d=$T/clone-$mode
    set -- "$d"/p.*.spare0.pb.gz
    [ -f "$1" ] || { fail "clone-$mode: no profile from spare 0"; show "$d/err"; continue; }
    child=$(basename "$1" .spare0.pb.gz)
    child=${child#p.}
    expect "$1" "clone-$mode child" $CLONED
    for f in "$d"/p.*.pb.gz; do
        [ "$f" = "$1" ] || expect "$f" "clone-$mode parent" before_fork=12000 in_clone=0
    done
    [ "$(ls "$d"/p.*.pb.gz | wc -l)" = 2 ] || fail "clone-$mode: want 2 profiles: $(ls "$d")"
    if [ $mode = exit ]; then
        why="exited where heapsift could not tell whether a sandbox refuses the calls that write a profile, so it wrote none"
        gotop "$1" inuse_space 2>/dev/null | grep -q "recovered from the spool of process $child, which exited at .* (its parent made it by a raw clone, which runs no fork handler)" ||
            fail "clone-$mode: the profile's comment does not say how it was recovered"
    else
        why="ended without writing its profile (killed, or it crashed)"
    fi
    grep -qF "heapsift: process $child (sandboxed) $why; its live heap, recovered from its spool, went to $1" "$d/err" ||
        { fail "clone-$mode: run does not say it recovered process $child"; show "$d/err"; }
    no_noise "clone-$mode" "$d/err"
done

# Without a spare the raw clone's profile is lost, and one line says so (truly: heapsift
# did not see a filter, it could not tell).
under_run clone-nospare --clone --trap
d=$T/clone-nospare
[ "$(ls "$d"/p.*.pb.gz | wc -l)" = 1 ] || fail "clone-nospare: want the parent's profile only"
[ "$(grep -c '^heapsift: the profile of process [0-9]* is lost: made by a raw clone, or unable to open its own status, it cannot tell whether a sandbox refuses' "$d/err")" = 1 ] ||
    { fail "clone-nospare: want one line saying the child's profile is lost"; show "$d/err"; }
grep -q 'seccomp sandbox violation' "$d/err" && fail "clone-nospare: a refused call"

# As Chromium's zygote makes its renderers (root only: unshare -pf, CLONE_NEWPID): the
# program is the init of a PID namespace, so it makes spares by default, and its child,
# cloned into a new namespace, has pid 1 too: the spool tells them apart by its owner
# token, not by pid. (unshare's own profile is lost: a process that unshared its PID
# namespace cannot start a thread, and heapsift says so; not checked here.)
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && unshare -pf true 2>/dev/null; then
    d=$T/clone-ns
    mkdir -p "$d/tmp"
    TMPDIR=$d/tmp "$CLI" run --rate 1 -o "$d/p.%p.pb.gz" -- unshare -pf --kill-child "$PROG" \
        --clone --newpid --trap >"$d/out" 2>"$d/err" || fail "clone-ns: status $?"
    [ -f "$d/p.1.spare0.pb.gz" ] && expect "$d/p.1.spare0.pb.gz" "clone-ns child" $CLONED ||
        { fail "clone-ns: no profile from spare 0"; show "$d/err"; }
    [ -f "$d/p.1.pb.gz" ] && expect "$d/p.1.pb.gz" "clone-ns parent" before_fork=12000 in_clone=0 ||
        fail "clone-ns: no profile of the parent"
    grep -q '^heapsift: process 1 of another PID namespace (sandboxed) exited where' "$d/err" ||
        { fail "clone-ns: run does not say it recovered the child"; show "$d/err"; }
    [ -z "$(ls -A "$d/tmp")" ] || fail "clone-ns: left in TMPDIR: $(ls "$d/tmp" | tr '\n' ' ')"
    grep -q 'seccomp sandbox violation' "$d/err" && fail "clone-ns: a refused call"
else
    echo "sandbox_spool: the PID namespace case skipped (needs root and unshare)"
fi

[ "$FAILS" -eq 0 ] && echo "sandbox_spool: ok"
exit $((FAILS > 0))

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
#  - preloaded with HEAPSIFT_SPOOL: the spool stays, `heapsift recover` gives the figures.
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

[ "$FAILS" -eq 0 ] && echo "sandbox_spool: ok"
exit $((FAILS > 0))

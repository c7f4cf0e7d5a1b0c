#!/bin/sh
# sandbox_rescue: profiles that `heapsift run`'s rescue lost without a word, each state
# staged on purpose (tests/programs/sandboxed.c), at HEAPSIFT_RATE=1:
#  - vfork: before it sandboxes itself, the process makes a vfork child (its memory
#    shared, as posix_spawn's and Chromium's chroot helper are) whose exec fails and which
#    ends by _exit. That child reads the spool's owner token (MADV_WIPEONFORK: not wiped,
#    the memory is shared) as its own: once its _exit removed its parent's spool, the
#    parent, sandboxed, marked a removed file as its profile and run found nothing. Want
#    the process's profile, recovered: exactly before_filter 10000, in_thread 15000,
#    after_filter 14000, by go tool pprof; no "is lost" line.
#  - outlive (root only: CLONE_NEWPID): a forked child, the init of a PID namespace of its
#    own, still runs, its end not marked in its spool, when CMD exits and run rescues, as
#    Chromium's forked zygote (pid 4 of its namespace) may when the browser has just exited.
#    Its pid cannot be looked up from run's namespace: run took it for a child that had
#    exec'd an unprofiled program and removed its spool unsaid. Want its profile as the
#    spool held it then (before_fork 12000, read by go tool pprof) and a line saying so.
#    The child waits on a FIFO until run has ended, then is let go; the test waits for its
#    end (hs_until) and wants nothing left in TMPDIR.
# usage: sandbox_rescue.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sandbox_rescue
hs_need_go
PROG=$BUILD/programs/sandboxed
hs_need_built "$PROG" "$LIB" "$CLI"
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the test program's filter is written for x86-64"; exit 77; }

# flat FILE NAME: NAME's flat inuse_space in bytes by go tool pprof (0 when absent).
flat() {
    gotop "$1" inuse_space 2>/dev/null | table | awk -F '\t' -v n="$2" '$1 == n { v = $2 } END { print v + 0 }'
}

# expect FILE LABEL NAME=BYTES...
expect() {
    f=$1 label=$2
    shift 2
    for kv in "$@"; do
        got=$(flat "$f" "${kv%%=*}")
        [ "$got" = "${kv#*=}" ] || fail "$label: ${kv%%=*} $got B, want ${kv#*=}"
    done
}

# The vfork child's _exit leaves its parent's spool alone.
d=$T/vfork
mkdir -p "$d/tmp"
st=0
TMPDIR=$d/tmp "$CLI" run --rate 1 -o "$d/p.%p.pb.gz" -- "$PROG" --vfork >"$d/out" 2>"$d/err" || st=$?
[ "$st" = 0 ] || { fail "vfork: status $st"; show "$d/err"; }
set -- "$d"/p.*.pb.gz
if [ -f "$1" ]; then
    expect "$1" vfork before_filter=10000 in_thread=15000 after_filter=14000 freed_after=0
    grep -q "^heapsift: process [0-9]* (sandboxed) ran under a seccomp filter .* went to $1\$" "$d/err" ||
        { fail "vfork: run does not say it recovered the profile"; show "$d/err"; }
else
    fail "vfork: no profile (the vfork child removed its parent's spool)"
    show "$d/err"
fi
grep -q 'is lost' "$d/err" && { fail "vfork: a profile said lost"; show "$d/err"; }
[ -z "$(ls -A "$d/tmp")" ] || fail "vfork: left in TMPDIR: $(ls "$d/tmp" | tr '\n' ' ')"

# A forked child of another PID namespace still running when run rescues.
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null 2>&1 && unshare -pf true 2>/dev/null; then
    d=$T/outlive
    mkdir -p "$d/tmp"
    mkfifo "$d/hold"
    st=0
    TMPDIR=$d/tmp "$CLI" run --rate 1 -o "$d/p.%p.pb.gz" -- "$PROG" --outlive "$d/hold" \
        >"$d/out" 2>"$d/err" || st=$?
    [ "$st" = 0 ] || { fail "outlive: status $st"; show "$d/err"; }
    cp "$d/err" "$d/run.err" # what run said, before the child writes anything more there
    printf g >"$d/hold"      # the child goes on: run has ended
    hs_until 30 "outlive: the child to end" '! pgrep -f -- "$d/hold" >/dev/null 2>&1' || true
    if [ -f "$d/p.1.pb.gz" ]; then
        expect "$d/p.1.pb.gz" outlive before_fork=12000 before_filter=0
    else
        fail "outlive: no profile of the child still running (its spool removed unsaid)"
        show "$d/run.err"
    fi
    grep -q "^heapsift: process 1 of another PID namespace (sandboxed) had not marked its end when CMD ended (it may still run: its pid cannot be looked up from here); its live heap, recovered from its spool, went to $d/p.1.pb.gz\$" "$d/run.err" ||
        { fail "outlive: run does not say it recovered the running child"; show "$d/run.err"; }
    n=$(ls "$d"/p.*.pb.gz | wc -l)
    [ "$n" = 2 ] || fail "outlive: $n profiles, want 2 (the parent's, the child's): $(ls "$d")"
    [ -z "$(ls -A "$d/tmp")" ] || fail "outlive: left in TMPDIR: $(ls "$d/tmp" | tr '\n' ' ')"
else
    echo "sandbox_rescue: the outlive case skipped (needs root and unshare)"
fi

[ "$FAILS" -eq 0 ] && echo "sandbox_rescue: ok"
exit $((FAILS > 0))

#!/bin/sh
# spool_kill: HEAPSIFT_SPOOL's promise under SIGKILL (docs/postmortem.md). 100 times, a
# program that records its own live set (tests/programs/spoolprog.c) is killed with
# SIGKILL at a random moment: 40 runs with one thread, 30 with 16 threads allocating, 30
# with a dump every 20 ms (so kills land during dumps; the last one killed only after its
# first dump, so that dumps are known to have run). At HEAPSIFT_RATE=1 every
# `heapsift recover` must succeed and its live bytes and objects under the program's
# sites must equal the program's record exactly, up to the operations under way at the
# kill (each either seen or not: spoolprog check). Every tenth recovery is also read by
# `go tool pprof`, which must see the same bytes. Then a process the kernel's OOM killer
# ends inside a memory cgroup, where the test may create one (else skipped, said so).
# usage: spool_kill.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" spool_kill
PROG=$BUILD/programs/spoolprog
hs_need_built "$PROG" "$LIB" "$CLI"
HAVE_GO=1
command -v go >/dev/null 2>&1 || HAVE_GO=0

# cumof PROFILE TYPE: the program's own bytes (or objects): the cum of step and hog.
cumof() {
    "$CLI" top "$1" --sample-type "$2" --unit B 2>/dev/null |
        awk '$NF == "step" || $NF == "hog" { v = $4; sub(/B$/, "", v); s += v } END { print s + 0 }'
}

# verify N: recovers run N's spool and checks it against its record.
verify() {
    d=$T/run$1
    set -- "$d"/s.*
    [ -f "$1" ] || { fail "run $d: no spool left"; return; }
    if ! "$CLI" recover -q "$1" -o "$d/r.pb.gz" 2>"$d/rec.err"; then
        fail "run $d: recover failed"
        show "$d/rec.err"
        return
    fi
    b=$(cumof "$d/r.pb.gz" inuse_space)
    o=$(cumof "$d/r.pb.gz" inuse_objects)
    if "$PROG" check "$d/rec" "$b" "$o" >"$d/check" 2>&1; then
        FITS=$((FITS + 1))
    else
        fail "run $d: totals"
        show "$d/check"
    fi
    if [ "$HAVE_GO" = 1 ] && [ $((RUNS % 10)) = 0 ]; then
        gb=$(go tool pprof -symbolize=none -top -cum -unit=B -nodefraction=0 -nodecount=0 \
            -sample_index=inuse_space "$d/r.pb.gz" 2>/dev/null |
            awk '$NF == "step" || $NF == "hog" { v = $4; sub(/B$/, "", v); s += v } END { print s + 0 }')
        [ "$gb" = "$b" ] || fail "run $d: go tool pprof reads $gb bytes, heapsift $b"
        GO_READ=$((GO_READ + 1))
    fi
    RUNS=$((RUNS + 1))
    rm -f "$d"/s.* "$d/r.pb.gz"
}

# kill_run N THREADS [dumped] EXTRA_ENV...: starts the program, waits until it runs (and
# with "dumped", until it wrote an interval dump, 30 s at most), sleeps a random 30 to
# 330 ms, kills it with SIGKILL and verifies what it left. Any moment must do: the check
# holds wherever the kill lands.
kill_run() {
    n=$1 threads=$2 dumped=""
    shift 2
    [ "${1:-}" = dumped ] && { dumped=1; shift; }
    d=$T/run$n
    mkdir -p "$d"
    env HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$d/s.%p" HEAPSIFT_SPOOL_SIZE=4M \
        HEAPSIFT_OUT="$d/out.%n.pb.gz" "$@" LD_PRELOAD="$LIB" \
        "$PROG" run "$d/rec" "$threads" 0 2>"$d/err" &
    pid=$!
    i=0
    while [ ! -f "$d/rec" ] && [ $i -lt 1000 ]; do
        sleep 0.01
        i=$((i + 1))
    done
    i=0
    while [ -n "$dumped" ] && [ -z "$(find "$d" -name 'out.*.pb.gz')" ] && [ $i -lt 300 ]; do
        sleep 0.1
        i=$((i + 1))
    done
    [ $i -lt 300 ] || fail "run $n: no interval dump in 30 s"
    sleep "$(awk -v s="$n$$" 'BEGIN { srand(s); printf "%.3f", 0.03 + rand() * 0.3 }')"
    kill -9 "$pid"
    wait "$pid" 2>/dev/null || true
    [ -f "$d/rec" ] || { fail "run $n: the program did not start"; show "$d/err"; return; }
    verify "$n"
}

RUNS=0 GO_READ=0 FITS=0
n=0
while [ $n -lt 40 ]; do
    kill_run $n 1
    n=$((n + 1))
done
while [ $n -lt 70 ]; do
    kill_run $n 16
    n=$((n + 1))
done
while [ $n -lt 99 ]; do
    kill_run $n 4 HEAPSIFT_INTERVAL_SECONDS=20ms
    n=$((n + 1))
done
kill_run $n 4 dumped HEAPSIFT_INTERVAL_SECONDS=20ms # so the count below is never 0 by chance
dumps=$(find "$T" -name 'out.*.pb.gz' | wc -l)
[ "$dumps" -gt 0 ] || fail "no dump was written in the runs with a dump every 20 ms"
echo "spool_kill: $RUNS of 100 runs recovered, $FITS fit the programs' records ($GO_READ read by go tool pprof; $dumps interval dumps written meanwhile)"

# The OOM killer inside a memory cgroup (v2 memory.max, or v1 memory.limit_in_bytes).
cg=""
if [ -w /sys/fs/cgroup/cgroup.subtree_control ] && grep -qw memory /sys/fs/cgroup/cgroup.controllers 2>/dev/null; then
    base=/sys/fs/cgroup$(sed -n 's/^0:://p' /proc/self/cgroup)
    cg=$base/hs-spool-$$
    if mkdir "$cg" 2>/dev/null && echo 48M >"$cg/memory.max" 2>/dev/null; then
        echo 0 >"$cg/memory.swap.max" 2>/dev/null || true
    else
        rmdir "$cg" 2>/dev/null || true
        cg=""
    fi
elif [ -d /sys/fs/cgroup/memory ]; then
    base=/sys/fs/cgroup/memory$(sed -n 's/^[0-9]*:memory://p' /proc/self/cgroup)
    cg=$base/hs-spool-$$
    if mkdir "$cg" 2>/dev/null && echo 48M >"$cg/memory.limit_in_bytes" 2>/dev/null; then
        echo 48M >"$cg/memory.memsw.limit_in_bytes" 2>/dev/null || true
    else
        rmdir "$cg" 2>/dev/null || true
        cg=""
    fi
fi
if [ -z "$cg" ]; then
    echo "spool_kill: SKIP the OOM killer case: cannot create a memory cgroup here"
else
    d=$T/runoom
    mkdir -p "$d"
    st=0
    env HEAPSIFT_RATE=1 HEAPSIFT_SPOOL="$d/s.%p" HEAPSIFT_SPOOL_SIZE=4M LD_PRELOAD="$LIB" \
        sh -c 'echo $$ >"$1/cgroup.procs" && exec "$2" hog "$3/rec"' sh "$cg" "$PROG" "$d" \
        2>"$d/err" || st=$?
    rmdir "$cg" 2>/dev/null || true
    if [ "$st" != 137 ]; then
        fail "hog in a 48M cgroup: status $st, want 137 (SIGKILL by the OOM killer)"
        show "$d/err"
    else
        FITS=0
        verify oom
        [ "$FITS" = 1 ] && echo "spool_kill: a process the OOM killer ended in a 48M cgroup: recovered, $(cat "$d/check")"
    fi
fi
[ "$FAILS" -eq 0 ] && echo "spool_kill: ok"
exit $((FAILS > 0))

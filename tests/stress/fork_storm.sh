#!/bin/sh
# fork_storm: process creation from several threads while others allocate
# (tests/programs/stress_fork.c), at HEAPSIFT_RATE=1 and the default:
#  - fork: 4 threads fork 5 times each (3 times at the default rate) while 4 threads
#    allocate; each child allocates, calls heapsift_dump and exit(0). No child hangs (the
#    program kills and reports a child that has not finished in 20 s), each writes its dump
#    and its exit profile (the latter unless it holds no sample at all), both valid, the dump holding exactly its site_child bytes at
#    rate 1; the parent's own profile does not hold site_child.
#  - vfork + execve and posix_spawn of the program itself, with HEAPSIFT_OUT changed in the
#    child's environment: each exec'd child writes exec.PID.pb.gz, valid, holding exactly
#    its site_exec_child bytes at rate 1; no child writes a profile under the parent's
#    pattern (which would come from a vfork child before its exec, or from the one whose
#    exec fails and _exits).
# usage: fork_storm.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" fork-storm stress_fork
PROG=$BUILD/programs/stress_fork

# nsamples FILE: the samples in a profile (go tool pprof -raw), 0 when there are none
nsamples() {
    go tool pprof -symbolize=none -raw "$1" 2>/dev/null |
        awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /: / { n++ } END { print n + 0 }'
}

# children OUT KIND: the pids stress_fork printed as "KIND PID"
children() {
    sed -n "s/^$2 \\([0-9][0-9]*\\)\$/\\1/p" "$1"
}

# one MODE RATE
one() {
    label=$1-rate$2 dir=$T/$1-$2
    mkdir -p "$dir"
    forks=5
    [ "$2" = 1 ] || forks=3
    bounded 90 "$label" env HEAPSIFT_RATE="$2" HEAPSIFT_OUT="$dir/prof.%p.pb.gz" \
        LD_PRELOAD="$LIB" "$PROG" "$1" "$dir" 4 $forks >"$T/$label.out" 2>"$T/$label.err" || {
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "$label: stress_fork exited $RC"
        show "$T/$label.err" 10
    }
    hung=$(children "$T/$label.out" hung | tr '\n' ' ')
    [ -z "$hung" ] || fail "$label: child process(es) hung: $hung"
    kids=$(children "$T/$label.out" child)
    nkids=$(echo "$kids" | grep -c . || true)
    [ "$nkids" -eq $((4 * forks)) ] || fail "$label: $nkids children started, want $((4 * forks))"
    nprof=$(ls "$dir" | grep -c '^prof\.' || true)
    if [ "$1" = fork ]; then
        # a child holding no sample at all (at the default rate, one forked before its
        # parent sampled anything, that sampled nothing itself) writes no exit profile:
        # its dump, written in any case, then holds no sample either
        want=1
        for pid in $kids; do
            [ -e "$dir/prof.$pid.pb.gz" ] || [ "$(nsamples "$dir/child.$pid.pb.gz")" != 0 ] ||
                continue
            want=$((want + 1))
        done
        [ "$nprof" -eq "$want" ] ||
            fail "$label: $nprof exit profiles, want $want (the parent's and each child's with samples)"
        for pid in $kids; do
            valid "$dir/child.$pid.pb.gz" "$label: child $pid's dump" || continue
            [ -e "$dir/prof.$pid.pb.gz" ] || [ "$(nsamples "$dir/child.$pid.pb.gz")" != 0 ] || continue
            valid "$dir/prof.$pid.pb.gz" "$label: child $pid's exit profile" || continue
            [ "$2" = 1 ] || continue
            got=$(inuse_of "$dir/child.$pid.pb.gz" site_child)
            [ "$got" = $((64 * 3000)) ] ||
                fail "$label: child $pid's dump: site_child inuse_space ${got:-unreadable}, want $((64 * 3000))"
        done
        parent=$(cd "$dir" && ls prof.*.pb.gz | sed 's/^prof\.\([0-9]*\)\.pb\.gz$/\1/' |
            grep -vxF "$kids" || true)
        if [ "$(echo "$parent" | grep -c .)" -ne 1 ]; then
            fail "$label: cannot tell the parent's profile (pids not children: $parent)"
        elif valid "$dir/prof.$parent.pb.gz" "$label: parent's profile" && [ "$2" = 1 ]; then
            got=$(inuse_of "$dir/prof.$parent.pb.gz" site_child)
            [ "$got" = 0 ] || fail "$label: parent's profile holds site_child ($got bytes)"
        fi
    else
        [ "$nprof" -eq 1 ] || fail "$label: $nprof profiles under the parent's pattern, want 1" \
            "(a vfork child wrote before exec, or the failed exec's _exit did): $(ls "$dir" | grep '^prof\.' | tr '\n' ' ')"
        failed=$(children "$T/$label.out" failed)
        [ -n "$failed" ] || fail "$label: no failed-exec child reported"
        for pid in $failed; do
            [ ! -e "$dir/exec.$pid.pb.gz" ] && [ ! -e "$dir/prof.$pid.pb.gz" ] ||
                fail "$label: the child whose exec failed ($pid) wrote a profile"
        done
        for pid in $kids; do
            [ ! -e "$dir/prof.$pid.pb.gz" ] ||
                fail "$label: child $pid wrote prof.$pid.pb.gz under the parent's pattern"
            valid "$dir/exec.$pid.pb.gz" "$label: exec'd child $pid's profile" || continue
            [ "$2" = 1 ] || continue
            got=$(inuse_of "$dir/exec.$pid.pb.gz" site_exec_child)
            [ "$got" = $((50 * 5000)) ] ||
                fail "$label: child $pid: site_exec_child inuse_space ${got:-unreadable}, want $((50 * 5000))"
        done
    fi
}

for mode in fork vfork spawn; do
    for rate in 1 524288; do
        one $mode $rate
    done
done
finish

#!/bin/sh
# own_threads: a program sees no thread of heapsift's it did not ask for, and how it ends
# is unchanged (tests/programs/lonely.c). Chromium's zygote, single-threaded by design,
# counts /proc/self/task before it forks (reach_chromium.sh runs it whole).
#  - default options: 1 task at start, after 64 MiB of sampled allocations, in a forked
#    child and after heapsift_dump (the I/O thread and a dump's thread are gone before
#    the call returns: iothread.c, fdtable.c); with HEAPSIFT_INTERVAL_SECONDS, which needs
#    the trigger thread, 2;
#  - _exit in a process of two threads writes the exit profile (lonely_site's 32 MiB) and
#    keeps its status; so does a single-threaded one that is the process the library
#    started in (Firefox's crashhelper ends so); a forked child's single-threaded _exit (a
#    shell's subshell) writes none (procexit.c);
#  - a vfork child's _exit: the child's status is the parent's to see, the parent's exit
#    profile is its own.
# usage: own_threads.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" own_threads
hs_need_go
PROG=$BUILD/programs/lonely
hs_need_built "$LIB" "$PROG"

# run ARGS...: lonely under heapsift, profiles in T/p.*.pb.gz; sets ST
run() {
    rm -f "$T"/p.*.pb.gz
    ST=0
    HEAPSIFT_OUT="$T/p.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" "$@" >"$T/out" 2>"$T/err" || ST=$?
}

# site FILE: lonely_site's in-use bytes in FILE (go tool pprof), empty if absent
site() {
    gotop "$1" inuse_space 2>/dev/null | table | awk -F '\t' '$1 == "lonely_site" { print $2 }'
}

run count
want=$(printf 'threads 1\nthreads 1\nthreads 1\nthreads 1')
[ "$ST" -eq 0 ] && [ "$(cat "$T/out")" = "$want" ] ||
    { fail "default: status $ST, tasks seen:"; show "$T/out"; show "$T/err"; }

env HEAPSIFT_INTERVAL_SECONDS=60 HEAPSIFT_OUT="$T/p.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" count \
    >"$T/out" 2>"$T/err" || fail "interval trigger: status $?"
[ "$(head -n 1 "$T/out")" = "threads 2" ] || { fail "interval trigger: want its thread"; show "$T/out"; }

# one_profile LABEL: exactly one profile, lonely_site's 32 MiB in it
one_profile() {
    n=$(ls "$T"/p.*.pb.gz 2>/dev/null | wc -l)
    if [ "$n" -eq 1 ]; then
        b=$(site "$T"/p.*.pb.gz)
        # 32 MiB at the default rate: 64 samples expected; 5 sigma is about 60%
        awk -v b="${b:-0}" 'BEGIN { exit !(b > 0.4 * 33554432 && b < 1.6 * 33554432) }' ||
            fail "$1: lonely_site holds ${b:-nothing}, want about 33554432"
    else
        fail "$1: $n profiles, want 1"
        show "$T/err"
    fi
}

run exit_mt 5
[ "$ST" -eq 5 ] || fail "_exit(5) with two threads: status $ST"
one_profile "_exit with two threads"

run exit_st 6
[ "$ST" -eq 6 ] || fail "_exit(6) single-threaded: status $ST"
one_profile "_exit single-threaded"

run exit_fork 9
[ "$ST" -eq 0 ] || fail "a forked child's _exit(9): the parent saw another status ($ST)"
one_profile "a forked child's single-threaded _exit (the parent's profile only)"

run vfork
[ "$ST" -eq 0 ] || { fail "vfork: status $ST"; show "$T/err"; }
n=$(ls "$T"/p.*.pb.gz 2>/dev/null | wc -l)
[ "$n" -eq 1 ] || fail "vfork: $n profiles, want the parent's"

[ "$FAILS" -eq 0 ] && echo "own_threads: ok"
exit $((FAILS > 0))

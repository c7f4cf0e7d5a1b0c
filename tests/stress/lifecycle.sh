#!/bin/sh
# lifecycle: allocations at the edges of a process's and a thread's life
# (tests/programs/stress_lifecycle.c), at HEAPSIFT_RATE=1:
#  - ctor: the program's constructor(101) and a preloaded helper library's (built here,
#    preloaded before and after libheapsift.so) allocate before the profiler initialises;
#    a dump in main holds exactly those bytes; the helper's destructor, which runs after
#    the exit profile is written when the helper comes after heapsift in LD_PRELOAD,
#    checks, frees, allocates and reallocs; exit status 0, exit profile valid.
#  - churn: short-lived threads (with a pthread_key destructor that frees at thread exit)
#    come and go while another thread dumps back to back: every dump valid, the end dump
#    holds exactly the bytes the threads handed over.
#  - exit-thread: exit(0) from a thread while 8 others allocate, 5 times: no hang, status
#    0, one valid exit profile each time.
#  - main-exit: main calls pthread_exit, a worker returns 0.3 s later: the process ends
#    with status 0 (within 15 s; about 1 s) and an exit profile, with the signal, HTTP or
#    interval trigger's thread running; and in the 5th descendant of a process with the
#    signal trigger and the HTTP endpoint (6 exit profiles).
#  - cancel: threads cancelled (deferred) while in heapsift_dump, 10 times: a later dump,
#    malloc and the exit profile still work (no lock left held by a cancelled dump).
#  - proctitle: the program overwrites its argv and environment strings as setproctitle()
#    does (redis-server, nginx, postgres): the exit profile still goes to HEAPSIFT_OUT.
# usage: lifecycle.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" lifecycle stress_lifecycle
PROG=$BUILD/programs/stress_lifecycle
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($CC) to build the helper"; exit 77; }

cat >"$T/helper.c" <<'SRC'
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define NH 50
#define HSZ 2000
static unsigned char *blocks[NH];
static void *volatile sink;
__attribute__((noinline, visibility("default"))) void *helper_site_ctor(size_t n)
{
    void *p = malloc(n);
    sink = p;
    return p;
}
__attribute__((constructor(101))) static void helper_init(void)
{
    for (int i = 0; i < NH; i++) {
        blocks[i] = helper_site_ctor(HSZ);
        if (blocks[i])
            memset(blocks[i], 0x42, HSZ);
    }
    for (int i = 0; i < NH / 2; i++)
        free(blocks[i]);
}
__attribute__((destructor(101))) static void helper_fini(void)
{
    for (int i = NH / 2; i < NH; i++) {
        for (int k = 0; k < HSZ; k++)
            if (!blocks[i] || blocks[i][k] != 0x42) {
                write(2, "helper: corrupt block at exit\n", 30);
                _exit(1);
            }
        free(blocks[i]);
    }
    void *volatile p = malloc(3000);
    p = realloc(p, 300000);
    free(p);
    write(1, "helper: fini done\n", 18);
}
SRC
"$CC" -shared -fPIC -O2 -g -o "$T/helper.so" "$T/helper.c" 2>"$T/cc.err" ||
    { fail "cannot build the helper library"; show "$T/cc.err"; finish; }

# ctor LABEL LD_PRELOAD
ctor() {
    dir=$T/$1
    mkdir -p "$dir"
    bounded 60 "ctor $1" env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$dir/exit.pb.gz" LD_PRELOAD="$2" \
        "$PROG" ctor "$dir/main.pb.gz" >"$T/$1.out" 2>"$T/$1.err" || {
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "ctor $1: stress_lifecycle exited $RC"
        show "$T/$1.err" 10
        return 0
    }
    grep -q '^helper: fini done$' "$T/$1.out" || fail "ctor $1: the helper's destructor did not finish"
    want=$(sed -n 's/^ctor_bytes=//p' "$T/$1.out")
    if valid "$dir/main.pb.gz" "ctor $1: main.pb.gz"; then
        got=$(inuse_of "$dir/main.pb.gz" site_ctor)
        [ "$got" = "$want" ] ||
            fail "ctor $1: main.pb.gz: site_ctor (constructor(101)) owns ${got:-?} bytes, want $want"
        got=$(inuse_of "$dir/main.pb.gz" helper_site_ctor)
        [ "$got" = $((25 * 2000)) ] ||
            fail "ctor $1: main.pb.gz: helper_site_ctor owns ${got:-?} bytes, want $((25 * 2000))"
    fi
    valid "$dir/exit.pb.gz" "ctor $1: exit profile"
}
ctor heapsift-first "$LIB $T/helper.so"
ctor helper-first "$T/helper.so $LIB"

# churn
dir=$T/churn
mkdir -p "$dir"
if bounded 60 churn env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$dir/exit.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" churn "$dir" 3 >"$T/churn.out" 2>"$T/churn.err"; then
    echo "churn: $(cat "$T/churn.out")"
    n=0
    for f in "$dir"/churn.[0-9]*.pb.gz; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        valid "$f" "churn: $(basename "$f")" || break
    done
    [ $n -ge 2 ] || fail "churn: only $n dump(s) while the threads came and went"
    if valid "$dir/churn.end.pb.gz" "churn: churn.end.pb.gz"; then
        want=$(sed -n 's/^.* kept=//p' "$T/churn.out")
        got=$(inuse_of "$dir/churn.end.pb.gz" site_thread_keep)
        [ "$got" = "$want" ] ||
            fail "churn: churn.end.pb.gz: site_thread_keep owns ${got:-?} bytes, want $want"
    fi
    valid "$dir/exit.pb.gz" "churn: exit profile"
else
    [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "churn: stress_lifecycle exited $RC"
    show "$T/churn.err" 10
fi

# exit from a thread
for i in 1 2 3 4 5; do
    dir=$T/exit$i
    mkdir -p "$dir"
    if bounded 30 "exit-thread #$i" env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$dir/exit.%p.pb.gz" \
        LD_PRELOAD="$LIB" "$PROG" exit-thread $((50 * i)) >"$T/exit$i.out" 2>"$T/exit$i.err"; then
        set -- "$dir"/exit.*.pb.gz
        if [ $# -eq 1 ] && [ -e "$1" ]; then
            valid "$1" "exit-thread #$i: exit profile"
        else
            fail "exit-thread #$i: want one exit profile, got: $(ls "$dir" | tr '\n' ' ')"
        fi
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "exit-thread #$i: stress_lifecycle exited $RC"
        show "$T/exit$i.err" 10
    fi
done
# main ends with pthread_exit: the process ends when its last thread does, as by exit(0),
# whatever heapsift threads run (the previous library's blocked every signal and waited
# for an exit that never came: killed by the timeout), and writes its exit profile
for opts in "HEAPSIFT_SIGNAL=USR2" "HEAPSIFT_HTTP=127.0.0.1:0" "HEAPSIFT_INTERVAL_SECONDS=0.05 HEAPSIFT_PEAK=1"; do
    dir=$T/mainexit
    rm -rf "$dir"
    mkdir -p "$dir"
    # shellcheck disable=SC2086
    if bounded 15 "main-exit ($opts)" env $opts HEAPSIFT_OUT="$dir/exit.%p.pb.gz" LD_PRELOAD="$LIB" \
        "$PROG" main-exit >"$T/mainexit.out" 2>"$T/mainexit.err"; then
        f=$(ls "$dir" | grep -E '^exit\.[0-9]+\.pb\.gz$' | head -n 1)
        [ -n "$f" ] && valid "$dir/$f" "main-exit ($opts): exit profile" ||
            fail "main-exit ($opts): no exit profile: $(ls "$dir" | tr '\n' ' ')"
    else
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "main-exit ($opts): status $RC"
        show "$T/mainexit.err" 5
    fi
done
# the same in the 5th descendant of a process with the signal trigger and the HTTP
# endpoint (two threads of heapsift's in each process): the previous library counted its
# forebears' threads as its own and ran out of room for the descendant's, which then hung
dir=$T/mainexit
rm -rf "$dir"
mkdir -p "$dir"
# at rate 1, so that each level holds samples (its parent's) and writes its profile: a
# process of the tree holding no sample at all writes none (run_summary)
if bounded 30 "main-exit 5 levels" env HEAPSIFT_RATE=1 HEAPSIFT_SIGNAL=USR2 HEAPSIFT_HTTP=127.0.0.1:0 \
    HEAPSIFT_OUT="$dir/exit.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" main-exit 5 \
    >"$T/mainexit.out" 2>"$T/mainexit.err"; then
    n=$(ls "$dir" | grep -cE '^exit\.[0-9]+\.pb\.gz$' || true)
    [ "$n" -eq 6 ] || fail "main-exit 5 levels: $n exit profiles, want 6"
else
    [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "main-exit 5 levels: status $RC"
    show "$T/mainexit.err" 5
fi
# cancellation inside heapsift_dump
dir=$T/cancel
mkdir -p "$dir"
if bounded 40 cancel env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$dir/exit.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" cancel "$dir" >"$T/cancel.out" 2>"$T/cancel.err"; then
    valid "$dir/after.pb.gz" "cancel: dump after the cancellations"
    valid "$dir/exit.pb.gz" "cancel: exit profile"
else
    [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "cancel: stress_lifecycle exited $RC:" \
        "$(head -n 1 "$T/cancel.err")"
fi

# setproctitle
dir=$T/proctitle
mkdir -p "$dir"
if bounded 30 proctitle env HEAPSIFT_RATE=1 HEAPSIFT_OUT="$dir/exit.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" proctitle >"$T/proctitle.out" 2>"$T/proctitle.err"; then
    if [ -e "$dir/exit.pb.gz" ]; then
        valid "$dir/exit.pb.gz" "proctitle: exit profile"
    else
        fail "proctitle: after the program rewrote its environment strings, no exit profile at" \
            "HEAPSIFT_OUT ($(head -n 1 "$T/proctitle.err"))"
    fi
else
    [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "proctitle: stress_lifecycle exited $RC"
    show "$T/proctitle.err" 10
fi
finish

#!/bin/sh
# attach_dies: a target that dies during the attach. The library given with --lib is a
# small one whose constructor ends the process it is loaded into (with _exit(7), or
# SIGKILL) when HS_TEST_DIE is set there, so the target dies inside the attach thread's
# dlopen (the thread is followed under ptrace, so its end gives the process's status):
# heapsift attach ends (no hang: 120 s at most), with status 2 and one line that says the
# process ended during the call and how (its status, or the signal). Mode "leader": the
# main thread ends first (the process's memory can no longer be read through its id while
# the attach thread lives on), and the attach thread exits with 7 half a second later: the
# command must wait for that end to say how the process ended.
# usage: attach_dies.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_dies
. "$(dirname "$0")/../lib/attach.sh"
hs_need_built "$CLI" "$BUILD/programs/attach_target"

cat >"$T/die.c" <<'CEOF'
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
static void leader_ends(int sig)
{
    (void)sig;
    syscall(SYS_exit, 0); /* this thread only: the process lives on */
}
/* The main thread is a zombie ('Z' in its stat), 10 s at most. */
static void wait_leader_gone(void)
{
    char path[64], buf[256];
    snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)getpid());
    for (int i = 0; i < 10000; i++) {
        FILE *f = fopen(path, "r");
        size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
        if (f)
            fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        if (!f || (p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X')))
            return;
        struct timespec d = {0, 1000000};
        nanosleep(&d, NULL);
    }
}
__attribute__((constructor)) static void die(void)
{
    const char *v = getenv("HS_TEST_DIE");
    if (getenv("HEAPSIFT_PROBE"))
        _exit(0); /* heapsift's option check: a library that accepts them */
    if (!v)
        return;
    if (strcmp(v, "kill") == 0)
        raise(SIGKILL);
    if (strcmp(v, "leader") == 0) {
        signal(SIGUSR2, leader_ends);
        syscall(SYS_tgkill, getpid(), getpid(), SIGUSR2);
        wait_leader_gone();
        struct timespec d = {0, 500000000};
        nanosleep(&d, NULL);
    }
    _exit(7);
}
CEOF
cc -shared -fPIC -o "$T/die.so" "$T/die.c" || { echo "SKIP: cannot build a shared library with cc"; exit 77; }

for mode in exit kill leader; do
    rm -rf "$T/d" "$T/out" "$T/status"
    HS_TEST_DIE=$mode at_start
    case $mode in
    exit | leader) how='it exited with status 7' ;;
    kill) how='it was killed by signal 9' ;;
    esac
    at_expect 2 "process $TPID ended while its attach thread loaded and started heapsift: $how" "$mode" -- \
        attach --lib "$T/die.so" -o "$T/p.pb.gz" "$TPID"
    i=0
    while [ ! -s "$T/status" ]; do
        i=$((i + 1)); [ $i -lt 1000 ] || { fail "$mode: no exit status"; break; }
        sleep 0.01
    done
    case $mode in
    exit | leader) want=7 ;;
    kill) want=137 ;;
    esac
    [ "$(cat "$T/status")" = "$want" ] || fail "$mode: the target's status is $(cat "$T/status"), not $want"
    [ ! -e "$T/p.pb.gz" ] || fail "$mode: a profile was written"
done
[ "$FAILS" -eq 0 ] && echo "attach_dies: ok"
exit $((FAILS > 0))

#!/bin/sh
# attach_nodump: a process that made itself not dumpable (prctl(PR_SET_DUMPABLE, 0), as a
# set-user-ID program is), run as nobody through setpriv.
#  - heapsift attach and detach run as nobody too (its own user, without CAP_SYS_PTRACE)
#    are refused: status 3 and one line saying it is not dumpable (its maps cannot be read
#    then: the refusal used to say "statically linked or has no glibc"); it runs on.
#  - as root, with -o in a directory only root may write, attach warns that the process
#    (which writes its profiles itself) cannot write there, and detach says the profile
#    could not be written (status 3);
#  - as root they attach again at rate 1; the profile, written by the process (as nobody,
#    into a directory it may write), has its 100 blocks of 1000 bytes at site_nodump,
#    through go tool pprof; after the detach the process is still not dumpable, and its
#    output and exit status are unchanged.
# Skipped when not root or without setpriv.
# usage: attach_nodump.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" attach_nodump
hs_need_go
hs_need_built "$LIB" "$CLI"
if [ "$(id -u)" != 0 ] || ! command -v setpriv >/dev/null 2>&1; then
    echo "SKIP: not root or no setpriv (the process runs as nobody)"
    exit 77
fi
AS_NOBODY="setpriv --reuid=65534 --regid=65534 --clear-groups"

cat >"$T/nodump.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <unistd.h>

static void wait_for(const char *path)
{
    while (access(path, F_OK) != 0)
        usleep(10000);
}

__attribute__((noinline)) void *site_nodump(void)
{
    return malloc(1000);
}

int main(int argc, char **argv)
{
    void *keep[100];
    if (argc != 3 || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0)
        return 2;
    printf("ready\n");
    fflush(stdout);
    wait_for(argv[1]);
    for (int i = 0; i < 100; i++)
        keep[i] = site_nodump();
    printf("allocated\n");
    fflush(stdout);
    wait_for(argv[2]);
    printf("dumpable %d\n", prctl(PR_GET_DUMPABLE, 0, 0, 0, 0));
    for (int i = 0; i < 100; i++)
        free(keep[i]);
    return 0;
}
C
# no sibling call: site_nodump keeps its frame
cc -O2 -g -fno-optimize-sibling-calls -o "$T/nodump" "$T/nodump.c"
chmod 711 "$T"
mkdir -m 1777 "$T/o"
# the command and the library where nobody may run and read them (a build directory may
# be closed to it)
mkdir -m 755 "$T/bin"
cp -L "$CLI" "$T/bin/heapsift"
cp -L "$LIB" "$T/bin/libheapsift.so"
CLI=$T/bin/heapsift
LIBOPT="--lib $T/bin/libheapsift.so"

# line TEXT: waits up to 10 s for the line TEXT in the process's output
line() {
    _i=0
    until grep -qx "$1" "$T/out" 2>/dev/null; do
        _i=$((_i + 1)); [ $_i -lt 1000 ] || { fail "no line '$1' from the process"; show "$T/err"; return 1; }
        sleep 0.01
    done
}
( set +e; $AS_NOBODY "$T/nodump" "$T/go" "$T/end" >"$T/out" 2>"$T/err"; echo $? >"$T/status" ) &
line ready || exit 1
PID=$(pgrep -f "^$T/nodump $T/go" | head -1)
[ -n "$PID" ] || { fail "no pid"; exit 1; }
trap 'kill -9 "$PID" 2>/dev/null || true; rm -rf "$T"' EXIT INT TERM

for verb in attach detach; do
    rc=0
    opt=
    [ $verb = detach ] || opt=$LIBOPT
    timeout 120 $AS_NOBODY "$CLI" $verb $opt "$PID" >"$T/o.txt" 2>"$T/e.txt" || rc=$?
    [ "$rc" = 3 ] || { fail "$verb as nobody: status $rc, not 3"; show "$T/e.txt"; }
    grep -q "ptrace refused: process $PID is not dumpable" "$T/e.txt" ||
        { fail "$verb as nobody: the refusal does not say 'not dumpable'"; show "$T/e.txt"; }
    [ "$(wc -l <"$T/e.txt")" = 1 ] || { fail "$verb as nobody: not one line on stderr"; show "$T/e.txt"; }
done
kill -0 "$PID" 2>/dev/null || fail "the process died at the refusals"

# as root, -o in a directory only root may write: attached, with a warning that the
# process cannot write there; its detach says the profile could not be written
mkdir -m 700 "$T/priv"
rc=0
timeout 120 "$CLI" attach $LIBOPT --rate 1 -o "$T/priv/p.pb.gz" "$PID" >"$T/a.out" 2>"$T/a.err" || rc=$?
[ "$rc" = 0 ] || { fail "attach as root into $T/priv: status $rc"; show "$T/a.err"; }
grep -q "^heapsift: warning: process $PID (uid 65534) cannot write $T/priv (Permission denied): its profiles will not be written there" "$T/a.err" ||
    { fail "attach as root into $T/priv: no warning"; show "$T/a.err"; }
rc=0
timeout 120 "$CLI" detach "$PID" >"$T/d.out" 2>"$T/d.err" || rc=$?
[ "$rc" = 3 ] && grep -q 'the profile could not be written (Permission denied)' "$T/d.err" ||
    { fail "detach from $T/priv: status $rc, not 3 with 'could not be written'"; show "$T/d.err"; }
# then into a directory it may write (a re-attach: -o applies): no warning
rc=0
timeout 120 "$CLI" attach $LIBOPT --rate 1 -o "$T/o/p.pb.gz" "$PID" >"$T/a.out" 2>"$T/a.err" || rc=$?
! grep -q 'warning' "$T/a.err" || { fail "attach as root into $T/o: a warning"; show "$T/a.err"; }
[ "$rc" = 0 ] || { fail "attach as root: status $rc"; show "$T/a.err"; }
: >"$T/go"
line allocated || true
rc=0
timeout 120 "$CLI" detach "$PID" >"$T/d.out" 2>"$T/d.err" || rc=$?
[ "$rc" = 0 ] || { fail "detach as root: status $rc"; show "$T/d.err"; }
: >"$T/end"
i=0
until [ -s "$T/status" ]; do
    i=$((i + 1)); [ $i -lt 1000 ] || { fail "the process did not exit"; break; }
    sleep 0.01
done
[ "$(cat "$T/status" 2>/dev/null)" = 0 ] || fail "the process's exit status: $(cat "$T/status" 2>/dev/null)"
[ "$(cat "$T/out")" = "$(printf 'ready\nallocated\ndumpable 0')" ] ||
    { fail "the process's output changed (or it is dumpable again)"; show "$T/out"; }
if [ -s "$T/o/p.pb.gz" ]; then
    gotop "$T/o/p.pb.gz" alloc_objects >"$T/go.txt" 2>&1 || { fail "go tool pprof"; show "$T/go.txt"; }
    v=$(table <"$T/go.txt" | awk -F'\t' '$1 == "site_nodump" { print $2 }')
    [ "$v" = 100 ] || { fail "site_nodump's allocations: '$v', want 100"; show "$T/go.txt"; }
    gotop "$T/o/p.pb.gz" inuse_space >"$T/go.txt" 2>&1 || true
    v=$(table <"$T/go.txt" | awk -F'\t' '$1 == "site_nodump" { print $2 }')
    [ "$v" = 100000 ] || { fail "site_nodump's bytes in use: '$v', want 100000"; show "$T/go.txt"; }
else
    fail "no profile written by the process"
    show "$T/d.err"
fi
[ "$FAILS" -eq 0 ] && echo "attach_nodump: ok"
exit $((FAILS > 0))

#!/bin/sh
# term_locked: the exit profile of a SIGTERM that stops the program inside glibc's
# allocator, holding the main arena's lock (tests/programs/term_locked.c holds it on
# purpose: malloc_stats blocked writing to a full pipe). The profile is written (before,
# its accounting's mallinfo2 waited for that lock until the handler gave up after 20 s,
# and no profile came), within 15 s; the process dies of SIGTERM (status 143); the
# profile holds the program's 16 blocks of 4096 bytes at rate 1 (go tool pprof and
# heapsift top), and its accounting says the allocator's statistics were not read.
# usage: term_locked.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" term_locked
hs_need_go
PROG=$BUILD/programs/term_locked
hs_need_built "$LIB" "$CLI" "$PROG"

mkfifo "$T/err"
exec 3<>"$T/err" # held open, never read: the program's writes fill it
( set +e; HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/p.pb.gz" LD_PRELOAD="$LIB" "$PROG" >"$T/out" 2>"$T/err"
  echo $? >"$T/status" ) &
hs_until 30 "the program's blocking line" 'grep -q "^blocking$" "$T/out"'
PID=$(pgrep -f "^$PROG\$" | head -n 1)
[ -n "$PID" ] || { echo "FAIL: no term_locked process" >&2; exit 1; }
# inside write(2) (system call 1), from malloc_stats, with the arena locked
hs_until 30 "the program blocked in write" '[ "$(cut -d" " -f1 /proc/$PID/syscall 2>/dev/null)" = 1 ]'
kill -TERM "$PID"
cat "$T/err" >/dev/null 3>&- & # the pipe drained now: the shell's own line about the signal
hs_until 15 "the program's end" '[ -s "$T/status" ]' || fail "the program did not end within 15 s of SIGTERM"
exec 3>&-
[ "$(cat "$T/status" 2>/dev/null)" = 143 ] || fail "status $(cat "$T/status" 2>/dev/null), not 143 (SIGTERM)"
[ -s "$T/p.pb.gz" ] || { fail "no exit profile"; exit 1; }
got=$(gotop "$T/p.pb.gz" inuse_space 2>/dev/null | table | awk -F '\t' '$1 == "term_locked_site" { print $2 }')
[ "$got" = 65536 ] || fail "go tool pprof: term_locked_site holds ${got:-nothing}, not 65536 B"
mine=$(hstop "$T/p.pb.gz" inuse_space 2>/dev/null | table | awk -F '\t' '$1 == "term_locked_site" { print $2 }')
[ "$mine" = 65536 ] || fail "heapsift top: term_locked_site holds ${mine:-nothing}, not 65536 B"
"$CLI" top --comments "$T/p.pb.gz" 2>/dev/null | grep -q '^allocator: unread$' ||
    fail "the accounting does not say the allocator's statistics were unread"
[ "$FAILS" -eq 0 ] && echo "term_locked: ok"
exit $((FAILS > 0))

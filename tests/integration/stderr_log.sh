#!/bin/sh
# stderr_log: heapsift writes its lines to the program's own descriptor 2, at the
# program's offset. tests/programs/stderr_log.c makes its stderr a log file opened
# without O_APPEND and writes 400 lines while `heapsift run --interval-seconds 0.02`
# dumps (each dump says "heapsift: wrote ..."; at each quarter the program waits until
# the log holds one more of them, so at least 3 fall between its lines whatever the load);
# the log must hold each of the program's lines once and whole, and heapsift's lines whole. heapsift's trigger thread, which has
# a descriptor table of its own, once wrote through a fresh O_APPEND open of
# /proc/self/fd/2, whose offset is not the program's: the two overwrote each other.
# usage: stderr_log.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" stderr_log
PROG=$BUILD/programs/stderr_log
hs_need_built "$PROG"
mkdir -p "$T/d"
"$CLI" run --interval-seconds 0.02 -o "$T/d/p.%n.pb.gz" -- "$PROG" "$T/log" 400 ||
    fail "status $? (5: heapsift's lines did not reach the log in 30 s)"
n=$(grep -c '^line [0-9]*$' "$T/log" || true)
u=$(grep '^line [0-9]*$' "$T/log" | sort -u | wc -l)
[ "$n" -eq 400 ] && [ "$u" -eq 400 ] || fail "the program's lines: $n whole ($u distinct), want 400"
h=$(grep -c '^heapsift: wrote ' "$T/log" || true)
[ "$h" -ge 3 ] || fail "heapsift's lines in the log: $h, want at least 3 (the program waited for them)"
bad=$(grep -v -e '^line [0-9]*$' -e '^heapsift: ' "$T/log" | head -n 3)
[ -z "$bad" ] || { fail "garbled lines in the log:"; printf '%s\n' "$bad" >&2; }
[ "$FAILS" -eq 0 ] && echo "stderr_log: 400 program lines and $h of heapsift's, all whole"
exit $((FAILS > 0))

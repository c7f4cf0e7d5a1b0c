#!/bin/sh
# run_summary: `heapsift run` through a shell shim (as pyenv's python3 is): the shell's
# helper processes that took no sample write no file, the program the user started
# always does, and run ends with one line: how many profiles were written and which
# holds the most in use. With -q, no summary.
#  - `sh -c '/bin/true; ... (8 helpers); exec sites'` at --rate 16M: the files written
#    are the root's plus at most 1 of the helpers' (each allocates well under 100 kB:
#    a sample in under 1 of 160; sites, some 200 MB, takes about 12); the summary counts
#    exactly the files there and names the root's;
#  - the library of 30a5aa6 wrote one file per process (9 here: sh execs sites).
# usage: run_summary.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" run_summary
hs_need_go
PROG=$BUILD/programs/sites
hs_need_built "$PROG"
mkdir -p "$T/w"
cd "$T/w"
"$CLI" run --rate 16M -- sh -c "/bin/true; /bin/true; /bin/true; /bin/true; ls >/dev/null; ls >/dev/null; \
    cat /dev/null; cat /dev/null; exec '$PROG'" >/dev/null 2>"$T/err" || fail "status $?"
n=$(ls "$T/w" | grep -c '^heapsift\.[0-9]*\.pb\.gz$' || true)
[ "$n" -ge 1 ] && [ "$n" -le 2 ] || { fail "$n profiles for 1 program and 8 helpers, want 1 or 2"; ls "$T/w" >&2; }
line=$(grep '^heapsift: [0-9]* profiles\? written; the most in use: ' "$T/err" || true)
[ -n "$line" ] || { fail "no summary line"; show "$T/err"; }
echo "$line" | grep -q "^heapsift: $n profiles\? written" || fail "summary '$line' does not count $n"
root=$(sed -n 's/.*the most in use: \([^ ]*\) .*/\1/p' "$T/err")
[ -s "$root" ] || fail "the summary names '$root', which is not there"
b=$(gotop "$root" inuse_space 2>/dev/null | table | awk -F'\t' '$1 == "run_all" { print $3 }')
awk -v b="${b:-0}" 'BEGIN { exit !(b > 2e7) }' || fail "the most-in-use profile is not sites' (run_all holds ${b:-0})"
"$CLI" run -q -o "$T/q.pb.gz" -- true 2>"$T/qerr" || fail "-q run failed"
! grep -q 'profiles\? written' "$T/qerr" || fail "-q printed the summary"
[ "$FAILS" -eq 0 ] && echo "run_summary: $n profiles; $line"
exit $((FAILS > 0))

#!/bin/sh
# help_texts: what `--help` promises is true of every command: each command's help ends
# with its exit statuses; collapsed's help does not offer --unit (its values stay raw);
# and a directory of dumps holding an empty file (a dump being written) still gives
# `heapsift suspects` its table, with one warning naming the skipped file count.
# usage: help_texts.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" help_texts
verbs=$("$CLI" --help | sed -n 's/^  \([a-z]*\)  .*/\1/p')
[ -n "$verbs" ] || fail "no commands in heapsift --help"
for v in $verbs; do
    "$CLI" "$v" --help >"$T/h" 2>&1 || fail "$v --help: non-zero status"
    grep -q "^Exit status: " "$T/h" || fail "$v --help has no 'Exit status:' line"
done
"$CLI" collapsed --help | grep -q -- '--unit' && fail "collapsed --help offers --unit"
"$CLI" run --help | grep -q '%k' || fail "run --help does not mention %k"

mkdir -p "$T/dumps"
for i in 1 2 3; do
    HEAPSIFT_RATE=65536 HEAPSIFT_OUT="$T/dumps/p.$i.pb.gz" LD_PRELOAD="$LIB" \
        "$BUILD/programs/sites" >/dev/null 2>&1
done
: >"$T/dumps/p.4.pb.gz"
"$CLI" suspects "$T/dumps" >"$T/s.out" 2>"$T/s.err" || fail "suspects with an empty file: status $?"
grep -q '^Leak suspects: 3 profiles' "$T/s.out" || { fail "suspects did not read the 3 dumps"; show "$T/s.out"; }
grep -q '1 empty file skipped' "$T/s.err" || { fail "no warning for the empty file"; show "$T/s.err"; }
[ "$FAILS" -eq 0 ] && echo "help_texts: ok"
exit $((FAILS > 0))

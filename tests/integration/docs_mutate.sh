#!/bin/sh
# docs/testing.md's table of `make mutate` rows (the README's until issue 40) against
# scripts/mutate.sh: the same row names, in the same order, each with the same tests (the
# script's ctest regex, its alternatives without their kind/ prefix, against the table's
# comma-separated list), so the table cannot fall behind the script as it did (14 rows in
# the README against 33).
# Usage: docs_mutate.sh BUILD_DIR SOURCE_DIR.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" docs_mutate
SRC=$(cd "$2" && pwd)

# the script's rows: NAME TESTS, one a line (ROWS='...' runs to the first line ending in ')
sed -n "/^ROWS='/,/'\$/p" "$SRC/scripts/mutate.sh" | sed "s/^ROWS='//; s/'\$//" |
    awk -F'|' 'NF >= 4 { t = ""; for (i = 4; i <= NF; i++) { sub(/^[a-z]+\//, "", $i); t = t (t ? "," : "") $i }; print $1, t }' \
        >"$T/script"
# docs/testing.md's rows: the table whose first header cell is "row"
awk -F'|' '/^\| row \| /{on = 1; next} on && /^\| ---/{next} on && !/^\|/{on = 0}
    on { gsub(/ /, "", $2); gsub(/ /, "", $4); print $2, $4 }' "$SRC/docs/testing.md" >"$T/readme"

n=$(wc -l <"$T/script")
[ "$n" -ge 30 ] || fail "only $n rows read from scripts/mutate.sh"
[ -s "$T/readme" ] || fail "no table with a 'row' column in docs/testing.md"
diff "$T/script" "$T/readme" >"$T/diff" ||
    { fail "docs/testing.md's mutate table differs from scripts/mutate.sh (< script, > docs/testing.md)"; show "$T/diff"; }
[ "$FAILS" -eq 0 ] || exit 1
echo "docs_mutate: $n rows, docs/testing.md and script agree"

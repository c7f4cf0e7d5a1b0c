#!/bin/sh
# Every HEAPSIFT_* variable the library reads (its option table in src/preload/runtime/options.c)
# has a `heapsift run` option and a row in docs/configuration.md's table, and nothing
# is documented or offered that the library does not read. Also: a bad value of each
# enumerated variable is one line on stderr naming it, and the program's output and exit
# status are unchanged.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" options-mirror
SRC=$2

grep -o '{"HEAPSIFT_[A-Z_]*"' "$SRC/src/preload/runtime/options.c" | tr -d '{"' | sort -u >"$T/lib"
"$CLI" run --help | grep -o '\[HEAPSIFT_[A-Z_]*\]' | tr -d '[]' | sort -u >"$T/run"
grep -o '^| `HEAPSIFT_[A-Z_]*`' "$SRC/docs/configuration.md" | tr -d '|` ' | sort -u >"$T/configuration.md"
[ -s "$T/lib" ] || { echo "FAIL: no variables found in options.c"; exit 1; }
for other in run configuration.md; do
    if ! diff "$T/lib" "$T/$other" >"$T/diff"; then
        fail "library variables (<) and $other (>) differ"
        show "$T/diff"
    fi
done

for var in HEAPSIFT_UNWIND HEAPSIFT_SYMBOLIZE; do
    out=$(env "$var=bogus" LD_PRELOAD="$LIB" sh -c 'echo hello; exit 7' 2>"$T/err") && rc=0 || rc=$?
    [ "$out" = hello ] && [ "$rc" = 7 ] || fail "$var=bogus: output '$out' status $rc"
    [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "$var=bogus" "$T/err" ||
        { fail "$var=bogus: want one stderr line naming it"; show "$T/err"; }
done
[ "$FAILS" -eq 0 ] && echo "options_mirror: $(wc -l <"$T/lib") variables, ok"
exit $((FAILS > 0))

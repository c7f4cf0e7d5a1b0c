#!/bin/sh
# first_run: the first commands of a new user, in build directories of their own:
#  - `make` with a build dependency missing (pkg-config here, hidden from PATH) says
#    which, and "run 'make setup'", and leaves no CMake cache behind;
#  - a build directory where an earlier configure failed (a cache and no Makefile, what
#    CMake leaves) does not break the next `make configure`: it configures afresh.
# usage: first_run.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" first_run
SRC=$(cd "$2" && pwd)

mkdir -p "$T/bin"
for c in cmake cc c++ make sh rm test; do
    p=$(command -v $c) || { fail "$c not found"; continue; }
    ln -s "$p" "$T/bin/$c"
done
st=0
PATH=$T/bin make -s -C "$SRC" BUILD="$T/b1" configure >"$T/out" 2>"$T/err" || st=$?
[ "$st" -ne 0 ] || fail "configure without pkg-config succeeded"
grep -q "missing build dependencies: pkg-config" "$T/err" && grep -q "run 'make setup'" "$T/err" ||
    { fail "no message naming pkg-config and make setup"; show "$T/err"; }
[ ! -e "$T/b1/CMakeCache.txt" ] || fail "a CMake cache was left behind"

mkdir -p "$T/b2"
echo "CMAKE_HOME_DIRECTORY:INTERNAL=/nonexistent" >"$T/b2/CMakeCache.txt"
make -s -C "$SRC" BUILD="$T/b2" configure >"$T/out2" 2>"$T/err2" ||
    { fail "configure after a failed one failed"; show "$T/err2"; }
[ -f "$T/b2/Makefile" ] || fail "no Makefile after configuring afresh"

[ "$FAILS" -eq 0 ] && echo "first_run: ok"
exit $((FAILS > 0))

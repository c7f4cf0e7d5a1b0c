#!/bin/sh
# start_libdw: libheapsift.so has no DT_NEEDED on libdw or libelf (they are dlopened on
# the first symbolization, src/common/base/dwload.c), so a process that writes no profile
# never loads them; and when libdw cannot be loaded (here a stand-in libdw.so.1 without
# its functions is preloaded, which dlopen then returns by soname) the program runs on,
# heapsift says so once on stderr, and the profile, with addresses only, is read by
# `go tool pprof`. With libdw, the same profile has the function names.
# usage: start_libdw.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" start_libdw
hs_need_go
PROG=$BUILD/programs/sites
hs_need_built "$PROG" "$LIB"
readelf -d "$LIB" >"$T/dyn"
if grep -E 'NEEDED.*\[lib(dw|elf)\.' "$T/dyn" >/dev/null; then
    fail "libheapsift.so has libdw or libelf in DT_NEEDED"
    grep NEEDED "$T/dyn" | show /dev/stdin
fi
HEAPSIFT_OUT="$T/none.pb.gz" LD_PRELOAD="$LIB" LD_DEBUG=files /bin/true 2>"$T/files"
! grep -q 'file=libdw' "$T/files" || fail "/bin/true under heapsift loaded libdw"
echo 'int hs_not_libdw;' | cc -shared -fPIC -x c - -o "$T/libdw.so.1" -Wl,-soname,libdw.so.1
HEAPSIFT_OUT="$T/with.pb.gz" HEAPSIFT_RATE=1 LD_PRELOAD="$LIB" "$PROG" >/dev/null 2>"$T/with.err" ||
    fail "sites with libdw: status $?"
HEAPSIFT_OUT="$T/without.pb.gz" HEAPSIFT_RATE=1 LD_PRELOAD="$LIB $T/libdw.so.1" "$PROG" \
    >/dev/null 2>"$T/without.err" || fail "sites without libdw: status $?"
[ ! -s "$T/with.err" ] || { fail "with libdw: stderr not empty"; show "$T/with.err"; }
n=$(grep -c '^heapsift: no symbols in profiles, addresses only: ' "$T/without.err" || true)
[ "$n" -eq 1 ] && [ "$(wc -l <"$T/without.err")" -eq 1 ] ||
    { fail "without libdw: not one 'no symbols' line on stderr"; show "$T/without.err"; }
for f in with without; do
    go tool pprof -symbolize=none -raw "$T/$f.pb.gz" >"$T/$f.raw" 2>"$T/$f.perr" ||
        { fail "$f: go tool pprof refuses the profile"; show "$T/$f.perr"; }
done
grep -q 'site_' "$T/with.raw" || { fail "with libdw: no site_ function in the profile"; show "$T/with.raw"; }
! grep -q 'site_' "$T/without.raw" || fail "without libdw: site_ names, yet libdw was not loaded"
grep -q 'alloc_space/bytes' "$T/without.raw" || fail "without libdw: no samples header"
[ "$FAILS" -eq 0 ] && echo "start_libdw: ok"
exit $((FAILS > 0))

#!/bin/sh
# names_cxx: C++ names as a C++ user reads them, demangled inside the profiled process by
# heapsift's own demangler (libiberty, linked into libheapsift.so; issue 38), also where no
# libstdc++ is loaded: tests/programs/sites_cc.cc built with -static-libstdc++ (the
# process has no libstdc++.so, and its executable exports no __cxa_demangle), and as the
# build makes it (libstdc++.so loaded). For each, at rate 1:
#  - every site's exact alloc_space under its demangled name (sites::make_nodes, ...) in
#    go tool pprof -top and heapsift top (cum: the static build's operator new, its own,
#    is the leaf of every stack);
#  - the stacks hold std::vector<char, std::allocator<char> >::... frames, demangled with
#    their parameters, in go tool pprof -traces -symbolize=none (the names as the file has
#    them) and in heapsift traces, and neither prints a mangled C++ name (a static
#    initializer's _GLOBAL__sub_I_ aside, which is no mangled name).
# usage: names_cxx.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" names_cxx
SRC=$(cd "$2" && pwd)
P=$SRC/tests/programs
hs_need_go
hs_need_built "$LIB" "$CLI" "$BUILD/programs/sites_cc"

c++ -O2 -g -fomit-frame-pointer -fno-inline-functions-called-once -I"$P" -static-libstdc++ \
    -static-libgcc -o "$T/sites_cc_static" "$P/sites_cc.cc" ||
    { echo "FAIL: cannot build sites_cc.cc with -static-libstdc++" >&2; exit 1; }
if readelf -d "$T/sites_cc_static" | grep -q 'NEEDED.*libstdc++'; then
    fail "sites_cc_static still needs libstdc++.so"
fi
if nm -D --defined-only "$T/sites_cc_static" | grep -q ' __cxa_demangle$'; then
    fail "sites_cc_static exports __cxa_demangle"
fi

for prog in "$T/sites_cc_static" "$BUILD/programs/sites_cc"; do
    name=$(basename "$prog")
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$name.pb.gz" LD_PRELOAD="$LIB" "$prog" --expect \
        >"$T/$name.expect" 2>"$T/$name.err" || { fail "$name: status $?"; show "$T/$name.err"; }
    # every site, by its demangled name, in go tool pprof -top and heapsift top, with the
    # exact cum of the bytes it allocated (the program's truth, column 4)
    gotop "$T/$name.pb.gz" alloc_space | table >"$T/$name.gotop"
    hstop "$T/$name.pb.gz" alloc_space | table >"$T/$name.hstop"
    while read -r site _ _ bytes _; do
        for r in gotop hstop; do
            v=$(awk -F '\t' -v s="$site" '$1 == s || index($1, s "(") == 1 { print $3; exit }' "$T/$name.$r")
            [ "$v" = "$bytes" ] || fail "$name ($r): $site allocated '${v:-absent}', want $bytes"
        done
    done <"$T/$name.expect"
    # the static build's process maps no libstdc++ (the profile's mappings say)
    if [ "$name" = sites_cc_static ] &&
        go tool pprof -symbolize=none -raw "$T/$name.pb.gz" 2>/dev/null | grep -q 'libstdc++'; then
        fail "$name: libstdc++ is mapped in its process"
    fi
    traces "$T/$name.pb.gz" >"$T/$name.go" 2>&1 || { fail "$name: go tool pprof -traces"; show "$T/$name.go"; }
    "$CLI" traces "$T/$name.pb.gz" >"$T/$name.hs" 2>&1 || { fail "$name: heapsift traces"; show "$T/$name.hs"; }
    for f in go hs; do
        grep -qF 'std::vector<char, std::allocator<char> >::' "$T/$name.$f" ||
            { fail "$name ($f): no std::vector<char, std::allocator<char> >:: frame"; show "$T/$name.$f" 30; }
        grep -qF 'sites::reserve_vectors()' "$T/$name.$f" ||
            { fail "$name ($f): no sites::reserve_vectors() frame"; show "$T/$name.$f" 30; }
        if grep -v '_GLOBAL__sub_I_' "$T/$name.$f" | grep -Eq '(^|[^A-Za-z0-9_])_Z[A-Za-z0-9_]'; then
            fail "$name ($f): mangled names"
            grep -v '_GLOBAL__sub_I_' "$T/$name.$f" | grep -E '(^|[^A-Za-z0-9_])_Z[A-Za-z0-9_]' | head -5 >&2
        fi
    done
done

[ "$FAILS" -eq 0 ] || { echo "names_cxx: $FAILS failure(s)" >&2; exit 1; }
echo "names_cxx: ok"
exit 0

#!/bin/sh
# `make install` into a temporary prefix, then a program linked with
# `pkg-config --libs heapsift` (no LD_PRELOAD) is profiled: its heapsift_dump call writes
# the file it names, and its allocation site is in it, read by `go tool pprof` and by
# `heapsift top`; it starts without LD_LIBRARY_PATH (the .pc file gives an rpath to a
# non-system prefix). Also checks the installed CLI finds the installed library.
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name heapsift.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: heapsift.pc not installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
[ -f "$tmp/prefix/include/heapsift.h" ] || { echo "FAIL: heapsift.h not installed"; exit 1; }

cat >"$tmp/linked.c" <<'PROG'
#include <heapsift.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
static void *keep[1000];
__attribute__((noinline)) void linked_site(void)
{
    for (int i = 0; i < 1000; i++) {
        keep[i] = malloc(10000);
        memset(keep[i], 1, 10000);
    }
}
int main(int argc, char **argv)
{
    linked_site();
    int rc = heapsift_dump(argc > 1 ? argv[1] : NULL);
    printf("dump=%d version=%s\n", rc, heapsift_version());
    return rc == 0 ? 0 : 1;
}
PROG
flags=$(PKG_CONFIG_PATH="$libdir/pkgconfig" pkg-config --cflags --libs heapsift)
# shellcheck disable=SC2086
cc -O2 -g -fomit-frame-pointer -o "$tmp/linked" "$tmp/linked.c" $flags
out=$(cd "$tmp" && HEAPSIFT_RATE=1 HEAPSIFT_OUT="$tmp/atexit.pb.gz" \
    ./linked "$tmp/api.pb.gz")
# The library's version is the command's: both come from CMake's project version.
ver=$("$build/heapsift" --version | sed 's/^heapsift //')
echo "$out" | grep -q "dump=0 version=$ver\$" || { echo "FAIL: program said: $out (want $ver)"; exit 1; }
[ -s "$tmp/api.pb.gz" ] || { echo "FAIL: heapsift_dump did not write api.pb.gz"; exit 1; }
[ -s "$tmp/atexit.pb.gz" ] || { echo "FAIL: no profile at exit"; exit 1; }

go tool pprof -top -unit=B -sample_index=inuse_space "$tmp/api.pb.gz" 2>/dev/null >"$tmp/go.txt"
grep -Eq '^ +10000000B .* linked_site$' "$tmp/go.txt" ||
    { echo "FAIL: go tool pprof does not show linked_site with 10000000B:"; cat "$tmp/go.txt"; exit 1; }
"$tmp/prefix/bin/heapsift" top --unit B "$tmp/api.pb.gz" >"$tmp/hs.txt"
grep -Eq '^ +10000000B .* linked_site$' "$tmp/hs.txt" ||
    { echo "FAIL: heapsift top does not show linked_site:"; cat "$tmp/hs.txt"; exit 1; }

# The installed CLI preloads the installed library.
(cd "$tmp" && "$tmp/prefix/bin/heapsift" run -q -o "$tmp/run.pb.gz" -- true)
[ -s "$tmp/run.pb.gz" ] || { echo "FAIL: installed heapsift run wrote no profile"; exit 1; }
echo "install_link: ok"

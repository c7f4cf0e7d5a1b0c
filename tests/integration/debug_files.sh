#!/bin/sh
# debug_files: the in-process symbolizer finds a stripped program's separate debug file
# through its .gnu_debuglink (next to it, and in its .debug folder), accepts it only when it
# matches (build id, or the link's CRC for a program built without one), and never loads
# libdebuginfod (which brings libcurl, GnuTLS and OpenSSL into the host) even with
# DEBUGINFOD_URLS set.
#  - prog: a static function hidden_site (named in .symtab only, which strip removes) does
#    the big allocations; its debug file is prog.debug beside it, or .debug/prog.debug for
#    the build without a build id;
#  - at the default HEAPSIFT_SYMBOLIZE=lines the profile (read by `go tool pprof
#    -symbolize=none -raw`) names hidden_site; at full it has prog.c's line for it too;
#  - with another build's debug file at the link's path, hidden_site is not named;
#  - the program calls heapsift_dump, then looks for libdebuginfod in its own maps.
# usage: debug_files.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" debug_files
hs_need_go
for t in cc objcopy strip; do
    command -v $t >/dev/null 2>&1 || { echo "SKIP: $t not found"; exit 77; }
done
export GOCACHE="$T/gocache"

cat >"$T/prog.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern int heapsift_dump(const char *path) __attribute__((weak));
static void *keep[400];
__attribute__((noinline)) static void *hidden_site(size_t n)
{
    void *p = malloc(n);
    memset(p, VARIANT + 1, n);
    return p;
}
int main(int argc, char **argv)
{
    char line[4096];
    for (int i = 0; i < 400; i++)
        keep[i] = hidden_site(100000 + (size_t)i);
    if (argc > 1 && heapsift_dump)
        heapsift_dump(argv[1]);
    FILE *f = fopen("/proc/self/maps", "r");
    while (f && fgets(line, sizeof(line), f))
        if (strstr(line, "libdebuginfod"))
            printf("libdebuginfod mapped: %s", line);
    return 0;
}
EOF

# build DIR VARIANT LINK [LDFLAGS]: DIR/prog stripped, its debug file at DIR/LINK
build() {
    mkdir -p "$1/.debug"
    cc -O1 -g -DVARIANT="$2" ${4:-} -o "$1/full" "$T/prog.c"
    objcopy --only-keep-debug "$1/full" "$1/$3"
    strip --strip-all -o "$1/prog" "$1/full"
    (cd "$1" && objcopy --add-gnu-debuglink="$3" prog)
    rm "$1/full"
}
build "$T/a" 0 prog.debug
build "$T/b" 0 .debug/prog.debug -Wl,--build-id=none
build "$T/other" 1 prog.debug
build "$T/other-b" 1 .debug/prog.debug -Wl,--build-id=none
readelf -n "$T/b/prog" 2>/dev/null | grep -q 'Build ID' && fail "b/prog has a build id"

# run DIR MODE NAME: profiles DIR/prog; raw pprof text in $T/NAME.raw
run() {
    DEBUGINFOD_URLS=http://127.0.0.1:9/ HEAPSIFT_SYMBOLIZE="$2" HEAPSIFT_OUT="$T/$3.exit.pb.gz" \
        LD_PRELOAD="$LIB" "$1/prog" "$T/$3.pb.gz" >"$T/$3.out" 2>"$T/$3.err" ||
        fail "$3: prog exited with status $?"
    [ ! -s "$T/$3.out" ] && [ ! -s "$T/$3.err" ] ||
        { fail "$3: output (libdebuginfod loaded?)"; show "$T/$3.out"; show "$T/$3.err"; }
    go tool pprof -symbolize=none -raw "$T/$3.pb.gz" >"$T/$3.raw" 2>/dev/null ||
        fail "$3: go tool pprof cannot read the profile"
}
named() {
    grep -q ' hidden_site ' "$T/$1.raw"
}

for v in a b; do
    run "$T/$v" lines "$v.lines"
    named "$v.lines" || { fail "$v: hidden_site not named at lines"; show "$T/$v.lines.raw"; }
    run "$T/$v" full "$v.full"
    grep -q ' hidden_site .*prog\.c:8 ' "$T/$v.full.raw" ||
        { fail "$v: no 'hidden_site prog.c:8' at full"; show "$T/$v.full.raw"; }
done

# Another build's debug file (another build id; for b, another CRC) at the link's path.
cp "$T/other/prog.debug" "$T/a/prog.debug"
cp "$T/other-b/.debug/prog.debug" "$T/b/.debug/prog.debug"
for v in a b; do
    run "$T/$v" full "$v.mismatch"
    ! named "$v.mismatch" || fail "$v: hidden_site named from another build's debug file"
done

[ "$FAILS" -eq 0 ] || { echo "debug_files: $FAILS check(s) failed" >&2; exit 1; }
echo "debug_files: ok"

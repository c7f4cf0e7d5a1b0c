#!/bin/sh
# unwind_nofde: the DWARF unwinder (the default) through code without unwind tables but
# with frame pointers, as most of Debian's Chromium is: tests/programs/nofde.c built with
# -fno-asynchronous-unwind-tables -fno-omit-frame-pointer at HEAPSIFT_RATE=1; every one
# of its 1000 blocks has the stack nofde_leaf <- nofde_mid <- nofde_top <- main, read by
# go tool pprof. The same build laid out with gaps between its segments (-z
# max-page-size=0x10000, as Debian's Chromium's are: glibc's _dl_find_object then gives the
# text segment alone, without .eh_frame_hdr) must give the same stacks: the unwinder once
# read "cannot read the tables" there, went to libgcc, and libgcc stops at the first frame
# without an FDE (nofde_leaf alone). Built without frame pointers too, the walk ends at the
# first frame it cannot follow and the program still runs unchanged.
# usage: unwind_nofde.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" unwind_nofde
SRC=$(cd "$2" && pwd)
[ "$(uname -m)" = x86_64 ] || { echo "SKIP: the frame-pointer rule is x86-64's"; exit 77; }
hs_need_go
hs_need_built "$LIB"
cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-omit-frame-pointer \
    -o "$T/nofde" "$SRC/tests/programs/nofde.c"
if readelf --debug-dump=frames "$T/nofde" 2>/dev/null | grep -q 'pc=.*nofde'; then
    fail "the build has unwind tables for nofde's functions"
fi
cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -fno-omit-frame-pointer \
    -Wl,-z,max-page-size=0x10000 -o "$T/split" "$SRC/tests/programs/nofde.c"
# the split layout: a PT_LOAD that starts past the page where the one before it ended
if ! readelf -lW "$T/split" | awk '
        function hex(s,   i, v) { v = 0; s = tolower(substr(s, 3))
            for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
            return v }
        $1 == "LOAD" { s = int(hex($3) / 4096); if (n++ && s > end) gap = 1; end = int((hex($3) + hex($6) + 4095) / 4096) }
        END { exit !gap }'; then
    fail "split: no gap between its segments (readelf -l)"
fi
cc -O2 -g -fno-asynchronous-unwind-tables -fno-unwind-tables -fomit-frame-pointer \
    -o "$T/nofp" "$SRC/tests/programs/nofde.c"
for p in nofde split nofp; do
    st=0
    HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/$p.pb.gz" LD_PRELOAD="$LIB" "$T/$p" >"$T/$p.out" 2>"$T/$p.err" || st=$?
    [ $st -eq 0 ] && grep -qx 'nofde done' "$T/$p.out" || { fail "$p: status $st"; show "$T/$p.err"; }
done
# the traces: each block's stack, leaf first, as go tool pprof prints them
for p in nofde split; do
    go tool pprof -traces -sample_index=alloc_objects "$T/$p.pb.gz" >"$T/traces" 2>&1 ||
        { fail "$p: go tool pprof -traces"; show "$T/traces"; }
    awk '/^-+\+/ { if (n) print s; s = ""; n = 0; next }
         NF { f = $NF; if (n == 0 && $1 ~ /^[0-9]/) { v = $1; f = $2 }
              s = s (n ? " " : v " ") f; n++ }
         END { if (n) print s }' "$T/traces" >"$T/stacks"
    grep -q '^1000 nofde_leaf nofde_mid nofde_top main' "$T/stacks" ||
        { fail "$p: no stack nofde_leaf <- nofde_mid <- nofde_top <- main for the 1000 blocks"; show "$T/stacks" 10; }
done
[ "$FAILS" -eq 0 ] && echo "unwind_nofde: ok"
exit $((FAILS > 0))

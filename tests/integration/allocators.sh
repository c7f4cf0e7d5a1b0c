#!/bin/sh
# allocators: heapsift preloaded in front of another allocator (Debian's jemalloc and
# tcmalloc_minimal): tests/programs/sites.c and sites_cc.cc still run, the profile is
# written, and every site's values are exact at HEAPSIFT_RATE=1 (go tool pprof -top). Skips (77) only when
# neither allocator library is installed.
# usage: allocators.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" allocators
hs_need_go
hs_need_built "$LIB" "$BUILD/programs/sites" "$BUILD/programs/sites_cc"

LIBDIR=/usr/lib/x86_64-linux-gnu
ran=0
for alloc in "$LIBDIR/libjemalloc.so.2" "$LIBDIR/libtcmalloc_minimal.so.4"; do
    if [ ! -e "$alloc" ]; then
        echo "note: $alloc not installed, not tested"
        continue
    fi
    ran=$((ran + 1))
    for prog in sites sites_cc; do
        name="$(basename "$alloc") $prog"
        base="$T/$(basename "$alloc").$prog"
        out="$base.pb.gz"
        rc=0
        HEAPSIFT_RATE=1 HEAPSIFT_OUT="$out" LD_PRELOAD="$LIB $alloc" "$BUILD/programs/$prog" \
            --expect >"$base.expect" 2>"$base.stderr" || rc=$?
        if [ $rc -ne 0 ]; then
            fail "$name: exited with status $rc (heapsift first, then $(basename "$alloc"))"
            show "$base.stderr"
            continue
        fi
        if [ ! -s "$out" ]; then
            fail "$name: no profile written"
            show "$base.stderr"
            continue
        fi
        col=3
        for st in alloc_objects alloc_space inuse_objects inuse_space; do
            if gotop "$out" $st >"$base.$st" 2>"$base.$st.err"; then
                table <"$base.$st" >"$base.$st.tab"
                compare "$name $st" "$base.expect" "$base.$st.tab" $col 0 ||
                    { fail "$name: go tool pprof -top -sample_index=$st"; show "$base.$st"; }
            else
                fail "$name: go tool pprof -top -sample_index=$st: $(head -3 "$base.$st.err")"
            fi
            col=$((col + 1))
        done
    done
done
[ $ran -gt 0 ] || { echo "SKIP: neither jemalloc nor tcmalloc_minimal is installed"; exit 77; }

if [ $FAILS -ne 0 ]; then
    echo "allocators: $FAILS check(s) failed" >&2
    exit 1
fi
echo "allocators: ok"

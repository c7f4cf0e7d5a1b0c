#!/bin/sh
# In-process symbolization and profile building give their memory back: 20 dumps after a
# warm-up leave glibc's heap in use within 64 KiB of where it was (tests/programs/
# dump_memory.c), with each HEAPSIFT_SYMBOLIZE mode.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" dump-memory
for mode in lines full names; do
    out=$(HEAPSIFT_RATE=4096 HEAPSIFT_SYMBOLIZE=$mode LD_PRELOAD="$LIB" \
        "$BUILD/programs/dump_memory" "$T") && rc=0 || rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "HEAPSIFT_SYMBOLIZE=$mode: status $rc, heap in use before/after/growth: $out"
    else
        echo "HEAPSIFT_SYMBOLIZE=$mode: heap in use before/after/growth: $out"
    fi
done
exit $((FAILS > 0))

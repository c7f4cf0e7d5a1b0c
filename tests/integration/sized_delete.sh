#!/bin/sh
# sized_delete: C++ sized deletes reach the allocator's own operator delete(void *, size_t)
# when the allocator that provides free defines one (jemalloc, tcmalloc), and free
# otherwise. The allocator is tests/lib/sized_alloc.c, which counts the calls it gets;
# tests/programs/sized_delete does N new/delete(p, 64) and new[]/delete[](p, 128) pairs.
# Nothing sampled (HEAPSIFT_RATE=2^40): all 2N sized deletes are the allocator's, and the
# exact free counter still counts them; every allocation sampled (HEAPSIFT_RATE=1): none
# is (a sampled block is freed through heapsift's slow path), and the profile reads in
# go tool pprof; Debian's jemalloc and tcmalloc_minimal (when installed): the exact free
# counter gains 2N, no more, both ways; heapsift alone (libstdc++'s deletes call free):
# the program runs as without it.
# usage: sized_delete.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sized_delete
hs_need_go
PROG=$BUILD/programs/sized_delete
hs_need_built "$LIB" "$PROG"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($CC) to build the allocator"; exit 77; }
"$CC" -shared -fPIC -O2 -o "$T/libsized_alloc.so" "$2/tests/lib/sized_alloc.c"
ALLOC=$T/libsized_alloc.so
N=5000

# run NAME RATE PRELOAD ARG: the program's output in $T/NAME.out, profile $T/NAME.pb.gz
run() {
    rc=0
    HEAPSIFT_RATE=$2 HEAPSIFT_OUT="$T/$1.pb.gz" LD_PRELOAD="$3" "$PROG" "$4" >"$T/$1.out" \
        2>"$T/$1.err" || rc=$?
    [ $rc -eq 0 ] || { fail "$1: exited with status $rc"; show "$T/$1.err"; }
}

# frees NAME: the exact free counter of the profile
frees() {
    go tool pprof -raw "$T/$1.pb.gz" 2>/dev/null | sed -n 's/.*exact: allocs=[0-9]* frees=\([0-9]*\).*/\1/p'
}

expect_out() { # NAME WANT
    got=$(cat "$T/$1.out")
    [ "$got" = "$2" ] || fail "$1: the allocator counted \"$got\" sized deletes, want \"$2\""
}

run alone 1 "$ALLOC" $N
expect_out alone "$N $N"

for rate in 1099511627776 1; do
    run "r$rate.0" $rate "$LIB $ALLOC" 0
    run "r$rate" $rate "$LIB $ALLOC" $N
    if [ $rate -eq 1 ]; then expect_out "r$rate" "0 0"; else expect_out "r$rate" "$N $N"; fi
    f0=$(frees "r$rate.0") f1=$(frees "r$rate")
    if [ -z "$f0" ] || [ -z "$f1" ] || [ $((f1 - f0)) -ne $((2 * N)) ]; then
        fail "rate $rate: exact frees ${f0:-?} -> ${f1:-?}, want $((2 * N)) more"
    fi
done

# The real allocators that define sized deletes: each of the 2N reaches heapsift once
# (an allocator whose sized delete went back through free would count 4N).
for real in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4; do
    [ -e "$real" ] || { echo "note: $real not installed, not tested"; continue; }
    b=$(basename "$real")
    for rate in 1099511627776 1; do
        run "$b.$rate.0" $rate "$LIB $real" 0
        run "$b.$rate" $rate "$LIB $real" $N
        expect_out "$b.$rate" "-1 -1"
        f0=$(frees "$b.$rate.0") f1=$(frees "$b.$rate")
        if [ -z "$f0" ] || [ -z "$f1" ] || [ $((f1 - f0)) -ne $((2 * N)) ]; then
            fail "$b rate $rate: exact frees ${f0:-?} -> ${f1:-?}, want $((2 * N)) more"
        fi
    done
done

run glibc 1 "$LIB" $N
expect_out glibc "-1 -1"
run glibc_nosample 1099511627776 "$LIB" $N
expect_out glibc_nosample "-1 -1"

if [ $FAILS -ne 0 ]; then
    echo "sized_delete: $FAILS check(s) failed" >&2
    exit 1
fi
echo "sized_delete: ok"

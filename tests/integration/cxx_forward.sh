#!/bin/sh
# cxx_forward: C++ operators reach the allocator's own when the allocator that provides
# free defines them (jemalloc, tcmalloc): sized delete and delete[] always, new and new[]
# when a first call of them does not come back through malloc (libstdc++'s do, and
# would have their blocks counted twice). The allocators are tests/lib/cxx_alloc.c, which
# counts the calls each operator gets (its new either internal or through malloc), and
# Debian's jemalloc and tcmalloc_minimal when installed; tests/programs/cxx_forward does N
# new/delete(p, 64) and new[]/delete[](p, 128) pairs. Checked at HEAPSIFT_RATE=2^40
# (nothing sampled: the allocator's operators get every call, new and new[] one more,
# heapsift's first-use probe) and 1 (everything sampled: none, heapsift allocates and
# frees through malloc and free): what the allocator counted, and that the profile's
# exact counters gain 2N allocations and 2N frees, no more, both ways.
# usage: cxx_forward.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" cxx_forward
hs_need_go
PROG=$BUILD/programs/cxx_forward
hs_need_built "$LIB" "$PROG"
CC=${CC:-cc}
command -v "$CC" >/dev/null 2>&1 || { echo "SKIP: no C compiler ($CC) to build the allocator"; exit 77; }
"$CC" -shared -fPIC -O2 -o "$T/libcxx_alloc.so" "$2/tests/lib/cxx_alloc.c"
"$CC" -shared -fPIC -O2 -DNEW_VIA_MALLOC -o "$T/libcxx_via.so" "$2/tests/lib/cxx_alloc.c"
N=5000
NONE=1099511627776

# run NAME RATE PRELOAD ARG: the program's output in $T/NAME.out, profile $T/NAME.pb.gz
run() {
    rc=0
    HEAPSIFT_RATE=$2 HEAPSIFT_OUT="$T/$1.pb.gz" LD_PRELOAD="$3" "$PROG" "$4" >"$T/$1.out" \
        2>"$T/$1.err" || rc=$?
    [ $rc -eq 0 ] || { fail "$1: exited with status $rc"; show "$T/$1.err"; }
}

# exact NAME: "allocs frees" from the profile's exact counters
exact() {
    go tool pprof -raw "$T/$1.pb.gz" 2>/dev/null |
        sed -n 's/.*exact: allocs=\([0-9]*\) frees=\([0-9]*\).*/\1 \2/p'
}

expect_out() { # NAME WANT
    got=$(cat "$T/$1.out")
    [ "$got" = "$2" ] ||
        fail "$1: delete, delete[], new, new[] calls counted \"$got\", want \"$2\""
}

# check NAME RATE PRELOAD WANT: runs with 0 and N pairs; WANT is the allocator's counts
check() {
    run "$1.0" "$2" "$3" 0
    run "$1" "$2" "$3" $N
    expect_out "$1" "$4"
    set -- "$1" $(exact "$1.0") $(exact "$1")
    if [ $# -ne 5 ] || [ $(($4 - $2)) -ne $((2 * N)) ] || [ $(($5 - $3)) -ne $((2 * N)) ]; then
        fail "$1: exact allocs and frees ${2:-?} ${3:-?} -> ${4:-?} ${5:-?}, want $((2 * N)) more each"
    fi
}

run alone 1 "$T/libcxx_alloc.so" $N
expect_out alone "$N $N $N $N"

check own.none $NONE "$LIB $T/libcxx_alloc.so" "$N $N $((N + 1)) $((N + 1))"
check own.all 1 "$LIB $T/libcxx_alloc.so" "0 0 0 0"
check via.none $NONE "$LIB $T/libcxx_via.so" "$N $N 1 1"
check via.all 1 "$LIB $T/libcxx_via.so" "0 0 0 0"

for real in /usr/lib/x86_64-linux-gnu/libjemalloc.so.2 /usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4; do
    [ -e "$real" ] || { echo "note: $real not installed, not tested"; continue; }
    check "$(basename "$real").none" $NONE "$LIB $real" "-1 -1 -1 -1"
    check "$(basename "$real").all" 1 "$LIB $real" "-1 -1 -1 -1"
done

check glibc.none $NONE "$LIB" "-1 -1 -1 -1"
check glibc.all 1 "$LIB" "-1 -1 -1 -1"

if [ $FAILS -ne 0 ]; then
    echo "cxx_forward: $FAILS check(s) failed" >&2
    exit 1
fi
echo "cxx_forward: ok"

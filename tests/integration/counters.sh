#!/bin/sh
# The exact counters in every profile (comment "exact: allocs=.. frees=.. bytes=.."): two
# runs of tests/programs/counted differ by exactly the calls and bytes its argument adds,
# whatever the rate, threads included.
set -eu
build=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prog=$build/programs/counted

counters() { # rate k -> "allocs frees bytes"
    HEAPSIFT_RATE=$1 HEAPSIFT_OUT="$tmp/c.pb.gz" LD_PRELOAD="$build/libheapsift.so" "$prog" "$2"
    go tool pprof -raw "$tmp/c.pb.gz" 2>/dev/null |
        sed -n 's/.*exact: allocs=\([0-9]*\) frees=\([0-9]*\) bytes=\([0-9]*\).*/\1 \2 \3/p'
}

k=200
# Added by K: K malloc(1000) + 3K malloc(100) + K calloc(10,10) + K realloc = 6K calls;
# frees: K/2 + 3K + K (calloc'd) + (K-1 reallocs of a non-NULL block) + 1 (grow) = 5.5K;
# bytes: 1000K + 300K + 100K + 16*(1+..+K) = 1400K + 8K(K+1); plus 8K for the keep array.
want_allocs=$((6 * k))
want_frees=$((k / 2 + 3 * k + k + (k - 1) + 1))
want_bytes=$((1400 * k + 8 * k * (k + 1) + 8 * k))
fail=0
for rate in 1 4096 524288; do
    set -- $(counters "$rate" 0)
    a0=$1 f0=$2 b0=$3
    set -- $(counters "$rate" "$k")
    da=$(($1 - a0)) df=$(($2 - f0)) db=$(($3 - b0))
    if [ "$da" -ne "$want_allocs" ] || [ "$df" -ne "$want_frees" ] || [ "$db" -ne "$want_bytes" ]; then
        echo "FAIL rate=$rate: added allocs=$da frees=$df bytes=$db," \
            "want $want_allocs $want_frees $want_bytes"
        fail=1
    fi
done
[ $fail -eq 0 ] && echo "counters: ok"
exit $fail

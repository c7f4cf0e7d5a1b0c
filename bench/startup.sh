#!/bin/sh
# startup: what heapsift costs a process once, at start and at exit, in instructions
# (callgrind, so the machine's load does not move it): a program that allocates nothing
# and exits, run with no profiler and with each library given, whole process counted
# (ld.so, constructors, the exit profile). Also the non-sampled malloc+free pair
# (bench/pairs under callgrind, as targets.sh measures it), to show the hot path did not
# move. Prints a markdown table.
# usage: sh bench/startup.sh LIB [LIB...]   (each a libheapsift.so; labels are their paths)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -o "$tmp/nothing" -x c - <<'C'
int main(void) { return 0; }
C
cc -O2 -std=gnu11 -o "$tmp/pairs" "$here/pairs.c"
ir() { # LIB|- TOGGLE|- CMD...: Ir of the whole process, or of function TOGGLE only
    lib=$1 toggle=$2
    shift 2
    if [ "$toggle" = - ]; then
        set -- valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$@"
    else
        set -- valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" --toggle-collect="$toggle" "$@"
    fi
    if [ "$lib" = - ]; then "$@"; else
        env LD_PRELOAD="$lib" HEAPSIFT_OUT="$tmp/p.pb.gz" HEAPSIFT_RATE=${RATE:-524288} "$@"
    fi >/dev/null 2>"$tmp/err"
    sed -n 's/^summary: //p' "$tmp/cg"
    rm -f "$tmp/cg" "$tmp"/*.pb.gz
}
base=$(ir - - "$tmp/nothing")
echo "| library | start + exit, Ir (whole process) | over no profiler | Ir per malloc(64)+free pair, unsampled |"
echo "| --- | --- | --- | --- |"
echo "| no profiler | $base | - | - |"
for lib in "$@"; do
    s=$(ir "$lib" - "$tmp/nothing")
    a=$(RATE=1099511627776 ir "$lib" run_pairs "$tmp/pairs" 200000 64)
    b=$(RATE=1099511627776 ir "$lib" run_pairs "$tmp/pairs" 400000 64)
    per=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", (b - a) / 200000 }')
    echo "| $lib | $s | +$((s - base)) | $per |"
done

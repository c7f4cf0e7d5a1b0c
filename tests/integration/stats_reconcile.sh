#!/bin/sh
# stats_reconcile: `heapsift stats` on the exit profiles of tests/programs/acct_prog.c
# (HEAPSIFT_RATE=64K). In every case the parts (heap, profiler tables, stacks, code, other
# anonymous) add up to the RSS within 2% (both come from /proc, read a moment apart), code
# and mapped files (the RSS less the anonymous mappings probed) stay under 32 MiB (these
# programs map 5 MB of libraries: more would be heap the probe missed), and:
#  - frag (100000 live blocks of 1000 bytes among 100000 freed): live heap within 10% of
#    95.4 MiB (the 95% interval is about 5%), free space kept by glibc within 15% of it;
#  - retain (all freed but the last block): free space >= 90% of 95.4 MiB, live < 1 MiB;
#  - mmap (128 MiB mmap'd and touched): other anonymous >= 95% of 128 MiB, heap < 4 MiB;
#    the same beside an untouched 20 GiB reservation, which the dump does not probe page by
#    page: it reads /proc/self/smaps instead;
#  - frag on jemalloc (when installed): the allocator line names jemalloc, parts add up;
#  - frag on tcmalloc_minimal: named, live heap within 10% and the free space it keeps
#    (its caches' free objects) within 15% of 95.4 MiB, parts add up;
#  - in every case, the printed parts add up to the "sum of the parts" line;
#  - usage errors exit 1, a missing file exits 3.
# usage: stats_reconcile.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" stats-reconcile
PROG=$BUILD/programs/acct_prog
JE=/usr/lib/x86_64-linux-gnu/libjemalloc.so.2

# get FILE LABEL -> the byte count of the row starting with LABEL (its first number)
get() {
    awk -v l="$2" '{ s = $0; sub(/^ +/, "", s) } substr(s, 1, length(l)) == l {
        n = split(substr(s, length(l) + 1), f, " ")
        for (i = 1; i <= n; i++) if (f[i] ~ /^-?[0-9]+$/) { print f[i]; exit } }' "$1"
}
within() { # GOT WANT TOL
    awk -v g="${1:-0}" -v w="$2" -v t="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(d <= t * w) }'
}
run() { # NAME MODE [PRELOAD]
    HEAPSIFT_RATE=64K HEAPSIFT_OUT="$T/$1.pb.gz" LD_PRELOAD="$LIB${3:+ $3}" "$PROG" "$2" ||
        fail "$1: status $?"
    "$CLI" stats --bytes "$T/$1.pb.gz" >"$T/$1.txt" 2>&1 || { fail "$1: heapsift stats: status $?"; show "$T/$1.txt"; }
    rss=$(get "$T/$1.txt" RSS)
    sum=$(get "$T/$1.txt" "sum of the parts")
    within "$sum" "$rss" 0.02 || { fail "$1: parts add up to $sum, RSS is $rss"; show "$T/$1.txt"; }
    # every part is printed: the rows at the first indent add up to the sum line
    rows=$(awk '/^  [^ ]/ && !/^  sum of the parts/ { n = split($0, f, " ")
        for (i = 1; i <= n; i++) if (f[i] ~ /^-?[0-9]+$/) { t += f[i]; break } }
        END { printf "%.0f", t }' "$T/$1.txt")
    [ "$rows" = "$sum" ] || { fail "$1: the printed parts add up to $rows, the sum line says $sum"; show "$T/$1.txt"; }
    code=$(get "$T/$1.txt" "code and mapped")
    [ "${code:-0}" -gt 0 ] && [ "$code" -lt $((32 * 1048576)) ] ||
        { fail "$1: code and mapped files $code"; show "$T/$1.txt"; }
}
MIB=1048576
LIVE=100000000 # 100000 x 1000 bytes

run frag frag
v=$(get "$T/frag.txt" "live heap")
within "$v" $LIVE 0.10 || { fail "frag: live heap $v, want $LIVE +-10%"; show "$T/frag.txt"; }
v=$(get "$T/frag.txt" "free space kept")
within "$v" $LIVE 0.15 || { fail "frag: free space $v, want $LIVE +-15%"; show "$T/frag.txt"; }

run retain retain
v=$(get "$T/retain.txt" "free space kept")
awk -v v="$v" -v w=$LIVE 'BEGIN { exit !(v >= 0.9 * w) }' || { fail "retain: free space $v"; show "$T/retain.txt"; }
v=$(get "$T/retain.txt" "live heap")
[ "$v" -lt $MIB ] || fail "retain: live heap $v, want < 1 MiB"

for m in mmap bigmap; do
    run $m $m
    v=$(get "$T/$m.txt" "other anonymous")
    awk -v v="$v" -v w=$((128 * MIB)) 'BEGIN { exit !(v >= 0.95 * w) }' || { fail "$m: other anonymous $v"; show "$T/$m.txt"; }
    v=$(get "$T/$m.txt" "heap (the")
    [ "$v" -lt $((4 * MIB)) ] || fail "$m: heap $v, want < 4 MiB"
done

if [ -e "$JE" ]; then
    run je frag "$JE"
    grep -q 'jemalloc' "$T/je.txt" || { fail "jemalloc: not named"; show "$T/je.txt"; }
    v=$(get "$T/je.txt" "live heap")
    within "$v" $LIVE 0.10 || fail "jemalloc: live heap $v, want $LIVE +-10%"
fi

# tcmalloc (gperftools), read through MallocExtension: its freed blocks wait in its caches
TC=/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4
[ -e "$TC" ] || { fail "$TC missing (scripts/setup.sh installs libtcmalloc-minimal4)"; TC=""; }
if [ -n "$TC" ]; then
    run tc frag "$TC"
    grep -q 'heap (the allocator.s resident memory) .* tcmalloc$' "$T/tc.txt" ||
        { fail "tcmalloc: not named as the allocator"; show "$T/tc.txt"; }
    v=$(get "$T/tc.txt" "live heap")
    within "$v" $LIVE 0.10 || fail "tcmalloc: live heap $v, want $LIVE +-10%"
    v=$(get "$T/tc.txt" "free space kept")
    within "$v" $LIVE 0.15 || { fail "tcmalloc: free space $v, want $LIVE +-15%"; show "$T/tc.txt"; }
fi

rc=0; "$CLI" stats >/dev/null 2>&1 || rc=$?
[ $rc -eq 1 ] || fail "no argument: status $rc, want 1"
rc=0; "$CLI" stats "$T/missing.pb.gz" >/dev/null 2>&1 || rc=$?
[ $rc -eq 3 ] || fail "missing file: status $rc, want 3"
[ $FAILS -eq 0 ] && echo "stats_reconcile: ok"
exit $((FAILS > 0))

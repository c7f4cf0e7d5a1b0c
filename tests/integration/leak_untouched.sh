#!/bin/sh
# leak_untouched: the reachability scan reads only pages that hold something
# (docs/leaks.md). tests/programs/untouched.c holds one pointer in the one written page of
# a 1 GiB MAP_NORESERVE reservation, one in a page given back with MADV_DONTNEED, and one
# that a forked child wrote into a page of a shared anonymous mapping the program itself
# never touched; then it calls heapsift_leak_check at HEAPSIFT_RATE=1, once stopped in
# place (HEAPSIFT_LEAKS_SNAPSHOT=0, the process itself reads) and once on a snapshot (its
# child reads; the figures come back to the comment).
#  - The program's VmRSS grows by less than 32 MiB over the check (reading the
#    reservation's pages made the whole GiB resident, and heapsift's own reserved tables
#    about 40 MB more).
#  - go tool pprof -tagfocus reachable=yes|no: resv_kept and shared_kept reachable (the
#    shared page is read though it is not mapped here), dontneed_lost and plain_lost not,
#    4000 B each, as the program's truth says.
#  - The profile's comment counts at least 1,000 MiB untouched, not read.
# usage: leak_untouched.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" leak_untouched
hs_need_go
PROG=$BUILD/programs/untouched
hs_need_built "$LIB" "$PROG"
export GOCACHE="$T/gocache" HOME="$T"

for snap in 0 1; do
    HEAPSIFT_LEAKS_SNAPSHOT=$snap HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/exit.pb.gz" LD_PRELOAD="$LIB" \
        "$PROG" "$T/c$snap.pb.gz" >"$T/out$snap" 2>"$T/err$snap" ||
        { fail "untouched (snapshot=$snap): status $?"; show "$T/err$snap"; }
    grep -q '^CHECK 0$' "$T/out$snap" || { fail "snapshot=$snap: no answer 0"; show "$T/out$snap"; }
    set -- $(sed -n 's/^RSS //p' "$T/out$snap")
    echo "snapshot=$snap: VmRSS over the check: $1 kB -> $2 kB"
    [ $(($2 - $1)) -lt 32768 ] ||
        fail "snapshot=$snap: the leak check made $(($2 - $1)) kB resident (untouched pages read)"

    for class in yes no; do
        go tool pprof -symbolize=none -top -unit=B -nodefraction=0 -nodecount=0 -sample_index=inuse_space \
            -tagfocus "reachable=$class" "$T/c$snap.pb.gz" >"$T/go.$class" 2>&1 ||
            { fail "go tool pprof"; show "$T/go.$class"; }
    done
    grep '^SITE ' "$T/out$snap" >"$T/truth"
    while read -r _ site cls bytes _; do
        want=$([ "$cls" = reachable ] && echo yes || echo no)
        awk -v s="$site" -v b="$bytes" '$NF == s && $4 == b "B" { ok = 1 } END { exit !ok }' "$T/go.$want" ||
            { fail "snapshot=$snap: $site: not $bytes B at reachable=$want"; show "$T/go.$want" 20; }
    done <"$T/truth"
    go tool pprof -comments "$T/c$snap.pb.gz" 2>/dev/null | grep '^reachability scan:' >"$T/comment" || true
    sed -n 's/.*MiB read (\([0-9.]*\) MiB untouched, not read).*/\1/p' "$T/comment" >"$T/untouched"
    awk '$1 >= 1000 { ok = 1 } END { exit !ok }' "$T/untouched" ||
        { fail "snapshot=$snap: the comment does not count the reservation as untouched"; show "$T/comment"; }
done
[ "$FAILS" = 0 ] && echo "PASS: leak_untouched" || exit 1

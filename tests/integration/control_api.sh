#!/bin/sh
# control_api: the runtime API of include/heapsift.h, through tests/programs/ctl_api.c
# (built with HEAPSIFT_WEAK: no -lheapsift).
#  - without the library: it runs, every call returns -ENOSYS;
#  - set_active(0): site_off (allocated while off) has no sample, site_on (before) holds
#    exactly its 4 MiB (rate 1);
#  - reset: alloc_space of site_gone and site_on is zero afterwards, site_on still in use;
#  - set_rate(4096) from rate 1: the period becomes 4096, 16384 blocks of 256 bytes give
#    16384 samples before and 600..1400 after (expected 993), and site_r2's estimate is
#    within 15% of its 4 MiB;
#  - stats: exact allocs >= the program's 35840 (3 x 1024 + 2 x 16384 malloc calls), live within 5% of 12 MiB, an
#    interval within 10% of the half-width its three live sites give at the highest rate
#    seen (docs/sampling.md: 1.96 sqrt(sum B s (w - 1)), w = 1/(1 - exp(-s/4096)); 4 MiB
#    of 4096-byte objects and twice 4 MiB of 256-byte ones: about 408 KB; site_r2's
#    estimate moves it by 3% at most), RSS above the live heap, profiler memory > 0;
#  - heapsift_write: gzipped and raw pprof, both read by go tool pprof.
# usage: control_api.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" control-api
PROG=$BUILD/programs/ctl_api
hs_need_go

"$PROG" "$T" >"$T/none" 2>&1 || fail "without the library: status $?"
grep -q '^loaded 0$' "$T/none" && grep -q '^active -38 -38$' "$T/none" &&
    grep -q '^stats -38 ' "$T/none" || { fail "without the library: want -ENOSYS everywhere"; show "$T/none"; }
[ -z "$(find "$T" -name '*.pb*' -size +0)" ] || fail "without the library: profiles were written"

HEAPSIFT_RATE=1 HEAPSIFT_OUT="$T/exit.pb.gz" LD_PRELOAD="$LIB" "$PROG" "$T" >"$T/out" 2>"$T/err" ||
    fail "with the library: status $?"
val() { # FILE SAMPLE_TYPE SITE
    gotop "$1" "$2" 2>/dev/null | table | awk -F '\t' -v s="$3" '$1 ~ "^" s { print $2 }'
}
line() { sed -n "s/^$1 //p" "$T/out"; }
[ "$(line active)" = "0 0" ] || fail "set_active/dump returned '$(line active)'"
[ "$(val "$T/off.pb.gz" inuse_space site_on)" = 4194304 ] || fail "off.pb.gz: site_on is not 4 MiB"
[ -z "$(val "$T/off.pb.gz" alloc_space site_off)" ] || fail "off.pb.gz: site_off was sampled while off"
[ "$(line reset)" = "0 0" ] || fail "reset/dump returned '$(line reset)'"
[ -z "$(val "$T/reset.pb.gz" alloc_space site_gone)" ] || fail "reset.pb.gz: site_gone still has alloc_space"
[ -z "$(val "$T/reset.pb.gz" alloc_space site_on)" ] || fail "reset.pb.gz: site_on still has alloc_space"
[ "$(val "$T/reset.pb.gz" inuse_space site_on)" = 4194304 ] || fail "reset.pb.gz: site_on no longer in use"
set -- $(line rate)
[ "$1 $2" = "0 0" ] && [ "$3" -eq 16384 ] && [ "$4" -ge 600 ] && [ "$4" -le 1400 ] ||
    fail "set_rate: '$(line rate)', want '0 0 16384 600..1400'"
go tool pprof -raw "$T/rate.pb.gz" 2>/dev/null | grep -q '^Period: 4096$' || fail "rate.pb.gz: period is not 4096"
r2=$(val "$T/rate.pb.gz" inuse_space site_r2)
awk -v v="${r2:-0}" 'BEGIN { exit !(v > 0.85 * 4194304 && v < 1.15 * 4194304) }' ||
    fail "rate.pb.gz: site_r2 holds '$r2', want 4 MiB +-15%"
set -- $(line stats)
[ "$1" = 0 ] && [ "$2" -ge 35840 ] || fail "stats: '$(line stats)'"
ci=$(awk 'BEGIN { R = 4096; split("4096 256 256", s, " ")
    for (i = 1; i <= 3; i++) v += 4194304 * s[i] * (1 / (1 - exp(-s[i] / R)) - 1)
    printf "%.0f\n", 1.96 * sqrt(v) }')
awk -v l="$3" -v c="$4" -v r="$5" -v p="$6" -v ci="$ci" 'BEGIN { w = 12582912
    exit !(l > 0.95 * w && l < 1.05 * w && c > 0.9 * ci && c < 1.1 * ci && r > l && p > 0) }' ||
    fail "stats: live=$3 ci95=$4 rss=$5 profiler=$6, want live 12 MiB +-5%, ci95 $ci +-10%, rss > live"
[ "$(line write)" = "0 0" ] || fail "heapsift_write returned '$(line write)'"
for f in write.pb.gz write.pb; do
    [ "$(val "$T/$f" inuse_space site_on)" = 4194304 ] || fail "$f: unreadable or site_on not 4 MiB"
done
[ "$(line bad)" = "-22 -9" ] || fail "set_rate(0)/write(-1): '$(line bad)', want '-22 -9'"
[ $FAILS -eq 0 ] && echo "control_api: ok"
exit $((FAILS > 0))

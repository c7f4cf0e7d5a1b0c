#!/bin/sh
# http_metrics: GET /metrics, Prometheus' text format (docs/fleet.md), on
# tests/programs/http_app.c at rate 262144 with a fixed seed (the estimates are the same
# from run to run) and HEAPSIFT_METRICS_SITES=2:
#  - 200 with the format's content type; promtool check metrics accepts the page; every
#    counter's name ends in _total; every family's samples follow its HELP and TYPE;
#  - the exact counters cover the program's 144 + 16 blocks of 64 KiB; samples_total is
#    above 0 and at most allocations_total;
#  - site_old holds 9,437,184 B live (144 blocks): its 95% interval holds that figure, and
#    so does the live heap's (the program's few KiB of stdio beside it); site_old comes
#    before site_window (1 MiB), and there are exactly 2 sites (the bound);
#  - the site labels are the same after the cached profile was built again;
#  - an RSS series per part of heapsift stats;
#  - profiles_written_total{kind="heap"} counts a dump; heapsift_leak_unreachable_bytes
#    appears after a leak check, 0 for a program whose blocks all stay reachable.
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" http-metrics
. "$(dirname "$0")/../lib/http.sh"
http_need
command -v promtool >/dev/null 2>&1 || { echo "SKIP: promtool not found (Debian's prometheus)"; exit 77; }
app_start HEAPSIFT_RATE=262144 HEAPSIFT_SEED=1 HEAPSIFT_METRICS_SITES=2 HEAPSIFT_HTTP_TOKEN=tok
app old 144 >/dev/null
app window 16 >/dev/null

# val FILE SERIES: the value of the series (name with its labels, as written).
val() {
    awk -v s="$2" '$1 == s { print $2 }' "$1"
}
# between LO X HI: LO <= X <= HI (reals).
between() {
    awk -v l="$1" -v x="$2" -v h="$3" 'BEGIN { exit !(l != "" && h != "" && l + 0 <= x + 0 && x + 0 <= h + 0) }'
}

ct=$(curl -sS -o "$T/m1" -w '%{content_type}' "$URL/metrics")
[ "$ct" = "text/plain; version=0.0.4; charset=utf-8" ] || fail "/metrics: content type '$ct'"
promtool check metrics <"$T/m1" >"$T/promtool" 2>&1 || { fail "promtool check metrics rejects the page"; show "$T/promtool"; }
awk '$1 == "#" && $2 == "TYPE" && $4 == "counter" && $3 !~ /_total$/ { print $3; bad = 1 } END { exit bad }' "$T/m1" ||
    fail "a counter's name does not end in _total"
# Each sample line belongs to the family of the TYPE line above it.
awk '$1 == "#" && $2 == "TYPE" { fam = $3; next } /^#/ { next }
     { n = $1; sub(/\{.*/, "", n); if (n != fam) { print n " under " fam; bad = 1 } } END { exit bad }' "$T/m1" ||
    fail "a series away from its family's HELP and TYPE"
for m in heapsift_heap_live_bytes heapsift_heap_live_lo95_bytes heapsift_heap_live_hi95_bytes \
    heapsift_allocated_bytes_total heapsift_allocations_total heapsift_frees_total heapsift_samples_total; do
    [ -n "$(val "$T/m1" $m)" ] || fail "no series $m"
done

allocs=$(val "$T/m1" heapsift_allocations_total)
bytes=$(val "$T/m1" heapsift_allocated_bytes_total)
samples=$(val "$T/m1" heapsift_samples_total)
between 160 "$allocs" 100000 || fail "allocations_total $allocs: want at least the 160 blocks"
between 10485760 "$bytes" 11534336 || fail "allocated_bytes_total $bytes: want the 10,485,760 B of the blocks and little more"
between 1 "$samples" "$allocs" || fail "samples_total $samples: want 1 to allocations_total ($allocs)"

lo=$(val "$T/m1" 'heapsift_site_live_lo95_bytes{function="site_old"}')
hi=$(val "$T/m1" 'heapsift_site_live_hi95_bytes{function="site_old"}')
v=$(val "$T/m1" 'heapsift_site_live_bytes{function="site_old"}')
between "$lo" 9437184 "$hi" && between "$lo" "$v" "$hi" ||
    { fail "site_old: 9437184 B not inside its 95% interval ($lo..$hi, estimate $v)"; show "$T/m1"; }
between 1 "$lo" 9437183 && between 9437185 "$hi" 1e12 || fail "site_old: an interval of no width at rate 262144 ($lo..$hi)"
lo=$(val "$T/m1" heapsift_heap_live_lo95_bytes)
hi=$(val "$T/m1" heapsift_heap_live_hi95_bytes)
between "$lo" 10485760 "$hi" || fail "live heap: 10,485,760 B not inside its 95% interval ($lo..$hi)"
grep '^heapsift_site_live_bytes{' "$T/m1" | sed 's/.*function="\([^"]*\)".*/\1/' >"$T/sites1"
[ "$(cat "$T/sites1")" = "$(printf 'site_old\nsite_window')" ] ||
    { fail "sites: want site_old then site_window, the top 2"; show "$T/sites1"; }

for p in heap profiler_tables stacks code other_anon; do
    [ -n "$(val "$T/m1" "heapsift_rss_bytes{part=\"$p\"}")" ] || fail "no heapsift_rss_bytes{part=\"$p\"}"
done

# The labels again once the cached profile was built anew (it is kept 1 s).
b0=$(http_stat builds)
hs_until 30 "a new build of the cached profile" \
    'curl -sS -o "$T/m2" "$URL/metrics" && [ "$(http_stat builds)" -gt "$b0" ]' || true
grep '^heapsift_site_live_bytes{' "$T/m2" | sed 's/.*function="\([^"]*\)".*/\1/' | cmp -s - "$T/sites1" ||
    fail "the site labels changed from one scrape to the next"

[ "$(val "$T/m2" 'heapsift_profiles_written_total{kind="heap"}')" = 0 ] || fail "profiles_written_total: want 0 before any dump"
grep -q '^heapsift_leak_unreachable_bytes' "$T/m2" && fail "leak_unreachable_bytes before any leak check"
curl -sS -X POST -H 'Authorization: Bearer tok' -o /dev/null "$URL/debug/heapsift/dump"
curl -sS -X POST -H 'Authorization: Bearer tok' -o /dev/null "$URL/debug/heapsift/leakcheck"
curl -sS -o "$T/m3" "$URL/metrics"
[ "$(val "$T/m3" 'heapsift_profiles_written_total{kind="heap"}')" = 1 ] || fail "profiles_written_total{kind=\"heap\"}: want 1 after a dump"
[ "$(val "$T/m3" heapsift_leak_unreachable_bytes)" = 0 ] || { fail "leak_unreachable_bytes: want 0 after the check"; show "$T/m3"; }
promtool check metrics <"$T/m3" >"$T/promtool" 2>&1 || { fail "promtool check metrics rejects the page after the checks"; show "$T/promtool"; }

app_stop
[ "$FAILS" = 0 ] || exit 1
echo "ok: http_metrics"

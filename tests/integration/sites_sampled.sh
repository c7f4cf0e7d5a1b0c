#!/bin/sh
# sites_sampled: tests/programs/sites.c profiled at HEAPSIFT_RATE=4096 with a fixed
# HEAPSIFT_SEED: each site's inuse_space and alloc_space estimates (the unbiased, sampled
# values) must lie within 10% of the truth the program reports, through `go tool pprof -top`
# and through `heapsift top`. With ~4000 objects of 4096 bytes per site the relative standard
# error is about 1.2% (site_small: 200000 x 64 bytes, about 1.8%), so 10% is > 5 sigma.
# usage: sites_sampled.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/../lib/common.sh"
hs_setup "$1" sites-sampled
PROG=${HS_SITES_PROG:-$BUILD/programs/sites} # reach_hooks.sh runs it on static-allocator builds
hs_need_go
hs_need_built "$LIB" "$CLI" "$PROG"

HEAPSIFT_RATE=4096 HEAPSIFT_SEED=12345 HEAPSIFT_OUT="$T/sites.pb.gz" LD_PRELOAD="$LIB" \
    "$PROG" --expect >"$T/expect" 2>"$T/stderr" ||
    { rc=$?; cat "$T/stderr" >&2; echo "FAIL: sites exited with status $rc" >&2; exit 1; }
[ -s "$T/sites.pb.gz" ] || { cat "$T/stderr" >&2; echo "FAIL: no profile at $T/sites.pb.gz" >&2; exit 1; }
[ -s "$T/expect" ] || { echo "FAIL: sites printed no expectations" >&2; exit 1; }

for st in alloc_space inuse_space; do
    col=$([ $st = inuse_space ] && echo 6 || echo 4)
    if gotop "$T/sites.pb.gz" $st >"$T/go.$st" 2>"$T/go.$st.err"; then
        table <"$T/go.$st" >"$T/go.$st.tab"
        compare "go pprof $st" "$T/expect" "$T/go.$st.tab" "$col" 0.1 ||
            { fail "go tool pprof -top -sample_index=$st at rate 4096"; show "$T/go.$st"; }
    else
        fail "go tool pprof -top -sample_index=$st: $(head -3 "$T/go.$st.err")"
    fi
    if hstop "$T/sites.pb.gz" $st >"$T/hs.$st" 2>"$T/hs.$st.err"; then
        table <"$T/hs.$st" >"$T/hs.$st.tab"
        [ -s "$T/hs.$st.tab" ] || { fail "heapsift top --sample-type $st: no table"; show "$T/hs.$st"; }
        compare "heapsift top $st" "$T/expect" "$T/hs.$st.tab" "$col" 0.1 ||
            { fail "heapsift top --sample-type $st at rate 4096"; show "$T/hs.$st"; }
    else
        fail "heapsift top --sample-type $st: status $?: $(head -3 "$T/hs.$st.err")"
    fi
done

# The period is the rate: `go tool pprof -raw` prints "Period: 4096".
if go tool pprof -symbolize=none -raw "$T/sites.pb.gz" >"$T/raw" 2>&1; then
    grep -q '^Period: 4096$' "$T/raw" || { fail "period is not 4096"; show "$T/raw" 5; }
else
    fail "go tool pprof -raw: $(head -3 "$T/raw")"
fi

if [ $FAILS -ne 0 ]; then
    echo "sites_sampled: $FAILS check(s) failed" >&2
    exit 1
fi
echo "sites_sampled: ok"

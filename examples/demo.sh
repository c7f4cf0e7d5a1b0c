#!/bin/sh
# examples/demo.sh: heapsift's first-run tour. Runs the bundled example (BUILD/lru_cache, a
# database-style plan cache: examples/lru_cache.c) under `heapsift run`, writes its heap
# profile to BUILD/demo/, prints the top of the profile with `heapsift top`, explains what
# the user is looking at, and shows the equivalent `go tool pprof` command when Go is
# installed, then runs the tracked cache (BUILD/tracked_lru, examples/tracked_lru.c),
# which sizes itself with a heapsift tracker. It builds nothing except the example target
# when an older configuration of BUILD predates it. Exits non-zero if a step fails; a `top` verb the build does not have
# yet is reported and skipped rather than failed. Called by `make demo` as `sh examples/demo.sh BUILD`.
#
# Usage: sh examples/demo.sh BUILD
# Environment: DEMO_QUERIES, DEMO_CAPACITY (the example's arguments; defaults 250000, 4000),
#              DEMO_RATE (passed as `heapsift run --rate`; unset = the default 524288).
set -eu

if [ $# -ne 1 ]; then
    echo "usage: sh examples/demo.sh BUILD" >&2
    exit 1
fi
build=$1
heapsift=$build/heapsift
lru=$build/lru_cache
outdir=$build/demo
queries=${DEMO_QUERIES:-250000}
capacity=${DEMO_CAPACITY:-4000}

section() {
    echo
    echo "=== $* ==="
    echo
}

fail() {
    echo "demo: error: $*" >&2
    exit 1
}

[ -x "$heapsift" ] || fail "$heapsift not found (build first: make)"
[ -f "$build/libheapsift.so" ] || fail "$build/libheapsift.so not found (build first: make)"
if [ ! -x "$lru" ]; then
    # A build directory configured before examples/lru_cache.c existed has no such target.
    echo "demo: $lru missing; reconfiguring $build to add it" >&2
    cmake "$build" >/dev/null || fail "cmake could not reconfigure $build"
    cmake --build "$build" --target lru_cache >/dev/null || fail "could not build lru_cache"
fi

mkdir -p "$outdir"
rm -f "$outdir"/lru.*.pb.gz

section "1. The program: a plan cache (examples/lru_cache.c)"
cat <<EOF
lru_cache imitates the statement plan cache of a SQL database (TiDB's SimpleLRUCache).
Each query is a SQL string; on a cache miss the program builds a "plan", a small tree
allocated by build_plan -> plan_alloc_node / plan_alloc_exprs / plan_alloc_stats /
plan_copy_sql, and keeps it in an LRU cache of $capacity entries, evicting (freeing) the
least recently used plan. Every query also allocates scratch buffers (query_format,
query_digest, execute_plan) and frees them at once. It runs $queries queries drawn from a
skewed distribution, and at exit the cache is still full, as in a long-running server.
EOF

section "2. Running it under heapsift"
rate_opt=""
rate_text="one sample per 512 KiB allocated, on average"
if [ -n "${DEMO_RATE:-}" ]; then
    rate_opt="--rate $DEMO_RATE "
    rate_text="one sample per $DEMO_RATE bytes allocated, on average"
fi
echo "\$ $heapsift run -o $outdir/lru.%p.pb.gz $rate_opt-- $lru $queries $capacity"
echo
# shellcheck disable=SC2086
"$heapsift" run -o "$outdir/lru.%p.pb.gz" $rate_opt-- "$lru" "$queries" "$capacity" ||
    fail "heapsift run failed (exit $?)"

profile=""
for f in "$outdir"/lru.*.pb.gz; do
    [ -f "$f" ] && profile=$f
done
[ -n "$profile" ] || fail "no profile was written to $outdir"
echo
echo "The profile (gzipped pprof protobuf) is $profile ($(wc -c <"$profile") bytes)."

top_missing=0

# Runs `heapsift top ARGS`; a top verb this build does not have yet is reported, not failed.
show_top() {
    echo "\$ $heapsift top $*"
    echo
    status=0
    "$heapsift" top "$@" 2>"$outdir/top.err" || status=$?
    if [ "$status" -ne 0 ]; then
        cat "$outdir/top.err" >&2
        if [ "$status" -eq 1 ] && grep -qi "unknown\|not implemented" "$outdir/top.err"; then
            echo "(heapsift top is not available in this build yet; see the pprof commands below)"
            top_missing=1
        else
            rm -f "$outdir/top.err"
            fail "heapsift top failed (exit $status)"
        fi
    fi
    rm -f "$outdir/top.err"
}

section "3. Who holds the memory now: heapsift top (inuse_space)"
show_top --unit auto -n 15 "$profile"

section "4. How to read it"
cat <<EOF
inuse_space, the default view, is memory allocated and not yet freed when the profile was
written: here, the plan cache. "flat" is what a function allocated itself, "cum" adds what
the functions it called allocated. The plan_alloc_* functions and plan_copy_sql (all
under build_plan) should hold most of it, cache_copy_key and cache_put the keys and the
entries, zipf_init the workload's own table. Their total should be close to the "live
cache bytes" line the program printed (plus zipf_init's 0.4 MB), give or take the
sampling error: heapsift takes $rate_text,
and the header says how many samples the figures rest on. A smaller --rate (e.g. 65536)
gives finer estimates at a higher cost.
EOF

section "5. Who allocated the most overall: heapsift top --sample-type alloc_space"
show_top --sample-type alloc_space --unit auto -n 8 "$profile"
echo
cat <<EOF
alloc_space counts every byte allocated during the run, freed or not. The per-query
scratch buffers of execute_plan, query_format and query_digest, absent from inuse_space
because they were freed at once, dominate it: they cost allocator time, not memory.
A leak hunt reads inuse_space; a malloc-heavy hot path shows in alloc_space.
EOF

section "6. The same file in Go's pprof"
if command -v go >/dev/null 2>&1; then
    echo "heapsift writes the pprof format, so Go's tools read the same file:"
    echo
    echo "    go tool pprof -top $profile"
    echo "    go tool pprof -top -sample_index=alloc_space $profile"
    echo "    go tool pprof -http=localhost:8080 $profile"
else
    echo "Go is not installed. With it, 'go tool pprof -top $profile' reads the same file."
    [ "$top_missing" -eq 0 ] || fail "no way to show the profile: heapsift top is missing"
fi
section "7. A cache that reads its own size: trackers (examples/tracked_lru.c)"
tracked=$build/tracked_lru
if [ -x "$tracked" ]; then
    cat <<EOF
The profile above answers "how big is the plan cache?" after the fact. tracked_lru asks
while it runs: it registers a tracker on its insertion function,
heapsift_tracker_new("plan_cache", "lru_put"), and after every insertion reads
heapsift_tracker_bytes(), the live bytes allocated under lru_put (an O(1) read, no
profile written), evicting while that is above its quota of 8 MiB. It prints the tracked
figure against the bytes it really holds, with the 95% interval of the estimate.
EOF
    echo
    echo "\$ $heapsift run -q --rate 16384 -o $outdir/tracked.%p.pb.gz -- $tracked 100000"
    echo
    "$heapsift" run -q --rate 16384 -o "$outdir/tracked.%p.pb.gz" -- "$tracked" 100000 |
        awk '$1 != "step" || ++n % 5 == 0' || fail "tracked_lru failed"
    echo
    echo "(docs/labels.md: labels, trackers, what they cost and what they catch)"
else
    echo "($tracked is not built: reconfigure $build to add it)"
fi

echo
echo "demo: done; the profile stays in $outdir"

#!/bin/sh
# semantics: the allocation entry points behave as the allocator under them does, errno
# included (tests/programs/stress_semantics.c for the C functions, stress_newfail.cc for
# operator new). Each program prints what it observes for malloc(0), free(NULL),
# realloc(p, 0), realloc(NULL, n), huge sizes, calloc and reallocarray overflow, bad and
# good alignments of posix_memalign, aligned_alloc, memalign, valloc and pvalloc,
# malloc_usable_size, errno after successful calls, failing and nothrow new, new_handler,
# and new under RLIMIT_AS, over many rounds so that sampled and unsampled calls both occur.
# On glibc, on jemalloc and on tcmalloc, the output and exit status under heapsift
# (HEAPSIFT_RATE=1 and the default) must equal those without it; on glibc, nothing may
# be UNEXPECTED (what glibc documents). The rate-1 runs' exit profiles must be valid.
# usage: semantics.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" semantics stress_semantics stress_newfail
LIBDIR=/usr/lib/x86_64-linux-gnu

# compare PROG ALLOC-LABEL ALLOC-PRELOAD: baseline vs heapsift at two rates
compare_runs() {
    prog=$1 al=$2 pre=$3
    base=$T/$prog.$al.base
    rc0=0
    env ${pre:+LD_PRELOAD="$pre"} STRESS_SKIP="$SKIP" timeout -k 5 60 "$BUILD/programs/$prog" \
        >"$base" 2>"$base.err" || rc0=$?
    [ $rc0 -lt 124 ] || { fail "$prog on $al without heapsift: status $rc0"; show "$base.err"; return 0; }
    if [ "$al" = glibc ] && grep -q UNEXPECTED "$base"; then
        fail "$prog on glibc without heapsift already breaks expectations (the test is wrong):"
        grep UNEXPECTED "$base" | show /dev/stdin
    fi
    for rate in 1 524288; do
        out=$T/$prog.$al.$rate
        mkdir -p "$out.d"
        bounded 60 "$prog on $al, rate $rate" env LD_PRELOAD="$LIB${pre:+ $pre}" \
            STRESS_SKIP="$SKIP" HEAPSIFT_RATE=$rate HEAPSIFT_OUT="$out.d/exit.pb.gz" \
            "$BUILD/programs/$prog" >"$out" 2>"$out.err" || true
        [ "$RC" -ge 124 ] && { show "$out.err"; continue; }
        [ "$RC" -eq $rc0 ] ||
            fail "$prog on $al, rate $rate: exit status $RC under heapsift, $rc0 without"
        if ! diff "$base" "$out" >"$out.diff"; then
            fail "$prog on $al, rate $rate: output differs from the run without heapsift (< without, > with):"
            show "$out.diff"
        fi
        [ $rate = 1 ] && valid "$out.d/exit.pb.gz" "$prog on $al, rate $rate: exit profile"
    done
    echo "$prog on $al: $(grep -c . "$base") observations compared$(grep -q UNEXPECTED "$base" &&
        echo ", $(grep -c UNEXPECTED "$base") of them unlike glibc's documentation (the allocator's own)")"
}

for prog in stress_semantics stress_newfail; do
    SKIP=""
    compare_runs $prog glibc ""
    if [ -e $LIBDIR/libjemalloc.so.2 ]; then
        SKIP="pvalloc reallocarray" # jemalloc defines neither: glibc's would act on its blocks
        compare_runs $prog jemalloc $LIBDIR/libjemalloc.so.2
    else
        echo "note: $LIBDIR/libjemalloc.so.2 not found, jemalloc not covered" >&2
    fi
    SKIP=""
    if [ -e $LIBDIR/libtcmalloc_minimal.so.4 ]; then
        compare_runs $prog tcmalloc $LIBDIR/libtcmalloc_minimal.so.4
    else
        echo "note: $LIBDIR/libtcmalloc_minimal.so.4 not found, tcmalloc not covered" >&2
    fi
done
finish

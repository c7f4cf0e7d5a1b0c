#!/bin/sh
# threads_dump: 16 threads allocate, resize and free mixed sizes through malloc, calloc,
# realloc, posix_memalign, aligned_alloc and memalign (tests/programs/stress_threads.c,
# which pattern-checks every block) while another thread calls heapsift_dump back to back
# (every 10 ms, or as fast as dumps complete). At HEAPSIFT_RATE=1, 4096 and the default,
# and at rate 1 with the libgcc unwinder:
#  - no hang, no crash, no corrupted block, every heapsift_dump returns 0;
#  - every profile written (the dumps, the final two and the exit profile) reads with
#    `heapsift top` and `go tool pprof -raw`;
#  - at rate 1 the profile taken with the workers' blocks live holds exactly the bytes the
#    program says are live in its site_* functions, and after it frees them, none.
# usage: threads_dump.sh BUILD_DIR SOURCE_DIR
set -eu
. "$(dirname "$0")/stress.inc"
stress_setup "$1" threads-dump stress_threads
PROG=$BUILD/programs/stress_threads
SITES="site_malloc site_calloc site_realloc_new site_posix_memalign site_aligned_alloc \
site_memalign site_realloc"
SECS=${HS_STRESS_SECS:-3}

# one LABEL RATE UNWIND
one() {
    label=$1 dir=$T/$1
    mkdir -p "$dir"
    bounded 60 "$label" env HEAPSIFT_RATE="$2" HEAPSIFT_UNWIND="$3" HEAPSIFT_SEED=7 \
        HEAPSIFT_OUT="$dir/exit.%p.pb.gz" LD_PRELOAD="$LIB" "$PROG" "$dir" "$SECS" 16 \
        >"$T/$label.out" 2>"$T/$label.err" || {
        [ "$RC" -ne 0 ] && [ "$RC" -lt 124 ] && fail "$label: stress_threads exited $RC"
        show "$T/$label.err" 10
        show "$T/$label.out" 5
        return 0
    }
    echo "$label: $(tail -n 1 "$T/$label.out")"
    n=0
    for f in "$dir"/dump.*.pb.gz; do
        [ -e "$f" ] || continue
        n=$((n + 1))
        valid "$f" "$label: $(basename "$f")" || break
    done
    [ "$n" -ge 3 ] || fail "$label: only $n dump(s) written while the workers ran, want 3"
    for f in live freed; do
        valid "$dir/$f.pb.gz" "$label: $f.pb.gz"
    done
    set -- "$dir"/exit.*.pb.gz
    [ $# -eq 1 ] && [ -e "$1" ] || fail "$label: want one exit profile, got: $(ls "$dir" | grep exit)"
    [ -e "$1" ] && valid "$1" "$label: exit profile"
    [ "$label" = rate1 ] || [ "$label" = rate1-libgcc ] || return 0
    live=$(sed -n 's/^live_bytes=//p' "$T/$label.out")
    # shellcheck disable=SC2086
    got=$(inuse_of "$dir/live.pb.gz" $SITES)
    [ "$got" = "$live" ] ||
        fail "$label: live.pb.gz: inuse_space of the site_* functions = ${got:-unreadable}, want $live"
    # shellcheck disable=SC2086
    got=$(inuse_of "$dir/freed.pb.gz" $SITES)
    [ "$got" = 0 ] ||
        fail "$label: freed.pb.gz: inuse_space of the site_* functions = ${got:-unreadable}, want 0"
}

one rate1 1 dwarf
one rate4096 4096 dwarf
one default 524288 dwarf
one rate1-libgcc 1 libgcc
finish

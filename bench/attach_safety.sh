#!/bin/sh
# bench/attach_safety.sh: does `heapsift attach` ever hurt a program that is inside malloc
# nearly all the time (issue 44)? For each allocator (glibc; jemalloc and tcmalloc
# preloaded; tcmalloc linked in statically) and 1, 4 and 16 threads of
# tests/programs/attach_busy (each looping free + malloc of 100 to 5,099 bytes): ATTACHES
# attaches at moments spread over 1-200 ms (--seconds 0.1, which detaches at its end), then
# KILLS attaches whose command is killed 1 to 200 ms in (SIGKILL, SIGINT, SIGTERM in turn,
# SIGINT with its default action as from a terminal), each followed by a detach. Counted:
# target deaths, hangs (a target that does not end within 30 s of being told to, or a
# command that does not end within 60 s), a target whose output, status or stderr changed,
# attaches that failed; and from attach's own line, the longest hold of a program thread
# and the threads stopped to find one at a safe point. Correctness is what the test
# (tests/integration/attach_busy.sh) asserts; this counts it at the issue's scale.
# usage: sh bench/attach_safety.sh BUILD [--record]
# env: ATTACHES (50), KILLS (50), THREADS ("1 4 16"), ALLOCS ("glibc jemalloc tcmalloc static")
set -eu
BENCH_NO_BEFORE=1
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/attach_safety.sh BUILD [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
cli=$build/heapsift
[ -x "$cli" ] || { echo "attach_safety: no $cli (build first)" >&2; exit 1; }
attaches=${ATTACHES:-50} kills=${KILLS:-50} threads_list=${THREADS:-"1 4 16"}
allocs=${ALLOCS:-"glibc jemalloc tcmalloc static"}
libdir=/usr/lib/x86_64-linux-gnu
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-attach-safety.XXXXXX")
target=
trap '[ -z "$target" ] || kill -9 "$target" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
src=$here/../tests/programs/attach_busy.c
cc -O2 -g -pthread -o "$tmp/busy" "$src"
cc -O2 -g -pthread -o "$tmp/busy_static" "$src" -Wl,-Bstatic -l:libtcmalloc_minimal.a \
    -Wl,-Bdynamic -lstdc++ -lm
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
ms() { date +%s%3N; }
# moment K: 1 to 200 ms, spread without a random source
moment() { printf '0.%03d' $(( (($1 * 37) % 200) + 1 )); }

# start ALLOC THREADS: a fresh target in $tmp/d; sets target.
start() {
    rm -rf "$tmp/d" && mkdir -p "$tmp/d"
    prog=$tmp/busy pre=
    case $1 in
    jemalloc) pre=$libdir/libjemalloc.so.2 ;;
    tcmalloc) pre=$libdir/libtcmalloc_minimal.so.4 ;;
    static) prog=$tmp/busy_static ;;
    esac
    if [ -n "$pre" ]; then
        LD_PRELOAD=$pre "$prog" "$tmp/d" "$2" >"$tmp/out" 2>"$tmp/err" &
    else
        "$prog" "$tmp/d" "$2" >"$tmp/out" 2>"$tmp/err" &
    fi
    target=$!
    i=0
    until grep -q '^ready$' "$tmp/out" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 3000 ] || { echo "attach_safety: the target never got ready" >&2; exit 1; }
        sleep 0.01
    done
}

# config ALLOC THREADS: one row of counts, and the holds and stops in $tmp/holds, $tmp/stops.
config() {
    deaths=0 hangs=0 changed=0 failed=0
    : >"$tmp/holds"; : >"$tmp/stops"; : >"$tmp/times"
    start "$1" "$2"
    k=1
    while [ $k -le "$attaches" ] && kill -0 "$target" 2>/dev/null; do
        sleep "$(moment $((k + $2)))"
        t0=$(ms); rc=0
        timeout 60 "$cli" attach --seconds 0.1 -o "$tmp/p.pb.gz" "$target" >/dev/null 2>"$tmp/a.err" || rc=$?
        t1=$(ms)
        [ "$rc" != 124 ] || hangs=$((hangs + 1))
        [ "$rc" = 0 ] || failed=$((failed + 1))
        echo $((t1 - t0)) >>"$tmp/times"
        sed -n 's/.*stopped, for \([0-9.]*\) ms at most.*/\1/p' "$tmp/a.err" >>"$tmp/holds"
        sed -n 's/.*; \([0-9]*\) stopped to find one.*/\1/p' "$tmp/a.err" >>"$tmp/stops"
        k=$((k + 1))
    done
    k=1
    while [ $k -le "$kills" ] && kill -0 "$target" 2>/dev/null; do
        case $((k % 3)) in 0) sig=KILL ;; 1) sig=INT ;; *) sig=TERM ;; esac
        env --default-signal=INT "$cli" attach -o "$tmp/q.pb.gz" "$target" >/dev/null 2>&1 &
        apid=$!
        sleep "$(moment $((k * 5 + $2)))"
        kill -s "$sig" "$apid" 2>/dev/null || true
        i=0
        while kill -0 "$apid" 2>/dev/null; do
            i=$((i + 1)); [ $i -lt 6000 ] || { hangs=$((hangs + 1)); kill -9 "$apid"; break; }
            sleep 0.01
        done
        wait "$apid" 2>/dev/null || true
        rc=0; timeout 60 "$cli" detach "$target" >/dev/null 2>&1 || rc=$?
        [ "$rc" != 124 ] || hangs=$((hangs + 1))
        k=$((k + 1))
    done
    : >"$tmp/d/end"
    i=0 status=none
    while kill -0 "$target" 2>/dev/null; do
        i=$((i + 1)); [ $i -lt 3000 ] || { hangs=$((hangs + 1)); kill -9 "$target"; break; }
        sleep 0.01
    done
    wait "$target" 2>/dev/null && status=0 || status=$?
    target=
    case $status in 0) ;; 1[2-9][0-9]) deaths=$((deaths + 1)) ;; *) changed=$((changed + 1)) ;; esac
    printf 'ready\nattach_busy: done\n' | cmp -s - "$tmp/out" || changed=$((changed + 1))
    [ ! -s "$tmp/err" ] || changed=$((changed + 1))
}

med() { sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
top() { sort -n | tail -n 1; }
: >"$tmp/rows"
for alloc in $allocs; do
    for th in $threads_list; do
        config "$alloc" "$th"
        echo "| $alloc | $th | $attaches | $kills | $deaths | $hangs | $changed | $failed | $(med <"$tmp/holds") | $(top <"$tmp/holds") | $(med <"$tmp/stops") | $(med <"$tmp/times") |" >>"$tmp/rows"
        tail -n 1 "$tmp/rows" >&2
    done
done
{
    echo "## $started: attach on programs busy in malloc (bench/attach_safety.sh)"
    echo
    bench_machine "$loadavg" "$build/libheapsift.so"
    echo "- load average after: $(cut -d' ' -f1-3 /proc/loadavg); commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown)"
    echo "- target: tests/programs/attach_busy (THREADS threads looping free + malloc); jemalloc and tcmalloc preloaded, static: tcmalloc_minimal linked in"
    echo
    echo "| allocator | threads | attaches | killed attaches | target deaths | hangs | output, status or stderr changed | attaches failed | hold, median (ms) | hold, worst (ms) | threads stopped, median | time to attach, median (ms) |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
    cat "$tmp/rows"
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"

#!/bin/sh
# bench/attach_load.sh: attach's safe-point search on a loaded machine, two builds
# interleaved. One target (tests/programs/attach_busy, THREADS threads looping free +
# malloc) beside HOGS busy loops of this script's own; ROUNDS rounds, each an attach
# --seconds 0.1 (which detaches at its end) by build A then by build B. Per build: attaches
# that failed, the median and worst threads stopped to find a safe point (attach's line),
# the median and worst time to attach and detach. The target must end with its output,
# status and stderr unchanged. Both commands load one library, LIB (build B's): attach
# refuses a process that maps another heapsift library, so what is compared is the
# commands' side (the search for a safe point, the injection).
# usage: sh bench/attach_load.sh BUILD_A BUILD_B
#   env: THREADS (4), HOGS (2), ROUNDS (15), LIB (BUILD_B/libheapsift.so)
set -eu
a=$1 b=$2 threads=${THREADS:-4} hogs=${HOGS:-2} rounds=${ROUNDS:-15}
lib=${LIB:-$b/libheapsift.so}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-attach-load.XXXXXX")
pids=
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null || true; done; rm -rf "$tmp"' EXIT INT TERM
cc -O2 -g -pthread -o "$tmp/busy" "$here/../tests/programs/attach_busy.c"
i=0
while [ $i -lt "$hogs" ]; do
    sh -c 'while :; do :; done' & pids="$pids $!"
    i=$((i + 1))
done
mkdir -p "$tmp/d"
"$tmp/busy" "$tmp/d" "$threads" >"$tmp/out" 2>"$tmp/err" & target=$!
pids="$pids $target"
i=0
until grep -q '^ready$' "$tmp/out" 2>/dev/null; do
    i=$((i + 1)); [ $i -lt 3000 ] || { echo "attach_load: the target never got ready" >&2; exit 1; }
    sleep 0.01
done
load0=$(cut -d' ' -f1-3 /proc/loadavg)
ms() { date +%s%3N; }
: >"$tmp/A" && : >"$tmp/B"
k=1
while [ $k -le "$rounds" ]; do
    for x in A B; do
        [ $x = A ] && build=$a || build=$b
        t0=$(ms); rc=0
        timeout 120 "$build/heapsift" attach --lib "$lib" --seconds 0.1 -o "$tmp/p.pb.gz" "$target" >/dev/null 2>"$tmp/e" || rc=$?
        t1=$(ms)
        stops=$(sed -n 's/.*; \([0-9]*\) stopped to find one.*/\1/p;s/.* (\([0-9]*\) stops[;,].*/\1/p' "$tmp/e" | head -n 1)
        echo "$rc ${stops:-0} $((t1 - t0))" >>"$tmp/$x"
        [ "$rc" = 0 ] || sed 's/^/  /' "$tmp/e" >&2
    done
    k=$((k + 1))
done
load1=$(cut -d' ' -f1-3 /proc/loadavg)
: >"$tmp/d/end"
wait "$target" && st=0 || st=$?
printf 'ready\nattach_busy: done\n' | cmp -s - "$tmp/out" && [ ! -s "$tmp/err" ] && [ "$st" = 0 ] &&
    same=yes || same=NO
med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
echo "load average $load0 before, $load1 after; $threads threads, $hogs hogs, $rounds rounds; target unchanged: $same"
echo "| build | attaches | failed | stops, median | stops, worst | time (ms), median | time (ms), worst |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for x in A B; do
    [ $x = A ] && build=$a || build=$b
    echo "| $build | $rounds | $(awk '$1 != 0' "$tmp/$x" | wc -l) | $(cut -d' ' -f2 "$tmp/$x" | med) | $(cut -d' ' -f2 "$tmp/$x" | sort -n | tail -n 1) | $(cut -d' ' -f3 "$tmp/$x" | med) | $(cut -d' ' -f3 "$tmp/$x" | sort -n | tail -n 1) |"
done

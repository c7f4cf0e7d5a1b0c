#!/bin/sh
# bench/attach.sh: what `heapsift attach` costs the process it attaches to (issue 27): the
# time the command takes to attach, and the target's pause: the longest a program thread
# was held stopped (the CLI's "one thread at a time stopped, for X ms at most; N stopped
# to find one outside the allocator": since issue 44 one thread at a time is held). The target is
# bench/attach_target.c: THREADS threads allocating as fast as they can beside HEAP_MB of
# live heap. Each round starts a fresh target, attaches (no --seconds: the command returns
# once sampling runs), waits a second, detaches, and kills the target. Goal in the issue:
# a pause of 50 ms or less for 16 threads and 1 GB. With HOOKS="auto got", each round
# attaches once per hooks mode (--hooks: patched in place, or through the import slots),
# interleaved, and the table has a row per mode.
# usage: sh bench/attach.sh BUILD [--record]
# env: ROUNDS (7), THREADS (16), HEAP_MB (1024), HOOKS (auto)
set -eu
BENCH_NO_BEFORE=1
. "$(dirname "$0")/common.sh"
# shellcheck source=bench/record.sh
. "$(dirname "$0")/record.sh"
bench_args "sh bench/attach.sh BUILD [--record]" "$@"
here=$(cd "$(dirname "$0")" && pwd)
cli=$build/heapsift
[ -x "$cli" ] || { echo "attach: no $cli (build first)" >&2; exit 1; }
rounds=${ROUNDS:-7} threads=${THREADS:-16} heap=${HEAP_MB:-1024} modes=${HOOKS:-auto}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/hs-attach.XXXXXX")
target=
trap '[ -z "$target" ] || kill -9 "$target" 2>/dev/null; rm -rf "$tmp"' EXIT INT TERM
cc -O2 -pthread -o "$tmp/target" "$here/attach_target.c"
loadavg=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u '+%Y-%m-%d %H:%M UTC')
ms() { date +%s%3N; }

# one_round R MODE: a fresh target, attach with --hooks MODE, a second, detach, kill.
one_round() {
    rm -f "$tmp/ready"
    "$tmp/target" "$threads" "$heap" >"$tmp/ready" &
    target=$!
    i=0
    while ! grep -q ready "$tmp/ready" 2>/dev/null; do
        i=$((i + 1))
        [ "$i" -lt 600 ] || { echo "attach: the target never got ready" >&2; exit 1; }
        sleep 0.1
    done
    t0=$(ms)
    "$cli" attach --hooks "$2" -o "$tmp/p.%p.pb.gz" "$target" 2>"$tmp/att" ||
        { echo "attach: round $1 ($2): $(cat "$tmp/att")" >&2; exit 1; }
    t1=$(ms)
    pause=$(sed -n 's/.*stopped, for \([0-9.]*\) ms at most.*/\1/p' "$tmp/att")
    stopped=$(sed -n 's/.*; \([0-9]*\) stopped to find one.*/\1/p' "$tmp/att")
    sleep 1
    "$cli" detach "$target" >/dev/null 2>"$tmp/det" || { echo "attach: round $1: detach: $(cat "$tmp/det")" >&2; exit 1; }
    kill -0 "$target" 2>/dev/null || { echo "attach: round $1: the target died" >&2; exit 1; }
    kill -9 "$target"
    wait "$target" 2>/dev/null || true
    target=
    echo "$1 $((t1 - t0)) $pause $stopped" >>"$tmp/rows.$2"
}

r=1
while [ "$r" -le "$rounds" ]; do
    for mode in $modes; do one_round "$r" "$mode"; done
    r=$((r + 1))
done

med() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# row MODE: the table's row for one hooks mode.
row() {
    f=$tmp/rows.$1
    echo "| $1 | $(cut -d' ' -f4 "$f" | sort -n | tail -n 1) | $(cut -d' ' -f2 "$f" | med) | $(cut -d' ' -f2 "$f" | sort -n | tail -n 1) | $(cut -d' ' -f3 "$f" | med) | $(cut -d' ' -f3 "$f" | sort -n | tail -n 1) | pause <= 50 ms |"
}
{
    echo "## $started: attaching to a running process (bench/attach.sh)"
    echo
    echo "- machine: $(uname -m), $(nproc) CPUs, $(sed -n 's/^model name[^:]*: //p' /proc/cpuinfo | head -n 1 | awk '{print $1, $2}')"
    echo "- load average before the run: $loadavg; after: $(cut -d' ' -f1-3 /proc/loadavg)"
    echo "- heapsift commit: $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown); cli: $cli"
    echo "- target: bench/attach_target $threads $heap ($threads threads allocating flat out, $heap MiB of live heap in 64 KiB blocks); $rounds rounds, a fresh target each (hooks modes interleaved: $modes)"
    echo
    echo "| --hooks | threads stopped (most) | time to attach, median (ms) | worst (ms) | pause, median (ms) | worst (ms) | goal |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
    for mode in $modes; do row "$mode"; done
    echo
    for mode in $modes; do
        echo "Per round with --hooks $mode (round, time to attach ms, pause ms, threads stopped): $(tr '\n' ';' <"$tmp/rows.$mode")"
    done
} >"$tmp/report"
cat "$tmp/report"
[ "$record" -eq 0 ] || bench_record "$here" "$tmp/report"
